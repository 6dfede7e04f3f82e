import { describe, expect, it } from "vitest"
import { addCounts, redact, redactDeep, redactText } from "../src/redact/redact.js"

// Corpora, precision cases and private spans have their own files under test/redact/.
describe("redact", () => {
  const cases: Array<[string, string, string]> = [
    ["github-token", "push with ghp_0123456789abcdefghijABCDEFGHIJ0123456789 now", "push with [REDACTED:github-token] now"],
    ["aws-access-key", "key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED:aws-access-key] here"],
    ["openai-api-key", "OPENAI=sk-proj-abcdefghijklmnopqrstuvwx1234ABCD", "OPENAI=[REDACTED:openai-api-key]"],
    ["database-url", "postgres://app:hunter2secret@db:5432/x", "postgres://app:[REDACTED:database-url]@db:5432/x"],
    ["url-password", "https://ci:hunter2secret@git.acme.dev/x.git", "https://ci:[REDACTED:url-password]@git.acme.dev/x.git"],
    ["authorization-header", "Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer [REDACTED:authorization-header]"],
    ["secret-assignment", 'config = {"api_key": "abcd1234efgh"}', 'config = {"api_key": "[REDACTED:secret-assignment]"}'],
    ["secret-assignment", "DB_PASSWORD=correcthorse1", "DB_PASSWORD=[REDACTED:secret-assignment]"],
    ["secret-flag", "tool --token abcdef123456", "tool --token [REDACTED:secret-flag]"],
  ]
  for (const [name, input, expected] of cases) {
    it(`replaces a ${name} with its marker`, () => {
      const { text, counts } = redact(input)
      expect(text).toBe(expected)
      expect(counts).toEqual({ [name]: 1 })
    })
  }

  it("leaves ordinary code and prose alone", () => {
    const benign = [
      "max_tokens: 4096",
      "const tokenizer = load()",
      "csrf_token_name = 'x-csrf'",
      "the token: is missing",
      "password reset emails are sent by the worker",
      "https://example.com/path?q=1",
    ].join("\n")
    expect(redact(benign)).toEqual({ text: benign, counts: {} })
  })

  it("gives each secret one marker of the most specific class, even where several rules apply", () => {
    // The token is in a URL's password, after a secret-named key: the token format wins.
    const { text, counts } = redact("export GIT_TOKEN_URL=https://x:ghp_0123456789abcdefghijABCDEFGHIJ0123456789@github.com")
    expect(text).toBe("export GIT_TOKEN_URL=https://x:[REDACTED:github-token]@github.com")
    expect(counts).toEqual({ "github-token": 1 })
  })

  it("counts each class separately and returns the same text when run on its own output", () => {
    const input = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789 and ghp_abcdefghij0123456789ABCDEFGHIJ0123456789\nPASSWORD=s3cr3t-Pass"
    const once = redact(input)
    expect(once.counts).toEqual({ "github-token": 2, "secret-assignment": 1 })
    expect(redact(once.text)).toEqual({ text: once.text, counts: {} })
    expect(redactText(input)).toBe(once.text)
  })

  it("redacts any 16-character token after Bearer, in any case and spacing, and the whole of one a known prefix starts", () => {
    const cases: Array<[string, string]> = [
      ["Bearer abcde+fghijklmnopqrstuvwxyz012345", "Bearer [REDACTED:bearer-token]"],
      ["Bearer abcdefghijklmnop+secret_suffix", "Bearer [REDACTED:bearer-token]"],
      // An OpenAI key of the legacy form (Codex's own rule takes any mix of cases) keeps its class.
      ["Bearer sk-abcdefghijklmnopqrst+secret_suffix", "Bearer [REDACTED:openai-api-key]"],
      ["curl -H 'x: bearer AbcdefghijklMN09._~+/-=='; echo done", "curl -H 'x: bearer [REDACTED:bearer-token]'; echo done"],
      ["Bearer\tabcdefghijklmnop", "Bearer\t[REDACTED:bearer-token]"],
      ["Bearer   abcdefghijklmnop", "Bearer   [REDACTED:bearer-token]"],
      // A known format at the token's start keeps its class; the rest of the token goes with it.
      ["Bearer AKIAABCDEFGHIJKLMNOP/~secret_suffix", "Bearer [REDACTED:aws-access-key]"],
      ["sent Bearer AKIAABCDEFGHIJKLMNOP.", "sent Bearer [REDACTED:aws-access-key]."],
    ]
    for (const [input, expected] of cases) {
      expect(redactText(input)).toBe(expected)
      expect(redactText(expected)).toBe(expected)
    }
    for (const prose of ["Bearer of good news", "Bearer abcdefghijklmno", "NotABearer abcdefghijklmnop", "Bearerabcdefghijklmnop", "Bearer\nabcdefghijklmnop", "Bearer\u00a0abcdefghijklmnop"]) {
      expect(redactText(prose)).toBe(prose)
    }
  })

  it("redacts every string of a nested value and keeps its shape", () => {
    const value = { message: "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789", nested: [{ password: "x" }, 3, null], stack: "at PASSWORD=s3cr3t-Pass" }
    expect(redactDeep(value)).toEqual({
      message: "token [REDACTED:github-token]",
      nested: [{ password: "x" }, 3, null],
      stack: "at PASSWORD=[REDACTED:secret-assignment]",
    })
  })

  it("adds counts class by class", () => {
    expect(addCounts({ jwt: 1 }, { jwt: 2, "github-token": 1 })).toEqual({ jwt: 3, "github-token": 1 })
  })
})
