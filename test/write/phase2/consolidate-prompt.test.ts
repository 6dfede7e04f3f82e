import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { loadConsolidationTemplates, loadConsolidationV2Templates, renderConsolidationPrompt, renderConsolidationV2Prompt } from "../../../src/write/phase2/consolidate-prompt.js"
import { V2_SUMMARY_HEADINGS } from "../../../src/write/phase2/summary-v2.js"
import { expectGolden } from "../../golden/golden.js"

const templates = loadConsolidationTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))

describe("consolidation prompt", () => {
  it("renders the first-run prompt byte for byte", () => {
    expectGolden("consolidation.init.md", renderConsolidationPrompt(templates, { memoryRoot: "/home/u/.local/share/opencode/memories", firstRun: true }))
  })

  it("renders the incremental prompt byte for byte", () => {
    expectGolden("consolidation.incremental.md", renderConsolidationPrompt(templates, { memoryRoot: "/home/u/.local/share/opencode/memories", firstRun: false }))
  })

  it("asks for the v1 first line, the 10,000-character limit and forgetting through deletions", () => {
    const prompt = renderConsolidationPrompt(templates, { memoryRoot: "/m", firstRun: false })
    expect(prompt).toContain("first line must be exactly `v1`")
    expect(prompt).toContain("at most 10,000 characters")
    expect(prompt).toContain("A deleted `rollout_summaries/*.md`")
  })
})

describe("consolidation prompt, Memory V2", () => {
  const v2 = loadConsolidationV2Templates(fileURLToPath(new URL("../../../templates", import.meta.url)))
  const root = "/home/u/.local/share/opencode/memories_v2"

  it("renders the first-run prompt byte for byte", () => {
    expectGolden("consolidation.v2.init.md", renderConsolidationV2Prompt(v2, { memoryRoot: root, firstRun: true }))
  })

  it("renders the incremental prompt byte for byte", () => {
    expectGolden("consolidation.v2.incremental.md", renderConsolidationV2Prompt(v2, { memoryRoot: root, firstRun: false }))
  })

  it("asks for exactly the summary V2 validation accepts, from rollout summaries and the diff only", () => {
    const prompt = renderConsolidationV2Prompt(v2, { memoryRoot: "/m", firstRun: false })
    for (const heading of V2_SUMMARY_HEADINGS) expect(prompt).toMatch(new RegExp(`^ *${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"))
    expect(prompt).toContain("The first line is exactly `v1`")
    expect(prompt).toContain("well under 10,000 bytes")
    expect(prompt).toContain("- rollout_summaries/<exact file name> — <one sentence: what the file holds and when it helps>; session=<session id>")
    expect(prompt).toContain("phase2_workspace_diff.md")
    expect(prompt).toContain("extensions/ad_hoc/notes/")
    expect(prompt).toContain("no `MEMORY.md`, no `skills/`")
    expect(prompt).not.toContain("raw_memories.md")
  })

  it("differs from V1 and leaves the V1 prompt as it was", () => {
    const input = { memoryRoot: "/m", firstRun: true }
    expect(renderConsolidationV2Prompt(v2, input)).not.toBe(renderConsolidationPrompt(templates, input))
    expect(renderConsolidationPrompt(templates, input)).toContain("raw_memories.md")
  })
})
