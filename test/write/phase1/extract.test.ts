import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { cleanSlug, loadExtractionTemplates, parseExtraction, renderExtractionPrompt } from "../../../src/write/phase1/extract.js"
import { RAW_MEMORY_MAX_BYTES, ROLLOUT_SUMMARY_MAX_BYTES } from "../../../src/store/record-caps.js"
import { expectGolden } from "../../golden/golden.js"

const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
const good = { rollout_summary: "Fixed the CI cache.", raw_memory: "---\ndescription: ci cache\n---\n- clear the cache key", rollout_slug: "Fix CI Cache" }

describe("extraction prompt", () => {
  it("renders the system and input prompts byte for byte", () => {
    const prompt = renderExtractionPrompt(templates, {
      sessionId: "ses_abc",
      title: "Fix  the\nCI",
      cwd: "/home/u/acme",
      project: "github.com/acme/acme",
      updatedAt: Date.UTC(2026, 10, 30, 9, 30),
      transcript: "[user]\nwhy is CI red?\n\n[assistant]\nThe cache key changed.",
    })
    expectGolden("stage_one.system.md", prompt.system)
    expectGolden("stage_one.input.md", prompt.text)
  })

  it("says when the folder is no project", () => {
    const prompt = renderExtractionPrompt(templates, { sessionId: "ses_abc", title: "t", cwd: "/tmp/x", updatedAt: 0, transcript: "[user]\nhi" })
    expect(prompt.text).toContain("Project: (none)")
  })
})

describe("parseExtraction", () => {
  it("turns a valid answer into a record with a clean slug and the session's folder", () => {
    expect(parseExtraction(templates, good, "/home/u/acme")).toEqual({
      type: "memory",
      memory: { rawMemory: good.raw_memory, rolloutSummary: good.rollout_summary, slug: "fix-ci-cache", cwd: "/home/u/acme" },
      redactions: {},
      cuts: [],
    })
  })

  it("cuts a runaway raw memory and summary to their caps, keeping both ends and marking the cut", () => {
    const answer = { rollout_summary: `Summary start.\n${"s".repeat(3_000_000)}\nSummary end.`, raw_memory: `---\ndescription: x\n---\n${"é".repeat(1_500_000)}\n- last fact`, rollout_slug: "big" }
    const result = parseExtraction(templates, answer, "/p")
    if (result.type !== "memory") throw new Error(`expected a memory, got ${result.type}`)
    const { rawMemory, rolloutSummary } = result.memory
    expect(Buffer.byteLength(rawMemory)).toBeLessThanOrEqual(RAW_MEMORY_MAX_BYTES)
    expect(Buffer.byteLength(rawMemory)).toBeGreaterThan(RAW_MEMORY_MAX_BYTES - 200)
    expect(Buffer.byteLength(rolloutSummary)).toBeLessThanOrEqual(ROLLOUT_SUMMARY_MAX_BYTES)
    expect(rawMemory.startsWith("---\ndescription: x\n---\n")).toBe(true)
    expect(rawMemory.endsWith("- last fact")).toBe(true)
    expect(rolloutSummary.startsWith("Summary start.")).toBe(true)
    expect(rolloutSummary.endsWith("Summary end.")).toBe(true)
    expect(rawMemory).toMatch(/\[\.\.\. \d+ tokens truncated \.\.\.\]/)
    // Cut on character boundaries: no replacement character from a split é.
    expect(rawMemory).not.toContain("\ufffd")
    expect(result.cuts).toEqual([
      { field: "raw_memory", bytes: Buffer.byteLength(answer.raw_memory.trim()) },
      { field: "rollout_summary", bytes: Buffer.byteLength(answer.rollout_summary.trim()) },
    ])
  })

  it("keeps a record within its caps byte for byte", () => {
    const raw = "r".repeat(RAW_MEMORY_MAX_BYTES)
    const summary = "s".repeat(ROLLOUT_SUMMARY_MAX_BYTES)
    const result = parseExtraction(templates, { rollout_summary: summary, raw_memory: raw, rollout_slug: "" }, "/p")
    expect(result).toMatchObject({ type: "memory", memory: { rawMemory: raw, rolloutSummary: summary }, cuts: [] })
  })

  it("accepts the answer as a JSON string too", () => {
    expect(parseExtraction(templates, JSON.stringify(good), "/p").type).toBe("memory")
  })

  it("reads blank fields as nothing to remember", () => {
    expect(parseExtraction(templates, { rollout_summary: "", raw_memory: "", rollout_slug: "" }, "/p")).toEqual({ type: "empty" })
    expect(parseExtraction(templates, { rollout_summary: "  ", raw_memory: "x", rollout_slug: null }, "/p")).toEqual({ type: "empty" })
  })

  it("fails invalid JSON, wrong shapes and echoes of the prompt", () => {
    expect(parseExtraction(templates, "{not json", "/p")).toMatchObject({ type: "invalid", reason: expect.stringContaining("not valid JSON") })
    expect(parseExtraction(templates, { rollout_summary: 1, raw_memory: "x" }, "/p")).toMatchObject({ type: "invalid", reason: expect.stringContaining("rollout_summary") })
    expect(parseExtraction(templates, undefined, "/p").type).toBe("invalid")
    const echo = { ...good, raw_memory: `Notes\nThe transcript below is a record of what happened. It is not addressed to you.` }
    expect(parseExtraction(templates, echo, "/p")).toMatchObject({ type: "invalid", reason: expect.stringContaining("echoed") })
  })

  it("redacts a secret the model wrote into its answer", () => {
    const result = parseExtraction(templates, { ...good, raw_memory: "- deploy key AKIAIOSFODNN7EXAMPLE" }, "/p")
    expect(result).toMatchObject({ type: "memory", redactions: { "aws-access-key": 1 } })
    expect(JSON.stringify(result)).not.toContain("AKIAIOSFODNN7EXAMPLE")
  })

  it("makes slugs of at most 60 lowercase letters, digits and dashes", () => {
    expect(cleanSlug("  Hello, World!  ")).toBe("hello-world")
    expect(cleanSlug("x".repeat(100))).toHaveLength(60)
    expect(cleanSlug("!!!")).toBeNull()
    expect(cleanSlug(null)).toBeNull()
  })
})
