// Whether a value found after a secret-named key is worth hiding. A key name says "secret", but
// code and docs are full of such keys holding no secret at all: types (`password: string`),
// variables (`token = getToken()`), templates (`${API_KEY}`), placeholders (`your-key-here`).
// These checks keep them; the decision rules are listed in docs/decisions/11-one-redactor-at-every-exit.md.
import { holdsMarker } from "./marker.js"

/** Words that stand in for a value rather than being one. Compared lowercased, whole. */
const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set([
  "changeme", "changeit", "change-me", "change_me", "password", "passwd", "secret", "token", "apikey", "api-key", "api_key",
  "example", "placeholder", "redacted", "masked", "hidden", "dummy", "sample", "none", "null", "nil", "undefined", "true",
  "false", "yes", "no", "on", "off", "required", "optional", "todo", "tbd", "fixme", "empty", "unset", "default",
  "notset", "not-set", "not_set", "secretstr", "string", "str", "bytes", "number", "pass", "test", "user", "username",
])

/** Fragments that mark a template, an elision or a stand-in anywhere in a value. */
const PLACEHOLDER_FRAGMENTS = /\$\{|\{\{|%\(|#\{|<%|\.\.\.|…|\*\*\*|xxxx|example|changeme|placeholder|replace[-_ ]?(?:me|with|this)|your[-_ ]?(?:own[-_ ]?)?(?:api|secret|token|key|pass|password|app|access|client|private|auth|db|database|aws)|[-_]here$|^your[-_A-Z]|^my[-_](?:secret|token|key|pass|password|api)|^(?:dummy|fake|mock|sample)[-_]/i
/** `test_` starts stand-ins (`test_password`) but also real test-mode keys (`test_4f9a...`), which are long and hold digits. */
const TEST_STAND_IN = /^test[-_](?![A-Za-z0-9_-]{0,200}\d)|^test[-_][A-Za-z0-9_-]{0,15}$/i
const SAME_CHAR_RUN = /(.)\1{5}/
const PATH_OR_URL = /^(?:\/|\.{1,2}\/|~\/|[A-Za-z]:\\|[a-z][a-z0-9+.-]*:\/\/|file:)/i
/** `config.password`, `process.env.TOKEN`, `self.secret`: a reference to a value. */
const MEMBER_PATH = /^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+$/
/** A part no one names a member with: long, mixing cases and digits (`s.ZC9Ecf4M5g9o34Q6RkzGsj0z`). */
const RANDOM_PART = /[.>:](?=[\w$]{16})(?=[\w$]*\d)(?=[\w$]*[a-z])(?=[\w$]*[A-Z])/
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
/** Letters only, possibly in words joined by `-`, `_` or `.`, possibly ending in punctuation. */
const WORDS_ONLY = /^\p{L}+(?:[-_.]\p{L}+)*[.:!?]?$/u
const CAMEL_HUMP = /\p{Ll}\p{Lu}/u
const DIGITS_ONLY = /^\d+$/

export function isPlaceholder(value: string): boolean {
  if (!value) return true
  // Shell and template variables, YAML tags/anchors/aliases, block scalars, angle-bracket stand-ins.
  return "$%<{!&*|>@".includes(value[0]!) || isStandIn(value)
}

/**
 * A stand-in word, template or elision, judged without the first-character rule of
 * isPlaceholder: for values that may start with any character (URL passwords).
 */
export function isStandIn(value: string): boolean {
  if (!value || holdsMarker(value)) return true
  if (PLACEHOLDER_WORDS.has(value.toLowerCase())) return true
  return PLACEHOLDER_FRAGMENTS.test(value) || TEST_STAND_IN.test(value) || placeholderRun(value)
}

/** A random part that repeats one character six times may be a placeholder (`ghp_xxxxxx...`). */

/**
 * A stand-in rather than a secret: a run of one character that fills a third of the random part,
 * or a run in a part of few distinct characters (`xoxb-000000-xxxxxx`). A long random token may
 * hold a run by chance (binary zeros inside a base64 token) and still be a secret.
 */
export function placeholderRun(random: string): boolean {
  if (!SAME_CHAR_RUN.test(random)) return false
  let longest = 1
  let run = 1
  for (let i = 1; i < random.length; i++) {
    run = random[i] === random[i - 1] ? run + 1 : 1
    if (run > longest) longest = run
  }
  return longest * 3 >= random.length || new Set(random).size < 12
}


/** Code rather than data: calls, indexing, member paths, and values that are paths or URLs. */
export function looksLikeCode(value: string): boolean {
  if (/[()[\]{}]/.test(value) || PATH_OR_URL.test(value)) return true
  const path = value.replace(/[!?;,]+$/, "")
  return MEMBER_PATH.test(path) && !RANDOM_PART.test(path)
}

/**
 * Random enough to be a secret even where the context is weak (a key word in the middle of a
 * prose or log line, a bare word after `key = `): at least 8 characters mixing letters and
 * digits, no whitespace, and neither a placeholder nor code.
 */
export function looksRandom(value: string): boolean {
  return value.length >= 8 && /\d/.test(value) && /\p{L}/u.test(value) && !/\s/.test(value) && !isPlaceholder(value) && !looksLikeCode(value)
}

/**
 * A plausible secret where the context says "this is a value" (a quoted literal, a `.env` line,
 * a YAML scalar at the start of its line). Rejected: placeholders, code, whitespace, fewer than
 * 6 characters, numbers shorter than 8 digits (limits, ports), and words made of letters only
 * shorter than 16 characters or written in camelCase (types, identifiers, labels).
 */
export function looksLikeSecret(value: string): boolean {
  if (value.length < 6 || /\s/.test(value) || isPlaceholder(value) || looksLikeCode(value)) return false
  if (DIGITS_ONLY.test(value)) return value.length >= 8
  if (WORDS_ONLY.test(value)) return value.length >= 16 && !CAMEL_HUMP.test(value)
  return true
}

/** A bare identifier (`token_value`, `hunter2`): in code, a variable rather than a literal. */
export function isIdentifier(value: string): boolean {
  return IDENTIFIER.test(value)
}

/** A password written as a template or a stand-in (`${DB_PASSWORD}`, `<password>`, `[PASSWORD]`, `%DB_PASS%`); any other first character is allowed. */
export function isPasswordStandIn(password: string): boolean {
  return /^(?:\$|<.*>$|\{\{|\{[A-Za-z_.-]*\}$|\[.*\]$|%[A-Za-z_]+%$)/.test(password) || isStandIn(password)
}
