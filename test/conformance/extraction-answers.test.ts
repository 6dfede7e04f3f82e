// Codex's phase-1 answer contracts, ported: V1's `output_schema` and its test
// `output_schema_requires_rollout_slug_and_keeps_it_nullable` (codex-rs/memories/write/src/
// phase1.rs, openai/codex@00f1e544 and zibuyu2015831/codex@67e69213), and the V2 contract of
// phase1_output.rs (zibuyu2015831/codex@67e69213, a downstream mirror): `output_schema(V2)` and
// `StageOneOutput::parse`, which Codex does not test on its own.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { EXTRACTION_SCHEMA, loadExtractionTemplates, parseExtraction } from "../../src/write/phase1/extract.js"
import { EXTRACTION_V2_SCHEMA, V2_SUMMARY_MAX_BYTES, loadExtractionV2Templates, parseExtractionV2 } from "../../src/write/phase1/extract-v2.js"

const templatesDir = fileURLToPath(new URL("../../templates", import.meta.url))
const v1 = loadExtractionTemplates(templatesDir)
const v2 = loadExtractionV2Templates(templatesDir)
const typesOf = (schema: { properties: Record<string, { type: unknown }> }, field: string) => [schema.properties[field]!.type].flat().map(String).sort()

describe("V1 answers as Codex's phase-1 tests expect", () => {
  // phase1.rs: output_schema_requires_rollout_slug_and_keeps_it_nullable.
  it("requires all three fields and keeps the slug nullable", () => {
    expect([...EXTRACTION_SCHEMA.required].sort()).toEqual(["raw_memory", "rollout_slug", "rollout_summary"])
    expect(typesOf(EXTRACTION_SCHEMA, "rollout_slug")).toEqual(["null", "string"])
    expect(typesOf(EXTRACTION_SCHEMA, "rollout_summary")).toEqual(["string"])
    expect(typesOf(EXTRACTION_SCHEMA, "raw_memory")).toEqual(["string"])
    expect(EXTRACTION_SCHEMA.additionalProperties).toBe(false)
  })

  // Codex: `raw_memory.is_empty() || rollout_summary.is_empty()` is succeeded_no_output.
  it("reads an empty summary or an empty raw memory as nothing to remember", () => {
    expect(parseExtraction(v1, { rollout_summary: "", raw_memory: "- fact", rollout_slug: null }, "/p")).toEqual({ type: "empty" })
    expect(parseExtraction(v1, { rollout_summary: "Did X.", raw_memory: "", rollout_slug: "x" }, "/p")).toEqual({ type: "empty" })
  })

  // LegacyOutput: raw_memory and rollout_summary are required strings, the slug defaults to none.
  it("takes a missing or null slug, and refuses a missing or non-string memory field", () => {
    expect(parseExtraction(v1, { rollout_summary: "Did X.", raw_memory: "- fact" }, "/p")).toMatchObject({ type: "memory", memory: { slug: null } })
    expect(parseExtraction(v1, { rollout_summary: "Did X.", raw_memory: "- fact", rollout_slug: null }, "/p")).toMatchObject({ type: "memory", memory: { slug: null } })
    expect(parseExtraction(v1, { rollout_summary: "Did X.", rollout_slug: null }, "/p").type).toBe("invalid")
    expect(parseExtraction(v1, { rollout_summary: 3, raw_memory: "- fact", rollout_slug: null }, "/p").type).toBe("invalid")
  })

  // Codex's parser has deny_unknown_fields; ours drops the field (recorded divergence: OpenCode
  // cannot promise a strict schema on every provider, and refusing costs a paid retry).
  it("drops an unknown field instead of failing the answer, and stores nothing of it", () => {
    const result = parseExtraction(v1, { rollout_summary: "Did X.", raw_memory: "- fact", rollout_slug: "x", extra: "kept nowhere" }, "/p")
    expect(result.type).toBe("memory")
    expect(JSON.stringify(result)).not.toContain("kept nowhere")
  })

  // sample(): redact_secrets on raw_memory, rollout_summary and the slug.
  it("redacts all three fields of the answer", () => {
    const key = "sk-abcdefghijklmnopqrstuvwxyz123456"
    const result = parseExtraction(v1, { rollout_summary: `used ${key}`, raw_memory: `- key ${key}`, rollout_slug: `k-${key}` }, "/p")
    expect(result).toMatchObject({ type: "memory", redactions: { "openai-api-key": 3 } })
    expect(JSON.stringify(result)).not.toContain(key)
  })
})

describe("V2 answers as Codex's phase1_output.rs defines them", () => {
  // output_schema(V2): summary and slug, both required strings, nothing else.
  it("asks for a summary and a slug, both required strings, and nothing else", () => {
    expect([...EXTRACTION_V2_SCHEMA.required].sort()).toEqual(["rollout_slug", "rollout_summary"])
    expect(typesOf(EXTRACTION_V2_SCHEMA, "rollout_slug")).toEqual(["string"])
    expect(typesOf(EXTRACTION_V2_SCHEMA, "rollout_summary")).toEqual(["string"])
    expect(Object.keys(EXTRACTION_V2_SCHEMA.properties).sort()).toEqual(["rollout_slug", "rollout_summary"])
    expect(EXTRACTION_V2_SCHEMA.additionalProperties).toBe(false)
  })

  // "v2 never decodes raw memory": a raw_memory field is no part of the answer.
  it("stores no raw memory, even when the model sends one", () => {
    const result = parseExtractionV2(v2, { rollout_summary: "Did X.", rollout_slug: "x", raw_memory: "- should not be stored" }, "/p")
    expect(result).toMatchObject({ type: "memory", memory: { rawMemory: "" } })
    expect(JSON.stringify(result)).not.toContain("should not be stored")
  })

  // SummaryOutput's slug is a required String in Codex; a null one is taken here (recorded).
  it("takes a null or empty slug as no slug", () => {
    for (const slug of [null, ""]) expect(parseExtractionV2(v2, { rollout_summary: "Did X.", rollout_slug: slug }, "/p")).toMatchObject({ type: "memory", memory: { slug: null } })
  })

  // parse(V2): redact the summary, then truncate it to 9,000 bytes; redact the slug.
  it("redacts the summary before cutting it to 9,000 bytes, and redacts the slug", () => {
    const key = "sk-abcdefghijklmnopqrstuvwxyz123456"
    const summary = `${key} ${"é".repeat(6_000)} ${key}`
    const result = parseExtractionV2(v2, { rollout_summary: summary, rollout_slug: `about-${key}` }, "/p")
    if (result.type !== "memory") throw new Error(`expected a memory, got ${result.type}`)
    expect(Buffer.byteLength(result.memory.rolloutSummary, "utf8")).toBeLessThanOrEqual(V2_SUMMARY_MAX_BYTES)
    expect(result.memory.rolloutSummary.startsWith("[REDACTED:openai-api-key]")).toBe(true)
    expect(result.memory.rolloutSummary.endsWith("[REDACTED:openai-api-key]")).toBe(true)
    expect(result.redactions).toEqual({ "openai-api-key": 3 })
    expect(JSON.stringify(result)).not.toContain(key)
  })
})
