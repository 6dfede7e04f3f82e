// Secret formats recognised by the redactor. Each rule names one class; the class is the marker
// that replaces the secret (`[REDACTED:<class>]`), so a reader knows what kind of value was there
// without seeing it. Patterns anchor on formats distinctive enough not to hit ordinary code.

export interface RedactionRule {
  /** Marker class, e.g. "github-token". */
  name: string
  pattern: RegExp
  /** Index of the capture group holding the secret; the whole match when absent. */
  group?: number
}

// Key names that mark the value after them as secret. Matched as whole words (or whole
// snake/kebab segments), so `max_tokens`, `tokenizer` and `csrf_token_name` are left alone.
const SECRET_KEY = String.raw`(?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token|session[_-]?token|token|credentials?)`

export const RULES: readonly RedactionRule[] = Object.freeze([
  { name: "private-key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  { name: "aws-access-key", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  { name: "github-token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { name: "gitlab-token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/g },
  { name: "slack-token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  { name: "stripe-key", pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { name: "anthropic-key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}\b/g },
  { name: "openai-key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b/g },
  { name: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g },
  { name: "url-password", pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@/gi, group: 1 },
  { name: "authorization-header", pattern: /\bAuthorization\s*:\s*(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})/gi, group: 1 },
  // key = value, key: value, "key": "value", --key value, KEY=value; the value must look like data.
  {
    name: "secret-assignment",
    pattern: new RegExp(String.raw`(?<![A-Za-z0-9_-])${SECRET_KEY}(?![A-Za-z0-9_-])["']?\s*(?:[:=]|\s(?=["']))\s*["']?([^\s"',;}{)(\]\[]{6,})`, "gi"),
    group: 1,
  },
  { name: "secret-flag", pattern: new RegExp(String.raw`--${SECRET_KEY}(?:=|\s+)["']?([^\s"']{6,})`, "gi"), group: 1 },
])
