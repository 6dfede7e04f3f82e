import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { extractCitations } from "../../src/read/citations.js"
import { loadReadPathTemplates, renderMemoryBlock } from "../../src/read/render.js"
import { expectGolden } from "../golden/golden.js"

const templates = loadReadPathTemplates(fileURLToPath(new URL("../../templates", import.meta.url)))
const summary = "v1\n## Projects\n- acme-api: Go service, tests with `make test`\n## Preferences\n- tabs, not spaces"

describe("renderMemoryBlock", () => {
  it("renders the tool-based block byte for byte", () => {
    expectGolden("read_path.tools.md", renderMemoryBlock(templates, { memoryRoot: "/home/u/.local/share/opencode/memories", summary, dedicatedTools: true }))
  })

  it("renders the file-based block byte for byte when the memory tools are off", () => {
    expectGolden("read_path.files.md", renderMemoryBlock(templates, { memoryRoot: "/home/u/.local/share/opencode/memories", summary, dedicatedTools: false }))
  })

  it("is a pure function of its input", () => {
    const input = { memoryRoot: "/m", summary, dedicatedTools: true }
    expect(renderMemoryBlock(templates, input)).toBe(renderMemoryBlock(templates, { ...input }))
  })

  it("caps the summary at 2,500 tokens with a middle cut", () => {
    const long = `v1\nHEAD-MARK\n${"filler line\n".repeat(3000)}TAIL-MARK`
    const block = renderMemoryBlock(templates, { memoryRoot: "/m", summary: long, dedicatedTools: true })
    const inner = block.split("----- MEMORY SUMMARY BEGINS -----\n")[1]!.split("\n----- MEMORY SUMMARY ENDS -----")[0]!
    expect(inner).toContain("HEAD-MARK")
    expect(inner).toContain("TAIL-MARK")
    expect(inner).toMatch(/\[\.\.\. \d+ tokens truncated \.\.\.\]/)
    expect(Buffer.byteLength(inner)).toBeLessThan(10_000 + 64)
  })

  it("mentions the citation block and the tools the model can call", () => {
    const block = renderMemoryBlock(templates, { memoryRoot: "/m", summary, dedicatedTools: true })
    for (const needle of ["<memory-citation>", "<citation_entries>", "<session_ids>", "memory_search", "memory_read", "memory_add_note"]) {
      expect(block).toContain(needle)
    }
    expect(renderMemoryBlock(templates, { memoryRoot: "/m", summary, dedicatedTools: false })).not.toContain("memory_search")
  })
})

describe("renderMemoryBlock, Memory V2", () => {
  const templatesDir = fileURLToPath(new URL("../../templates", import.meta.url))
  const v2 = loadReadPathTemplates(templatesDir, "v2")
  const root = "/home/u/.local/share/opencode/memories_v2"
  const recap = [
    "v1",
    "## User Profile",
    "Backend developer; Go and TypeScript.",
    "## User preferences",
    "- tabs, not spaces",
    "## General Tips",
    "- `make test` runs the whole suite",
    "## What's in Memory",
    "### /home/dev/acme-api",
    "#### 2026-11-30",
    "- rollout_summaries/2026-11-30T08-09-10-AbCd-fix_flaky_deploy.md — fixed the deploy retry loop; session=ses_0a1b2c3d4e5f",
  ].join("\n")

  it("renders the tool-based block byte for byte", () => {
    expectGolden("read_path.v2.tools.md", renderMemoryBlock(v2, { memoryRoot: root, summary: recap, dedicatedTools: true }))
  })

  it("renders the file-based block byte for byte when the memory tools are off", () => {
    expectGolden("read_path.v2.files.md", renderMemoryBlock(v2, { memoryRoot: root, summary: recap, dedicatedTools: false }))
  })

  it("leaves the V1 block byte for byte as it was, whether V1 is asked for or defaulted", () => {
    const v1 = loadReadPathTemplates(templatesDir, "v1")
    const memoryRoot = "/home/u/.local/share/opencode/memories"
    expectGolden("read_path.tools.md", renderMemoryBlock(v1, { memoryRoot, summary, dedicatedTools: true }))
    expectGolden("read_path.files.md", renderMemoryBlock(v1, { memoryRoot, summary, dedicatedTools: false }))
    expect(v1).toEqual(templates)
  })

  it("is recap-oriented: rollout summaries on demand, no handbook, the summary never cited", () => {
    const tools = renderMemoryBlock(v2, { memoryRoot: "/m", summary: recap, dedicatedTools: true })
    const files = renderMemoryBlock(v2, { memoryRoot: "/m", summary: recap, dedicatedTools: false })
    for (const block of [tools, files]) {
      expect(block).not.toContain("MEMORY.md")
      expect(block).not.toContain("skills/")
      expect(block).toContain("Never cite the recap itself (`memory_summary.md`)")
      expect(block).toContain("Make no tool call only to build a citation")
      expect(block).toContain("preferences and corrections recorded in it are binding")
      expect(block).toContain("----- MEMORY SUMMARY BEGINS -----\n" + recap + "\n----- MEMORY SUMMARY ENDS -----")
    }
    expect(tools).toContain("memory_add_note")
    expect(tools).toContain("memory_read")
    expect(files).not.toMatch(/memory_(read|search|add_note|list)/)
    expect(files).toContain("extensions/ad_hoc/notes/")
  })

  it("caps the summary at 2,500 tokens with a middle cut, as V1 does", () => {
    const long = `v1\nHEAD-MARK\n${"filler line\n".repeat(3000)}TAIL-MARK`
    const block = renderMemoryBlock(v2, { memoryRoot: "/m", summary: long, dedicatedTools: true })
    const inner = block.split("----- MEMORY SUMMARY BEGINS -----\n")[1]!.split("\n----- MEMORY SUMMARY ENDS -----")[0]!
    expect(inner).toBe(renderMemoryBlock(templates, { memoryRoot: "/m", summary: long, dedicatedTools: true }).split("----- MEMORY SUMMARY BEGINS -----\n")[1]!.split("\n----- MEMORY SUMMARY ENDS -----")[0]!)
    expect(inner).toMatch(/\[\.\.\. \d+ tokens truncated \.\.\.\]/)
    expect(Buffer.byteLength(inner)).toBeLessThan(10_000 + 64)
  })

  it("shows a citation example that the citation parser reads as a rollout summary and its session", () => {
    const block = renderMemoryBlock(v2, { memoryRoot: "/m", summary: recap, dedicatedTools: true })
    const example = /<memory-citation>[\s\S]*?<\/memory-citation>/.exec(block)![0]
    expect(extractCitations(`Done.\n\n${example}`)).toEqual({
      text: "Done.",
      citation: {
        entries: [{ path: "rollout_summaries/2026-03-02T10-11-12-aB3x-fix_flaky_ci.md", start: 5, end: 9, note: "the earlier fix for the flaky test" }],
        sessionIds: ["ses_0123456789abcdefABCDEF"],
      },
    })
  })
})
