import { describe, expect, it } from "vitest"
import { redact } from "../src/redact/redact.js"

describe("redact", () => {
  const cases: Array<[string, string, string]> = [
    ["github-token", "push with ghp_0123456789abcdefghijABCDEFGHIJ0123456789 now", "push with [REDACTED:github-token] now"],
    ["aws-access-key", "key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED:aws-access-key] here"],
    ["openai-key", "OPENAI=sk-proj-abcdefghijklmnopqrstuvwx1234", "OPENAI=[REDACTED:openai-key]"],
    ["url-password", "postgres://app:hunter2secret@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x"],
    ["authorization-header", "Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer [REDACTED:authorization-header]"],
    ["secret-assignment", 'config = {"api_key": "abcd1234efgh"}', 'config = {"api_key": "[REDACTED:secret-assignment]"}'],
    ["secret-assignment", "DB_PASSWORD=correcthorse", "DB_PASSWORD=[REDACTED:secret-assignment]"],
    ["secret-flag", "tool --token abcdef123456", "tool --token [REDACTED:secret-flag]"],
  ]
  for (const [name, input, expected] of cases) {
    it(`replaces a ${name} with its marker`, () => {
      const { text, counts } = redact(input)
      expect(text).toBe(expected)
      expect(counts[name]).toBe(1)
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
})
