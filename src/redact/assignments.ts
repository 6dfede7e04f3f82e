// Values of secret-named keys, in every syntax a transcript shows them in:
//
//   JSON, JS, Python   "password": "...", {password: "..."}, password="...", 'api_key' => '...'
//   YAML, headers      password: ..., X-Api-Key: ..., - name: DB_PASSWORD / value: ...
//   .env, shell, INI   API_KEY=..., export TOKEN=..., spring.datasource.password=...
//   CLI flags          --password=..., --token ..., -Djavax.net.ssl.keyStorePassword=...
//   URL queries        ?access_token=...&api_key=...
//   Make, Go, PHP      TOKEN ::= ..., token := ..., var token string = ..., $token .= ...
//   XML                <apiToken>...</apiToken>, <add key="Password" value="..." />
//   call arguments     System.setProperty("API_TOKEN", "..."), getenv("api_token", "...")
//
// One case-insensitive scan finds the key words; each hit is widened to its whole key, which
// keys.ts accepts or rejects by its words, and only then is the text after it parsed. Only the
// value is replaced, inside its quotes, so JSON and YAML still parse. How sure the context is
// decides how random the value must look (values.ts).
import { insideMarker, type Edits } from "./marker.js"
import { isBareProvider, isSecretKey, keyWords, vendorClass } from "./keys.js"
import { isIdentifier, isPasswordStandIn, isPlaceholder, looksLikeCode, looksLikeSecret, looksRandom } from "./values.js"

