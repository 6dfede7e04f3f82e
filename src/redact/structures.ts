// Secrets recognised by where they stand rather than by their own shape: private key blocks,
// passwords in URLs, credentials in HTTP headers, and passwords given to a few command-line
// tools. Each function is one pass over the text that records its replacements in `edits`.
import { Edits, holdsMarker } from "./marker.js"
import { isPlaceholder, looksRandom } from "./values.js"

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
 * scheme://user:password@host. The password runs to the last `@` of the authority (an unescaped
 * `@` inside a password is common); the user may be empty (`redis://:password@host`). Found from
 * each `://`: a pattern starting at the scheme would be tried at every word of the text.
 */
const AFTER_SCHEME = /([^\s:/?#@"'<>\\[\]]*):([^\s/?#"'<>\\]+)@(?=[A-Za-z0-9[_-])/dy
const SCHEME_CHAR = /[A-Za-z0-9+.-]/

export function urlCredentials(edits: Edits): void {
  const text = edits.text
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let start = at
    while (start > 0 && at - start < 32 && SCHEME_CHAR.test(text[start - 1]!)) start--
    if (!/[A-Za-z]/.test(text[start] ?? "")) continue
    AFTER_SCHEME.lastIndex = at + 3
    const match = AFTER_SCHEME.exec(text)
    if (!match) continue
    const password = match[2]!
    if (isPlaceholder(password) || /^\d{1,5}$/.test(password)) continue
    const [from, to] = match.indices![2]!
    if (from < edits.position) continue
    const scheme = text.slice(start, at).toLowerCase()
    edits.replace(from, to, DATABASE_SCHEMES.has(scheme) ? "database-url" : "url-password")
  }
}

/** `Authorization: Bearer x`, also as a JSON or Python header entry, escaped or not. */
// Blanks are matched by one quantifier at each place: two adjacent ones could split a long run of
// spaces in quadratically many ways before failing.
const AUTHORIZATION = /\b(?:Proxy-)?Authorization\\?["']?[ \t]*[:=][ \t]*(?:\\?["'][ \t]*)?(?:(Bearer|Basic|Token|Bot)[ \t]+)?([A-Za-z0-9._~+/=-]{8,4096})/dgi
const BEARER = /\bBearer[ \t]+([A-Za-z0-9._~+/-]{16,4096}=*)/dg

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

/** A bearer token outside an Authorization header (`"token": "Bearer ..."`). */
export function bearerTokens(edits: Edits): void {
  const text = edits.text
  if (!text.includes("Bearer")) return
  BEARER.lastIndex = 0
  for (let match = BEARER.exec(text); match; match = BEARER.exec(text)) {
    const value = match[1]!
    if (!looksRandom(value)) continue
    const [start, end] = match.indices![1]!
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
 * assignments (assignments.ts).
 */
const CLI_LINE = /\b(curl|mysql|mysqldump|mysqladmin|mariadb|sshpass|docker login)\b[^\n]*/g
const CURL_USER = /(?:^|\s)(?:-u|--user|--proxy-user)(?:[ \t]+|=)["']?[^\s:"']*:([^\s"']+)/dg
const MYSQL_PASSWORD = /\s-p([^\s"']+)/dg
const SPACED_P = /\s-p[ \t]+["']?([^\s"']+)/dg

export function cliPasswords(edits: Edits): void {
  const text = edits.text
  if (!/curl|mysql|mariadb|sshpass|docker login/.test(text)) return
  CLI_LINE.lastIndex = 0
  for (let line = CLI_LINE.exec(text); line; line = CLI_LINE.exec(text)) {
    const tool = line[1]!
    const pattern = tool === "sshpass" || tool === "docker login" ? SPACED_P : tool.startsWith("m") ? MYSQL_PASSWORD : CURL_USER
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
