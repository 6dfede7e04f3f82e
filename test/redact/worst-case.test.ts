// Inputs built to make a careless pattern backtrack: long runs of blanks where two quantifiers meet,
// a BEGIN line repeated without its END, token prefixes repeated back to back. Each must finish
// in linear time. The bound is a guard against hangs (a quadratic pattern takes minutes here), not
// a performance target: those live in `npm run bench`.
import { describe, expect, it } from "vitest"
import { stripPrivate } from "../../src/redact/private.js"
import { redact } from "../../src/redact/redact.js"

const BLANKS = " ".repeat(200_000)
const inputs: Record<string, string> = {
  "blanks after an Authorization header": `Authorization:${BLANKS}!`,
  "blanks around a quoted Authorization key": `"Authorization"${BLANKS}:${BLANKS}`,
  "blanks after a name naming a secret": `- name: DB_PASSWORD${BLANKS}x`,
  "key blocks without an END line": "-----BEGIN RSA PRIVATE KEY-----\n".repeat(20_000),
  "URL schemes back to back": "http://a:b".repeat(50_000),
  "key words back to back": "password: ".repeat(100_000),
  "one very long value": `password: ${"x1".repeat(500_000)}`,
  "a JWT prefix repeated": "eyJ".repeat(200_000),
  "a database URL whose password never meets an @": `postgres://u:${"p ".repeat(200_000)}`,
  "port-like fields on one long line": ":5432:".repeat(100_000),
  "a Secret whose data lines are long blank runs": `kind: Secret\ndata:\n${` a${BLANKS.slice(0, 50_000)}\n`.repeat(4)}`,
  "Secrets back to back without document separators": "kind: Secret\ndata:\n  k: v1\n".repeat(30_000),
  "a curl command continued over many lines": `curl ${"-u 'a \\\n".repeat(50_000)}`,
}

describe("redaction of adversarial input", () => {
  for (const [name, text] of Object.entries(inputs)) {
    it(`finishes ${name} in linear time`, () => {
      const start = performance.now()
      redact(text)
      expect(performance.now() - start).toBeLessThan(5_000)
    })
  }

  it("strips thousands of unbalanced private tags in linear time", () => {
    const start = performance.now()
    stripPrivate("<private>".repeat(50_000) + "</private>".repeat(60_000))
    expect(performance.now() - start).toBeLessThan(5_000)
  })
})