// Used only through exec() after setting lastIndex: no state carries between calls.
const KEY_WORD = /pass|pwd|secret|token|key|cred|auth|bundle_|sonar|sumo|messagebird|cloudflare|sourcegraph|artifactory/gi
/** `- name: DB_PASSWORD` then `value: ...` (Kubernetes, Compose, ECS task definitions). */
const NAME_BEFORE = /\b(?:name|key)\\?["']?[ \t]*[:=][ \t]*\\?["']?$/
const VALUE_AFTER = /\\?["']?[ \t]*(?:,[ \t]*)?(?:(?:\r?\n|\\r?\\n)[ \t]*)?(?:- )?\\?["']?value\\?["']?[ \t]*[:=][ \t]*/y
/** A type between a key and its `=`: `var token string = "..."` (Go), `token: string = "..."` (TypeScript). */
const TYPED = /(?:string|String|str|\[\]byte)[ \t]*=(?!=)[ \t]*/y
/** Assignment operators besides `=`: Make's `::=`, `:::=`, `?=`, `:=` (also Go's), PHP's `.=`. */
const OPERATOR = /(?::{1,3}|\?|\.)=(?!=)/y

type Context = "flag" | "query" | "equals" | "colon" | "named" | "element" | "argument"

interface Assignment {
  context: Context
  /** Where the key starts, after the dashes of a flag. */
  keyStart: number
  /** The key stood in quotes (`"password": ...`): JSON or code, never a YAML scalar. */
  quotedKey: boolean
  /** Where the value starts, quote included. */
  valueAt: number
}

interface Value {
  start: number
  end: number
  text: string
  quoted: boolean
}

export function assignments(edits: Edits): void {
  const text = edits.text
  const judged = new Map<string, readonly string[] | null>()
  KEY_WORD.lastIndex = 0
  for (let hit = KEY_WORD.exec(text); hit; hit = KEY_WORD.exec(text)) {
    let start = hit.index
    let end = start + hit[0].length
    while (start > 0 && isKeyChar(text.charCodeAt(start - 1))) start--
    while (end < text.length && isKeyChar(text.charCodeAt(end))) end++
    KEY_WORD.lastIndex = end
    // A dot or dash ending a sentence or a flag list is not part of the key.
    while (end > start && (text[end - 1] === "." || text[end - 1] === "-")) end--
    if (start < edits.position || end <= start) continue
    const found = assignmentAt(text, start, end)
    if (!found) continue
    const { context, keyStart } = found
    const key = text.slice(keyStart, end)
    // The same keys recur all through a transcript (`max_tokens`); each is judged once per call.
    let words = judged.get(key)
    if (words === undefined) {
      const cut = keyWords(key)
      judged.set(key, (words = isSecretKey(cut, key) ? cut : null))
    }
    if (!words) continue
    let value = context === "element" ? readElement(text, found.valueAt, keyStart, end) : readValue(text, found.valueAt, context === "query")
    if (context === "argument" && !value?.quoted) continue
    if (!value || value.start < edits.position || insideMarker(text, keyStart)) continue
    let name: string | undefined
    if ((context === "equals" || context === "query") && PASSWORD_WORDS.has(words[words.length - 1]!) && inConnectionString(text, keyStart, value.end)) {
      value = value.quoted ? value : toSemicolon(text, value)
      name = isPasswordStandIn(value.text) ? undefined : "database-password"
    } else name = decide(found, words, value, text)
    if (name) {
      edits.replace(value.start, value.end, name)
      KEY_WORD.lastIndex = value.end
    }
  }
}

const PASSWORD_WORDS: ReadonlySet<string> = new Set(["password", "passwd", "pwd", "pass"])
/** Other keys of a connection string: libpq `host=... dbname=...`, ADO.NET `Server=...;Database=...`, JDBC `?user=...&password=...`. */
const CONNECTION_KEY = /(?:^|[\s;?&"'])(?:host|hostaddr|port|dbname|database|databasename|user|username|user id|uid|server|data source|initial catalog|sslmode)[ \t]*=/i
const LINE_REACH = 300

/**
 * The password key stands in a connection string, where any literal is a password (`password=postgres`
 * too): another connection key precedes or follows it on its line.
 */
function inConnectionString(text: string, keyStart: number, valueEnd: number): boolean {
  const before = Math.max(text.lastIndexOf("\n", keyStart) + 1, keyStart - LINE_REACH)
  let after = text.indexOf("\n", valueEnd)
  if (after < 0 || after > valueEnd + LINE_REACH) after = Math.min(text.length, valueEnd + LINE_REACH)
  return CONNECTION_KEY.test(text.slice(before, keyStart)) || CONNECTION_KEY.test(text.slice(valueEnd, after))
}

/** ADO.NET passwords run to the `;` (`Password=my pass word;`), unless another `key=` comes first. */
function toSemicolon(text: string, value: Value): Value {
  if (text[value.end] !== " ") return value
  const semicolon = text.indexOf(";", value.end)
  if (semicolon < 0 || semicolon - value.end > 128) return value
  const rest = text.slice(value.end, semicolon)
  if (/[=\n"']/.test(rest)) return value
  return { ...value, end: semicolon, text: text.slice(value.start, semicolon) }
}

/** The class to replace the value with, or undefined to leave it. */
function decide(found: Assignment, words: readonly string[], value: Value, text: string): string | undefined {
  const { context } = found
  const fallback = context === "flag" ? "secret-flag" : context === "query" ? "url-query-secret" : "secret-assignment"
  if (isPlaceholder(value.text)) return undefined
  const name = vendorClass(words, value.text, fallback)
  // Key and value both fit a service: nothing else to weigh.
  if (name !== fallback) return name
  // A service's bare name (`cloudflare: ...`) also names settings and versions: only a token counts.
  if (isBareProvider(words)) return /^[A-Za-z0-9_-]{20,}$/.test(value.text) && looksRandom(value.text) ? name : undefined
  // "auth" alone also names modes and schemes (`auth: oauth2`); only a long random value counts.
  if (words[words.length - 1] === "auth" && !(value.text.length >= 12 && looksRandom(value.text))) return undefined
  return accepts(found, value, text) ? name : undefined
}

function accepts({ context, keyStart, quotedKey }: Assignment, value: Value, text: string): boolean {
  const v = value.text
  switch (context) {
    case "flag":
    case "query":
    case "element":
    case "argument":
      return looksLikeSecret(v)
    case "named":
      // `name: DB_PASSWORD` then `value: ...`: the value is never a type or a label there.
      return looksLikeSecret(v) || (v.length >= 12 && !/\s/.test(v) && !isPlaceholder(v) && !looksLikeCode(v))
    case "equals": {
      if (value.quoted || !spacedBefore(text, value.start)) return looksLikeSecret(v)
      // `token = something` in code: a bare word there is a variable unless it ends an INI-style line.
      return looksRandom(v) && (!isIdentifier(v) || (atLineStart(text, keyStart) && endsLine(text, value.end)))
    }
    case "colon":
      if (value.quoted) return looksLikeSecret(v)
      // A YAML scalar or a header at the start of its line; elsewhere (prose, logs) only a random value.
      if (!quotedKey && atLineStart(text, keyStart) && endsLine(text, value.end)) return looksLikeSecret(v)
      return looksRandom(v)
  }
}

/** What follows a key, if it is an assignment. */
function assignmentAt(text: string, start: number, end: number): Assignment | undefined {
  let keyStart = start
  while (keyStart < end && text[keyStart] === "-") keyStart++
  const dashes = keyStart - start
  if (keyStart >= end) return undefined

  // A quoted key ("password": ...), possibly escaped inside a JSON string (\"password\": ...).
  let p = end
  const open = text[start - 1]
  if (dashes === 0 && (open === '"' || open === "'" || open === "`")) {
    if (text[start - 2] === "\\" && text.startsWith(`\\${open}`, end)) p = end + 2
    else if (text[end] === open) p = end + 1
  }
  const quotedKey = p !== end
  let q = skipBlanks(text, p)
  const spaced = q > p
  const c = text[q]
  const c2 = text[q + 1]

  let context: Context
  OPERATOR.lastIndex = q
  if (c === "=" && c2 !== "=" && c2 !== "~") {
    context = dashes ? "flag" : !quotedKey && (open === "?" || open === "&") && !spaced ? "query" : "equals"
    q += c2 === ">" ? 2 : 1
  } else if (dashes === 0 && (c2 === "=" || (c === ":" && c2 === ":")) && (c === ":" || c === "?" || c === ".") && OPERATOR.test(text)) {
    context = "equals"
    q = OPERATOR.lastIndex
  } else if (c === ":" && c2 !== ":" && c2 !== "/" && dashes === 0) {
    context = "colon"
    q += 1
    TYPED.lastIndex = skipBlanks(text, q)
    const t = text[TYPED.lastIndex]
    if ((t === "s" || t === "S" || t === "[") && TYPED.test(text)) {
      context = "equals"
      q = TYPED.lastIndex
    }
  } else if (dashes === 0 && open === "<" && c === ">" && !spaced) {
    return { context: "element", valueAt: skipSpace(text, q + 1), keyStart, quotedKey }
  } else if (dashes === 0 && quotedKey && c === "," && text[skipBlanksBack(text, start - 2)] === "(") {
    context = "argument"
    q += 1
  } else if (dashes === 0 && spaced && (c === "s" || c === "S" || c === "[") && ((TYPED.lastIndex = q), TYPED.test(text))) {
    context = "equals"
    q = TYPED.lastIndex
  } else if (dashes === 2 && spaced && c !== "-" && c !== "\n" && c !== "\r" && c !== undefined) {
    context = "flag"
  } else if (dashes === 0 && followsSeparator(text, start) && NAME_BEFORE.test(text.slice(Math.max(0, start - 24), start))) {
    VALUE_AFTER.lastIndex = end
    if (!VALUE_AFTER.exec(text)) return undefined
    context = "named"
    q = VALUE_AFTER.lastIndex
  } else return undefined

  return { context, valueAt: skipBlanks(text, q), keyStart, quotedKey }
}

/** A quoted string on one line (its inside is the value), or a bare run up to a delimiter. */
function readValue(text: string, at: number, inQuery: boolean): Value | undefined {
  const c = text[at]
  if (c === "\\" && text[at + 1] === '"') {
    const close = text.indexOf('\\"', at + 2)
    if (close < 0) return undefined
    const inner = text.slice(at + 2, close)
    if (/["\\\n]/.test(inner)) return undefined
    return { start: at + 2, end: close, text: inner, quoted: true }
  }
  if (c === '"' || c === "'" || c === "`") {
    for (let i = at + 1; i < text.length; i++) {
      const d = text[i]
      if (d === "\n" || d === "\r") return undefined
      if (d === "\\") i++
      else if (d === c) return { start: at + 1, end: i, text: text.slice(at + 1, i), quoted: true }
    }
    return undefined
  }
  let end = at
  while (end < text.length && !isDelimiter(text.charCodeAt(end), inQuery)) end++
  // Trailing sentence punctuation is not part of a bare value; an ellipsis is (`sk-ant-...` is a stand-in).
  if (!text.startsWith("..", end - 2)) while (end > at && /[.,:;!?]/.test(text[end - 1]!)) end--
  return end > at ? { start: at, end, text: text.slice(at, end), quoted: false } : undefined
}

/** The text of `<key>value</key>`, blanks and line breaks around it left out; only when the element closes right after. */
function readElement(text: string, at: number, keyStart: number, keyEnd: number): Value | undefined {
  let end = at
  const limit = Math.min(text.length, at + 4096)
  while (end < limit && text[end] !== "<" && text[end] !== "\n" && text[end] !== "\r") end++
  const close = skipSpace(text, end)
  if (!text.startsWith(`</${text.slice(keyStart, keyEnd)}>`, close)) return undefined
  while (end > at && (text[end - 1] === " " || text[end - 1] === "\t")) end--
  return end > at ? { start: at, end, text: text.slice(at, end), quoted: true } : undefined
}

/** Cheap check before NAME_BEFORE: the key is itself a value, after a `:` or `=` (and a quote). */
function followsSeparator(text: string, start: number): boolean {
  let i = start - 1
  while (i >= 0 && (text[i] === '"' || text[i] === "'" || text[i] === "\\" || text[i] === " " || text[i] === "\t")) i--
  return text[i] === ":" || text[i] === "="
}

/** Blanks and line breaks: an XML element's value may sit on its own line. */
function skipSpace(text: string, at: number): number {
  const limit = at + 256
  while (at < limit && (text[at] === " " || text[at] === "\t" || text[at] === "\n" || text[at] === "\r")) at++
  return at
}

/** The last index at or before `at` that is not a blank. */
function skipBlanksBack(text: string, at: number): number {
  while (at >= 0 && (text[at] === " " || text[at] === "\t")) at--
  return at
}

function skipBlanks(text: string, at: number): number {
  while (text[at] === " " || text[at] === "\t") at++
  return at
}

function spacedBefore(text: string, valueStart: number): boolean {
  const before = text[valueStart - 1]
  return before === " " || before === "\t"
}

/**
 * Only indentation, a list marker or a comment sign stand before the key on its line (a JSON
 * string's escaped line break counts as one), or it opens an object, a list item or a string.
 */
function atLineStart(text: string, keyStart: number): boolean {
  let i = keyStart - 1
  if (text[i] === '"' || text[i] === "'") i--
  while (i >= 0 && (text[i] === " " || text[i] === "\t")) i--
  if (i >= 0 && (text[i] === "-" || text[i] === "*" || text[i] === "#")) {
    i--
    while (i >= 0 && (text[i] === " " || text[i] === "\t")) i--
  }
  if (i < 0) return true
  const c = text[i]
  if (c === "\n" || c === "\r" || c === "{" || c === "," || c === '"' || c === "'" || c === "`") return true
  return (c === "n" || c === "r" || c === "t") && text[i - 1] === "\\"
}

/** Nothing but blanks, a comment or the end of an enclosing string follows on the line. */
function endsLine(text: string, at: number): boolean {
  const i = skipBlanks(text, at)
  const c = text[i]
  return c === undefined || c === "\n" || c === "\r" || c === "#" || c === '"' || c === "'" || (c === "\\" && /[nr"]/.test(text[i + 1] ?? ""))
}

function isKeyChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95 || code === 45 || code === 46
}

/** Characters that end a bare value: blanks, quotes, separators, closing brackets, escapes. */
function isDelimiter(code: number, inQuery: boolean): boolean {
  switch (code) {
    case 32: // space
    case 9: // tab
    case 10: // \n
    case 13: // \r
    case 34: // "
    case 39: // '
    case 96: // `
    case 44: // ,
    case 59: // ;
    case 38: // &
    case 124: // |
    case 41: // )
    case 125: // }
    case 93: // ]
    case 92: // backslash
      return true
    case 35: // # ends a query value (the fragment); elsewhere it can be part of a password
      return inQuery
    default:
      return false
  }
}
