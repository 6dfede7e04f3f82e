import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { cleanSlug, loadExtractionTemplates, parseExtraction, renderExtractionPrompt } from "../../src/write/extract.js"
import { expectGolden } from "../golden/golden.js"

const templates = loadExtractionTemplates(fileURLToPath(new URL("../../templates", import.meta.url)))
const good = { rollout_summary: "Fixed the CI cache.", raw_memory: "---\ndescription: ci cache\n---\n- clear the cache key", rollout_slug: "Fix CI Cache" }

describe("extraction prompt", () => {
  it("renders the system and input prompts byte for byte", () => {
    const prompt = renderExtractionPrompt(templates, {
      sessionId: "ses_abc",
      title: "Fix  the\nCI",
      cwd: "/home/u/acme",
      updatedAt: Date.UTC(2026, 10, 30, 9, 30),
      transcript: "[user]\nwhy is CI red?\n\n[assistant]\nThe cache key changed.",
    })
    expectGolden("stage_one.system.md", prompt.system)
    expectGolden("stage_one.input.md", prompt.text)
  })
})

describe("parseExtraction", () => {
  it("turns a valid answer into a record with a clean slug and the session's folder", () => {
    expect(parseExtraction(templates, good, "/home/u/acme")).toEqual({
      type: "memory",
      memory: { rawMemory: good.raw_memory, rolloutSummary: good.rollout_summary, slug: "fix-ci-cache", cwd: "/home/u/acme" },
      redactions: {},
    })
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
