// Secrets recognised by where they stand rather than by their own shape: private key blocks,
// passwords in URLs, credentials in HTTP headers, and passwords given to a few command-line
// tools. Each function is one pass over the text that records its replacements in `edits`.
import { Edits, holdsMarker } from "./marker.js"
import { isPasswordStandIn, isPlaceholder, looksRandom } from "./values.js"

// These patterns are module constants used only through exec() after setting lastIndex, so no
// state carries from one call to the next.

const KEY_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g
/** A JSON string holding a PEM key under "private_key": the shape of a Google service-account file. */
const SERVICE_ACCOUNT_CONTEXT = /["']private_key\\?["']\s*:\s*\\?["']$/
/**
 * A line break (real or JSON-escaped) and the body line after it: base64, a header such as
 * `Proc-Type: 4,ENCRYPTED`, or nothing when the line is blank. Group 1 is set for a body line.
 */
const KEY_BODY_LINE = /(?:\r?\n|\\r?\\n)[ \t]*(?:([A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset): [^\n"\\]*|[A-Za-z0-9+/=]{1,15}(?=\r?\n|\\r?\\n|$))|(?=\r?\n|\\r?\\n))/y
const KEY_BLOCK_MAX = 64 * 1024

/** From BEGIN to END, or to the end of the base64 body when the END line is missing (a cut output). */
export function privateKeys(edits: Edits): void {
  const text = edits.text
  if (!text.includes("PRIVATE KEY")) return
  // Where each kind of END line next occurs: searched once per kind, not once per BEGIN.
  const nextEnd = new Map<string, number>()
  KEY_BEGIN.lastIndex = 0
  for (let match = KEY_BEGIN.exec(text); match; match = KEY_BEGIN.exec(text)) {
    const start = match.index
    const endLine = `-----END ${match[1] ?? ""}PRIVATE KEY${match[2] ?? ""}-----`
    let endAt = nextEnd.get(endLine)
    if (endAt === undefined || (endAt >= 0 && endAt < start)) nextEnd.set(endLine, (endAt = text.indexOf(endLine, start)))
    let end: number
    if (endAt >= 0 && endAt - start <= KEY_BLOCK_MAX) end = endAt + endLine.length
    else {
      end = KEY_BEGIN.lastIndex
      KEY_BODY_LINE.lastIndex = end
      for (let line = KEY_BODY_LINE.exec(text); line; line = KEY_BODY_LINE.exec(text)) if (line[1]) end = KEY_BODY_LINE.lastIndex
    }
    const serviceAccount = SERVICE_ACCOUNT_CONTEXT.test(text.slice(Math.max(0, start - 40), start))
    edits.replace(start, end, serviceAccount ? "gcp-service-account-key" : "private-key")
    KEY_BEGIN.lastIndex = end
  }
}

const DATABASE_SCHEMES: ReadonlySet<string> = new Set([
  "postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "amqps", "mssql",
  "sqlserver", "oracle", "clickhouse", "cockroachdb", "couchdb", "neo4j", "neo4j+s", "bolt", "cassandra", "db2",
  "snowflake", "memcached", "nats", "kafka",
])
/**
 * scheme://user:password@host. People paste passwords without percent-encoding them, so the
 * password runs from the user's `:` to the LAST `@` before the host, and may hold `@ # % ! * &`;
 * in database and broker URLs also `/ ? ` and spaces, which in a web URL would already be its
 * path, query or the next word. The user may be empty (`redis://:password@host`). Found from each
 * `://`: a pattern starting at the scheme would be tried at every word of the text.
 */
const USER_PART = /[^\s:/?#@"'<>\\[\]]*:/y
const SCHEME_CHAR = /[A-Za-z0-9+.-]/
const HOST_START = /[A-Za-z0-9[_%-]/
/** The authority is searched this far for its last `@`. */
const AUTHORITY_MAX = 256
/** `host:5432/db?x=a@b`: what follows the `:` is a port, not a password. */
const PORT = /^\d{1,5}(?:[\s/?#]|$)/

export function urlCredentials(edits: Edits): void {
  const text = edits.text
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let start = at
    while (start > 0 && at - start < 32 && SCHEME_CHAR.test(text[start - 1]!)) start--
    if (!/[A-Za-z]/.test(text[start] ?? "")) continue
    USER_PART.lastIndex = at + 3
    if (!USER_PART.exec(text)) continue
    const from = USER_PART.lastIndex
    if (from < edits.position) continue
    const scheme = text.slice(start, at).toLowerCase().replace(/^jdbc:/, "")
    const database = DATABASE_SCHEMES.has(scheme)
    const to = lastAt(text, from, database)
    if (to <= from) continue
    const password = text.slice(from, to)
    if (PORT.test(password) || /^[ \t]/.test(password) || isPasswordStandIn(password)) continue
    edits.replace(from, to, database ? "database-url" : "url-password")
  }
}

/** Where the password that starts at `from` ends: the last `@` of the authority that a host follows; -1 if none. */
function lastAt(text: string, from: number, database: boolean): number {
  let found = -1
  const limit = Math.min(text.length, from + AUTHORITY_MAX)
  for (let i = from; i < limit; i++) {
    const c = text[i]!
    if (c === "@") {
      if (HOST_START.test(text[i + 1] ?? "")) found = i
      continue
    }
    if (c === "\n" || c === "\r" || c === '"' || c === "'" || c === "`" || c === "<" || c === ">" || c === "\\") break
    // Once a host has followed an `@`, a blank or a path ends the authority.
    if (c === " " || c === "\t" || c === "/" || c === "?") {
      if (!database || found >= 0) break
    }
  }
  return found
}


/**
 * A `.pgpass` line: `host:port:database:user:password`, the port a number or `*`, the database
 * and user names (or `*`); the password is the rest of the line, where `\\:` escapes a colon.
 * Found from each `:port:` so that lines without one cost nothing more than that scan.
 */
const PGPASS_PORT = /:(?:\d{1,5}|\*):(?=[A-Za-z_*])/g
const PGPASS_LINE = /[ \t]*[A-Za-z0-9_.*[\]-]{1,253}:(?:\d{1,5}|\*):(?:\*|[A-Za-z_][\w$.-]{0,62}):(?:\*|[A-Za-z_][\w$.@-]{0,62}):((?:\\.|[^\s\\:]){1,256})[ \t]*$/dmy

export function pgpassLines(edits: Edits): void {
  const text = edits.text
  PGPASS_PORT.lastIndex = 0
  for (let hit = PGPASS_PORT.exec(text); hit; hit = PGPASS_PORT.exec(text)) {
    const lineStart = text.lastIndexOf("\n", hit.index) + 1
    PGPASS_LINE.lastIndex = lineStart
    const match = lineStart >= edits.position ? PGPASS_LINE.exec(text) : null
    if (match) {
      const [start, end] = match.indices![1]!
      if (!isPasswordStandIn(match[1]!)) edits.replace(start, end, "database-password")
    }
    const lineEnd = text.indexOf("\n", hit.index)
    if (lineEnd < 0) break
    PGPASS_PORT.lastIndex = lineEnd
  }
}

/** `Authorization: Bearer x`, also as a JSON or Python header entry, escaped or not. */
// Blanks are matched by one quantifier at each place: two adjacent ones could split a long run of
// spaces in quadratically many ways before failing.
const AUTHORIZATION = /\b(?:Proxy-)?Authorization\\?["']?[ \t]*[:=][ \t]*(?:\\?["'][ \t]*)?(?:(Bearer|Basic|Token|Bot|Api-?Token|Api-?Key|Key|OAuth|SSWS)[ \t]+)?([A-Za-z0-9._~+/=-]{8,4096})/dgi
// The scheme word in any case, then a token of 16 or more (Codex's bearer rule since #36908), or a
// marker an earlier pass left for the start of the token, with the rest of the token after it.
const BEARER = /\bBearer[ \t]+(?:(\[REDACTED:[a-z0-9-]+\])([A-Za-z0-9._~+/-]*=*)|([A-Za-z0-9._~+/-]{16,4096}=*))/dgi

export function authorizationHeaders(edits: Edits): void {
  const text = edits.text
  if (/authorization/i.test(text)) {
    AUTHORIZATION.lastIndex = 0
    for (let match = AUTHORIZATION.exec(text); match; match = AUTHORIZATION.exec(text)) {
      const value = match[2]!
      // Without a scheme word the value itself must look random ("Authorization: required").
      if (!match[1] && !looksRandom(value)) continue
      if (isPlaceholder(value)) continue
      const [start, end] = match.indices![2]!
      edits.replace(start, end, "authorization-header")
    }
  }
}

/**
 * A bearer token outside an Authorization header (`"token": "Bearer ..."`). As in Codex, any 16
 * characters of token alphabet after the scheme word are a token, random-looking or not: a
 * placeholder is the only exception. Where an earlier pass already replaced the token's start (a
 * known prefix), the rest of the token goes too, under that marker.
 */
export function bearerTokens(edits: Edits): void {
  const text = edits.text
  if (!/bearer/i.test(text)) return
  BEARER.lastIndex = 0
  for (let match = BEARER.exec(text); match; match = BEARER.exec(text)) {
    if (match[1] !== undefined) {
      const [start, end] = match.indices![2]!
      // Only the token's own characters: a sentence's full stop after the marker stays.
      if (/[A-Za-z0-9]/.test(match[2]!)) edits.drop(start, end)
      continue
    }
    const value = match[3]!
    if (isPlaceholder(value)) continue
    const [start, end] = match.indices![3]!
    edits.replace(start, end, "bearer-token")
  }
}

const COOKIE_HEADER = /\b(?:Set-)?Cookie\\?["']?[ \t]*:[ \t]*([^\n\r"\\]+)/dgi
const COOKIE_PAIR = /([^=;,\s]+)=([^;\s]*)/dg
const SESSION_COOKIE = /sess|sid|token|auth|jwt|remember|login|csrf|xsrf|secret|key/i

/** Values of session-like cookies, and any cookie value that looks random. */
export function cookieHeaders(edits: Edits): void {
  const text = edits.text
  if (!/cookie/i.test(text)) return
  COOKIE_HEADER.lastIndex = 0
  for (let header = COOKIE_HEADER.exec(text); header; header = COOKIE_HEADER.exec(text)) {
    const offset = header.indices![1]![0]
    const value = header[1]!
    COOKIE_PAIR.lastIndex = 0
    for (let pair = COOKIE_PAIR.exec(value); pair; pair = COOKIE_PAIR.exec(value)) {
      const cookie = pair[2]!
      if (cookie.length < 8 || isPlaceholder(cookie)) continue
      if (!SESSION_COOKIE.test(pair[1]!) && !looksRandom(cookie)) continue
      const [start, end] = pair.indices![2]!
      edits.replace(offset + start, offset + end, "cookie")
    }
  }
}

/**
 * Passwords some tools take in their own flag forms: `curl -u user:password`, `mysql -ppassword`,
 * `sshpass -p password`, `docker login -p password`. Other tools' `--password x` flags are secret
 * assignments (assignments.ts). A command may go on over `\\` line continuations.
 */
const CLI_LINE = /\b(curl|mysql|mysqldump|mysqladmin|mariadb|sshpass|docker login)\b(?:[^\n\\]|\\[^])*/g
const CURL_USER = /(?:^|\s)(?:-u|--user|--proxy-user)(?:[ \t]+|=)((?:"[^"\n]*"|'[^'\n]*'|[^\s"'])+)/dg
const MYSQL_PASSWORD = /\s-p([^\s"']+)/dg
const SPACED_P = /\s-p[ \t]+["']?([^\s"']+)/dg

export function cliPasswords(edits: Edits): void {
  const text = edits.text
  if (!/curl|mysql|mariadb|sshpass|docker login/.test(text)) return
  CLI_LINE.lastIndex = 0
  for (let line = CLI_LINE.exec(text); line; line = CLI_LINE.exec(text)) {
    const tool = line[1]!
    if (tool === "curl") {
      curlUsers(edits, line[0], line.index)
      continue
    }
    const pattern = tool === "sshpass" || tool === "docker login" ? SPACED_P : MYSQL_PASSWORD
    pattern.lastIndex = 0
    for (let match = pattern.exec(line[0]); match; match = pattern.exec(line[0])) {
      const password = match[1]!
      if (isPlaceholder(password) || holdsMarker(password)) continue
      const [start, end] = match.indices![1]!
      if (line.index + start < edits.position) continue
      edits.replace(line.index + start, line.index + end, "secret-flag")
    }
  }
}

/**
 * `curl -u user:password`, each part quoted or not (`"user":"pass"`, `'user:pass'`, `user:'pass'`).
 * With nothing after the colon the user is an API key (`-u sk_live_...:`), redacted when it looks random.
 */
function curlUsers(edits: Edits, line: string, offset: number): void {
  CURL_USER.lastIndex = 0
  for (let match = CURL_USER.exec(line); match; match = CURL_USER.exec(line)) {
    const [tokenStart, tokenEnd] = match.indices![1]!
    const token = match[1]!
    if (token.startsWith("<") || holdsMarker(token)) continue
    const colon = token.indexOf(":")
    const plain = token.replace(/["']/g, "")
    const cut = plain.indexOf(":")
    const user = cut < 0 ? plain : plain.slice(0, cut)
    const password = cut < 0 ? "" : plain.slice(cut + 1)
    let start: number
    let end = tokenEnd
    if (password) {
      if (isPasswordStandIn(password) || password === user || /^(.)\1*$/.test(password)) continue
      // A user that is itself a key (an OAuth client id, an API key id) goes with its secret.
      start = keyLike(user) ? tokenStart : tokenStart + colon + 1
      if (line[start] === '"' || line[start] === "'") start++
      if (line[end - 1] === '"' || line[end - 1] === "'") end--
    } else {
      if (cut < 0 || !keyLike(user)) continue
      start = tokenStart + (token[0] === '"' || token[0] === "'" ? 1 : 0)
      end = tokenStart + colon
    }
    if (offset + start < edits.position || end <= start) continue
    edits.replace(offset + start, offset + end, "secret-flag")
  }
}

/** A user name that is really a key: long, letters and digits mixed, not an email address. */
function keyLike(user: string): boolean {
  return user.length >= 12 && !user.includes("@") && looksRandom(user.replace(/^\{(.*)\}$/, "$1"))
}
