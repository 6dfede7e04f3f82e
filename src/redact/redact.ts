// One redactor for every exit: transcripts before extraction, extracted text before storage,
// notes, files written to the memory folder, and logs. It replaces each secret with a marker of
// its class and counts what it replaced, never keeping the secret itself.
import { RULES, type RedactionRule } from "./rules.js"

export interface Redaction {
  text: string
  /** Secrets replaced, by class. */
  counts: Record<string, number>
}

const MARKER = /^\[REDACTED:[a-z-]+\]$/

export function redact(text: string, rules: readonly RedactionRule[] = RULES): Redaction {
  const counts: Record<string, number> = {}
  let out = text
  for (const rule of rules) {
    out = out.replace(rule.pattern, (match: string, ...groups: unknown[]) => {
      const secret = rule.group ? (groups[rule.group - 1] as string | undefined) : match
      // Already redacted by an earlier rule: leave the marker alone.
      if (!secret || MARKER.test(secret) || secret.startsWith("[REDACTED:")) return match
      counts[rule.name] = (counts[rule.name] ?? 0) + 1
      const marker = `[REDACTED:${rule.name}]`
      if (!rule.group) return marker
      const at = match.lastIndexOf(secret)
      return match.slice(0, at) + marker + match.slice(at + secret.length)
    })
  }
  return { text: out, counts }
}

export function redactText(text: string): string {
  return redact(text).text
}
