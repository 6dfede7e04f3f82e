// Single-prompt extraction (hosts with only a tool-less completion): the prompt's bytes for both
// versions, and reading the record back out of a completion's text.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { EXTRACTION_SCHEMA, loadExtractionTemplates, parseExtraction, renderExtractionPrompt } from "../../../src/write/phase1/extract.js"
import { EXTRACTION_V2_SCHEMA, loadExtractionV2Templates, parseExtractionV2, renderExtractionV2Prompt } from "../../../src/write/phase1/extract-v2.js"
import { jsonFromReply, renderSinglePrompt } from "../../../src/write/phase1/generate-prompt.js"
import { expectGolden } from "../../golden/golden.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const v1 = loadExtractionTemplates(templatesDir)
const v2 = loadExtractionV2Templates(templatesDir)
const at = Date.UTC(2026, 10, 30, 9, 30)

describe("renderSinglePrompt", () => {
  it("puts the instructions first, the session as a helper would get it, then the reminder and V1's schema", () => {
    const prompt = renderExtractionPrompt(v1, { sessionId: "ses_abc", title: "CI", cwd: "/home/u/acme", updatedAt: at, transcript: "[user]\nwhy is CI red?" })
    const single = renderSinglePrompt(v1.reminder, { ...prompt, schema: EXTRACTION_SCHEMA })
    expectGolden("stage_one.single.md", single)
    expect(single.indexOf(prompt.system)).toBe(0)
    expect(single.indexOf("why is CI red?")).toBeLessThan(single.indexOf("----- END OF THE SESSION -----"))
    expect(single.endsWith(`${JSON.stringify(EXTRACTION_SCHEMA, null, 2)}\n`)).toBe(true)
  })

  it("keeps V2's evidence chunks in order and asks for V2's schema", () => {
    const prompt = renderExtractionV2Prompt(v2, { sessionId: "ses_abc", title: "CI", cwd: "/home/u/acme", branch: "main", updatedAt: at, chunks: ["[human user]\nfirst\n", "[assistant final]\nsecond\n"] })
    const single = renderSinglePrompt(v2.reminder, { system: prompt.system, text: prompt.texts, schema: EXTRACTION_V2_SCHEMA })
    expectGolden("stage_one_v2.single.md", single)
    expect(single.indexOf("first")).toBeLessThan(single.indexOf("second"))
    expect(single).toContain('"rollout_slug"')
    expect(single).not.toContain('"raw_memory"')
  })

  it("is the same bytes for the same request", () => {
    const parts = { system: "S", text: ["a", "b"], schema: EXTRACTION_V2_SCHEMA }
    expect(renderSinglePrompt(v2.reminder, parts)).toBe(renderSinglePrompt(v2.reminder, { ...parts, text: ["a", "b"] }))
  })
})

describe("jsonFromReply", () => {
  const record = { rollout_summary: "Fixed CI.", raw_memory: "- CI caches by lockfile", rollout_slug: "ci" }

  it("reads a bare object, a fenced one, and one wrapped in words", () => {
    expect(jsonFromReply(JSON.stringify(record))).toEqual(record)
    expect(jsonFromReply("```json\n" + JSON.stringify(record, null, 2) + "\n```")).toEqual(record)
    expect(jsonFromReply(`Here is the record:\n${JSON.stringify(record)}\nDone.`)).toEqual(record)
  })

  it("gives undefined for text that holds no JSON, which the answer checks then refuse", () => {
    expect(jsonFromReply("I could not find anything worth remembering.")).toBeUndefined()
    expect(parseExtraction(v1, jsonFromReply("no json {here") ?? "no json {here", "/x")).toEqual({ type: "invalid", reason: "the extractor's answer is not valid JSON" })
  })

  it("hands the version's checks the same object a structured answer would be", () => {
    expect(parseExtraction(v1, jsonFromReply(JSON.stringify(record)), "/x")).toEqual(parseExtraction(v1, record, "/x"))
    const summary = { rollout_summary: "Fixed CI.", rollout_slug: "ci" }
    expect(parseExtractionV2(v2, jsonFromReply(`\`\`\`\n${JSON.stringify(summary)}\n\`\`\``), "/x")).toEqual(parseExtractionV2(v2, summary, "/x"))
  })
})
