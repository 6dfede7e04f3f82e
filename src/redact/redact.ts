// One redactor for every exit: transcripts before extraction, extracted text before storage,
// notes, files written to the memory folder, job errors, diagnostics and logs. It replaces each
// secret with a marker of its class and counts what it replaced, never keeping the secret itself.
//
// Passes, in order, each one scan of the text (or none, when a cheap check rules it out):
//   1. private key blocks (their bodies must not feed later rules), then the data of Kubernetes Secrets
//   2. prefixed token formats: one scan for every prefix at once, then the rule at each hit
//   3. token formats without a prefix, each only when its literal hint occurs
//   4. passwords in URLs, Authorization headers, bare bearer tokens, cookies, CLI passwords
//   5. values of secret-named keys (JSON, YAML, .env, shell, flags, URL queries)
// A later pass never touches a marker an earlier one wrote, so redact(redact(x)) is redact(x).
import { assignments } from "./assignments.js"
import { kubernetesSecrets } from "./manifests.js"
import { Edits } from "./marker.js"
import { PREFIX_RULES, SCAN_RULES, type PrefixRule, type ScanRule } from "./rules.js"
import { placeholderRun } from "./values.js"
import { authorizationHeaders, bearerTokens, cliPasswords, cookieHeaders, pgpassLines, privateKeys, urlCredentials } from "./structures.js"

export interface Redaction {
  text: string
  /** Secrets replaced, by class. */
  counts: Record<string, number>
}

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Every prefix, longest first, so the scan reports the most specific one at each position. */
const PREFIXES = [...new Set(PREFIX_RULES.flatMap((rule) => rule.prefixes))].sort((a, b) => b.length - a.length)
// Used only through exec() after setting lastIndex: no state carries between calls.
const ANCHOR = new RegExp(`\\b(?:${PREFIXES.map(escape).join("|")})`, "g")
/** For each prefix, the rules to try where it matched: also those whose prefix is a shorter start of it. */
const CANDIDATES: ReadonlyMap<string, readonly PrefixRule[]> = new Map(
  PREFIXES.map((prefix) => [prefix, PREFIX_RULES.filter((rule) => rule.prefixes.some((own) => prefix.startsWith(own)))]),
)

const PASSES: ReadonlyArray<(edits: Edits) => void> = Object.freeze([
  privateKeys,
  kubernetesSecrets,
  prefixedTokens,
  // One pass per rule: each scan finds its own matches in order.
  ...SCAN_RULES.map((rule) => (edits: Edits) => scanned(rule, edits)),
  urlCredentials,
  pgpassLines,
  authorizationHeaders,
  bearerTokens,
  cookieHeaders,
  cliPasswords,
  assignments,
])

export function redact(text: string, options: { keepLines?: boolean } = {}): Redaction {
  const counts: Record<string, number> = {}
  let out = text
  for (const pass of PASSES) {
    const edits = new Edits(out, counts, options.keepLines)
    pass(edits)
    out = edits.finish()
  }
  return { text: out, counts }
}

export function redactText(text: string): string {
  return redact(text).text
}

/**
 * Redacted with every line on its number: a secret that spans lines (a private key block) becomes
 * its marker followed by the line breaks it covered, so line N of the output is line N of `text`.
 * For text quoted by line number (memory_search, memory_read).
 */
export function redactLines(text: string): string {
  return redact(text, { keepLines: true }).text
}

/** Strings anywhere in a JSON-like value (log fields, error details), redacted; depth-limited. */
export function redactDeep(value: unknown, depth = 4): unknown {
  if (typeof value === "string") return redactText(value)
  if (depth <= 0 || value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth - 1))
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, depth - 1)]))
}

/** Adds `more` into `total`, class by class. */
export function addCounts(total: Record<string, number>, more: Readonly<Record<string, number>>): Record<string, number> {
  for (const [name, count] of Object.entries(more)) total[name] = (total[name] ?? 0) + count
  return total
}

function prefixedTokens(edits: Edits): void {
  const text = edits.text
  ANCHOR.lastIndex = 0
  for (let hit = ANCHOR.exec(text); hit; hit = ANCHOR.exec(text)) {
    const at = hit.index
    for (const rule of CANDIDATES.get(hit[0]) ?? []) {
      rule.pattern.lastIndex = at
      const match = rule.pattern.exec(text)
      if (!match) continue
      const [start, end] = rule.group ? match.indices![rule.group]! : [at, at + match[0].length]
      const secret = text.slice(start, end)
      // The literal prefix is the format, not part of the random text (`AAAAAAAAAAAAAAAAAAAAA` of Twitter's tokens).
      const random = start === at ? secret.slice(hit[0].length) : secret
      if (placeholderRun(random) || (rule.validate && !rule.validate(secret, text, at))) continue
      edits.replace(start, end, rule.name)
      ANCHOR.lastIndex = at + match[0].length
      break
    }
  }
}

function scanned(rule: ScanRule, edits: Edits): void {
  const text = edits.text
  if (rule.hint !== undefined && !text.includes(rule.hint)) return
  rule.pattern.lastIndex = 0
  for (let match = rule.pattern.exec(text); match; match = rule.pattern.exec(text)) {
    if (placeholderRun(match[0]) || (rule.validate && !rule.validate(match[0]))) continue
    edits.replace(match.index, match.index + match[0].length, rule.name)
  }
}
