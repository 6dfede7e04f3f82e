import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
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
