// The two corpora: every true positive redacted to exactly its classes, every benign file returned
// byte for byte. Together they pin both halves of the issue: no secret through, nothing else touched.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { load as loadYaml } from "js-yaml"
import { describe, expect, it } from "vitest"
import { VENDOR_KEYS } from "../../src/redact/keys.js"
import { redact } from "../../src/redact/redact.js"
import { PREFIX_RULES, SCAN_RULES } from "../../src/redact/rules.js"
import { expectGolden } from "../golden/golden.js"
import { POSITIVES, type Positive } from "./corpus-positive.js"

const BENIGN_DIR = fileURLToPath(new URL("./corpus-benign/", import.meta.url))
const benignFiles = fs.readdirSync(BENIGN_DIR).sort()

/** Classes the redactor can produce besides the rule tables (structures.ts, assignments.ts). */
const STRUCTURAL = ["private-key", "gcp-service-account-key", "kubernetes-secret", "database-url", "database-password", "url-password", "authorization-header", "bearer-token", "cookie", "secret-assignment", "secret-flag", "url-query-secret"]
const ALL_CLASSES = new Set([...PREFIX_RULES.map((r) => r.name), ...SCAN_RULES.map((r) => r.name), ...VENDOR_KEYS.map((v) => v.name), ...STRUCTURAL])

function parse(format: "json" | "yaml", text: string): unknown {
  return format === "json" ? JSON.parse(text) : loadYaml(text)
}

/** Same shape and leaves, except leaves that held a secret, which must now hold a marker instead. */
function expectSameButSecrets(before: unknown, after: unknown, secrets: readonly string[], at = "$"): void {
  if (typeof before === "string" && secrets.some((secret) => before.includes(secret))) {
    const now = JSON.stringify(after)
    expect(now, at).toContain("REDACTED:")
    for (const secret of secrets) expect(now, at).not.toContain(secret)
    return
  }
  if (before === null || typeof before !== "object") return void expect(after, at).toEqual(before)
  expect(Object.keys(after as object), at).toEqual(Object.keys(before))
  for (const [key, value] of Object.entries(before)) expectSameButSecrets(value, (after as Record<string, unknown>)[key], secrets, `${at}.${key}`)
}

describe("the true-positive corpus", () => {
  for (const positive of POSITIVES) {
    it(`redacts ${positive.about}, counted as ${Object.keys(positive.counts).join(" and ")}`, () => {
      const { text, counts } = redact(positive.text)
      for (const secret of positive.secrets) expect(text).not.toContain(secret)
      expect(counts).toEqual(positive.counts)
      for (const name of Object.keys(positive.counts)) expect(text).toContain(`[REDACTED:${name}]`)
    })
  }

  it("covers every class the rules define, and at least 40 of them", () => {
    const covered = new Set(POSITIVES.flatMap((p) => Object.keys(p.counts)))
    expect([...ALL_CLASSES].filter((name) => !covered.has(name))).toEqual([])
    expect([...covered].filter((name) => !ALL_CLASSES.has(name))).toEqual([])
    expect(covered.size).toBeGreaterThanOrEqual(40)
  })

  it("renders the whole corpus byte for byte", () => {
    const rendered = POSITIVES.map((p) => `### ${p.about}\n${redact(p.text).text.replace(/\n?$/, "\n")}`).join("\n")
    expectGolden("redact.positive.txt", rendered)
  })

  const structured = POSITIVES.filter((p): p is Positive & { format: "json" | "yaml" } => p.format !== undefined)
  for (const positive of structured) {
    it(`keeps ${positive.format.toUpperCase()} parseable after redacting ${positive.about}`, () => {
      const before = parse(positive.format, positive.text)
      const after = parse(positive.format, redact(positive.text).text)
      expectSameButSecrets(before, after, positive.secrets)
    })
  }

  it("redacts every positive at once, as in a long transcript, with the summed counts", () => {
    const joined = POSITIVES.map((p) => p.text).join("\n\n")
    const { text, counts } = redact(joined)
    for (const secret of POSITIVES.flatMap((p) => p.secrets)) expect(text).not.toContain(secret)
    const expected: Record<string, number> = {}
    for (const p of POSITIVES) for (const [name, n] of Object.entries(p.counts)) expected[name] = (expected[name] ?? 0) + n
    expect(counts).toEqual(expected)
  })
})

describe("the benign corpus", () => {
  it("holds realistic code, config, logs and prose", () => {
    expect(benignFiles.length).toBeGreaterThanOrEqual(20)
  })

  for (const file of benignFiles) {
    it(`returns ${file} byte for byte`, () => {
      const text = fs.readFileSync(path.join(BENIGN_DIR, file), "utf8")
      const result = redact(text)
      expect(result.counts).toEqual({})
      expect(result.text).toBe(text)
    })
  }

  it("returns the whole corpus, joined into one text, unchanged", () => {
    const joined = benignFiles.map((file) => fs.readFileSync(path.join(BENIGN_DIR, file), "utf8")).join("\n")
    expect(redact(joined).text).toBe(joined)
  })
})

describe("markers", () => {
  it("are left alone by a second run, whatever syntax they sit in", () => {
    for (const positive of POSITIVES) {
      const once = redact(positive.text)
      expect(redact(once.text), positive.about).toEqual({ text: once.text, counts: {} })
    }
  })
})
