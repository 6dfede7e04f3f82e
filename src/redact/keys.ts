// Which key names announce a secret. A key is cut into words at `_`, `-`, `.` and camelCase humps
// (`AWS_SECRET_ACCESS_KEY`, `spring.datasource.password`, `clientSecret`, `X-Api-Key`). It names
// a secret when its LAST word does: `csrf_token_name` names a name and `token_count` a count.
// A word that qualifies it as a limit, a kind of model token or a test stand-in cancels it
// (`max_token`, `eos_token`, `next_page_token`, `mock_password`). Words are compared whole, so
// `tokenizer`, `max_tokens` and `keyboard` never match.

/** Last words that name a secret by themselves. */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey", "credential", "credentials", "creds", "auth",
])

/**
 * Services whose keys name a credential with words that elsewhere name none: `HEROKU_KEY`,
 * `hubspotKey`, `SONAR_LOGIN`, `SUMO_ACCESS_ID`, `MessageBirdClientID`. Matched in the key with its
 * separators removed, so `MessageBird` and `messagebird` are one name.
 */
const PROVIDER_KEY = /heroku|hubspot|snyk|sonar|sumo|messagebird|cloudflare|sourcegraph|artifactory|jfrog|finnhub|asana|okta|dropbox|pulumi|netlify|vercel|fastly|algolia/
/** Which last words name a credential after a service name, beyond the usual ones. */
const PROVIDER_LAST: ReadonlySet<string> = new Set(["key", "login", "accessid", "clientid", "id"])
/** A key that is only a service's name (`cloudflare: ...`): its value must look like a token. */
const BARE_PROVIDERS: ReadonlySet<string> = new Set(["cloudflare", "sourcegraph", "artifactory"])
/** Bundler's credentials for a gem server: `BUNDLE_<HOST>` with the host's dots written `__`. */
const BUNDLER_KEY = /^BUNDLE_[A-Z0-9_]*[A-Z0-9]__[A-Z0-9_]*[A-Z0-9]$/i

/** `key` names a secret only after one of these (`api_key`, `secret_access_key`, `signing-key`). */
const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "api", "access", "secret", "private", "signing", "sign", "encryption", "encrypt", "decryption", "master", "client",
  "auth", "account", "storage", "app", "application", "license", "licence", "subscription", "admin", "shared", "service",
  "server", "session", "webhook", "hmac", "jwt", "aes", "cipher", "crypto", "root", "deploy", "ingest", "write", "ssh",
])

/** Words that, anywhere in a key, mean it does not hold a secret. */
const NOT_SECRET: ReadonlySet<string> = new Set([
  "max", "min", "num", "number", "count", "total", "limit", "page", "next", "prev", "previous", "continuation",
  "cursor", "sync", "cancellation", "cancel", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "stop",
  "start", "end", "input", "output", "prompt", "completion", "reasoning", "cached", "context", "vocab", "word", "char",
  "lexer", "parser", "is", "has", "use", "show", "enable", "enabled", "disable", "disabled", "no", "allow", "require",
  "required", "forgot", "hide", "public", "mock", "fake", "dummy", "example", "sample", "placeholder", "expected",
  // Anti-forgery tokens sit in every rendered form and expire with their page.
  "csrf", "xsrf", "authenticity",
])

/** One-word keys made of a known stem and a secret word: `PGPASSWORD`, `dbpass`, `apitoken`, `clientsecret`. */
const COMPOUND = /^(?:pg|db|my|mysql|root|admin|app|api|auth|access|user|new|old|session|client|smtp|mail|ftp|redis|ldap|vault|bot|git|npm|secret|private|master)(?:password|passwd|pass|pwd|secret|token|key)$/

/** Cuts a key into lowercase words; a trailing number is no word of its own (`api_token_2` ends in `token`). */
export function keyWords(key: string): string[] {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[\s_.:-]+/)
    .filter(Boolean)
  while (words.length > 1 && /^\d+$/.test(words[words.length - 1]!)) words.pop()
  return words
}

/** `key` is the key as written (for the shapes words lose, such as Bundler's `__`); its words otherwise. */
export function isSecretKey(words: readonly string[], key?: string): boolean {
  const last = words[words.length - 1]
  if (!last) return false
  if (words.some((word) => NOT_SECRET.has(word))) return false
  if (SECRET_WORDS.has(last)) return true
  if (key !== undefined && BUNDLER_KEY.test(key)) return true
  if (last === "key" && KEY_QUALIFIERS.has(words[words.length - 2] ?? "")) return true
  if (PROVIDER_LAST.has(last) || isBareProvider(words)) return providerKey(words)
  return COMPOUND.test(last)
}

/** A service's name, with a last word that names its credential there. */
function providerKey(words: readonly string[]): boolean {
  if (!PROVIDER_KEY.test(words.join(""))) return false
  const last = words[words.length - 1]!
  // `id` alone names an id: only a client's or an access id (`SUMO_ACCESS_ID`) is half a credential.
  return last !== "id" || words[words.length - 2] === "client" || words[words.length - 2] === "access"
}

export function isBareProvider(words: readonly string[]): boolean {
  return words.length === 1 && BARE_PROVIDERS.has(words[0]!)
}

/**
 * Services whose secrets have no prefix of their own: the key names the service and the value
 * has the service's shape. A value of another shape under such a key is still redacted, as a
 * plain secret assignment.
 */
interface VendorKey {
  name: string
  key: (words: readonly string[]) => boolean
  value: RegExp
}

const has = (words: readonly string[], ...wanted: string[]) => wanted.every((word) => words.includes(word))
const last = (words: readonly string[], word: string) => words[words.length - 1] === word

export const VENDOR_KEYS: readonly VendorKey[] = Object.freeze([
  {
    name: "aws-secret-access-key",
    key: (w) => last(w, "key") && w.includes("secret") && (w.includes("aws") || w.includes("access")),
    value: /^[A-Za-z0-9/+]{40}$/,
  },
  { name: "twilio-auth-token", key: (w) => w.includes("twilio") && (last(w, "token") || last(w, "secret")), value: /^[a-f0-9]{32}$/ },
  {
    name: "heroku-api-key",
    key: (w) => w.includes("heroku"),
    value: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  },
  { name: "travis-token", key: (w) => w.includes("travis") && last(w, "token"), value: /^[A-Za-z0-9_-]{20,24}$/ },
  { name: "circleci-token", key: (w) => w.includes("circleci") || w.includes("circle"), value: /^[a-f0-9]{40}$/ },
  { name: "cohere-api-key", key: (w) => w.includes("cohere") || (w[0] === "co" && has(w, "api", "key")), value: /^[A-Za-z0-9]{40}$/ },
  { name: "mistral-api-key", key: (w) => w.includes("mistral"), value: /^[A-Za-z0-9]{32}$/ },
  { name: "paypal-client-secret", key: (w) => (w.includes("paypal") || w.includes("braintree")) && last(w, "secret"), value: /^[A-Za-z0-9_-]{40,}$/ },
  { name: "bundler-credentials", key: (w) => w[0] === "bundle", value: /^[^\s:]+:[^\s:]+$/ },
  { name: "datadog-api-key", key: (w) => (w.includes("datadog") || w[0] === "dd") && last(w, "key"), value: /^[a-f0-9]{32}(?:[a-f0-9]{8})?$/ },
])

/** The class a secret assignment gets: a service's when key and value both fit it, else `fallback`. */
export function vendorClass(words: readonly string[], value: string, fallback: string): string {
  for (const vendor of VENDOR_KEYS) if (vendor.key(words) && vendor.value.test(value)) return vendor.name
  return fallback
}
