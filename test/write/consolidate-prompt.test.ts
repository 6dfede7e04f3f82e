import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { loadConsolidationTemplates, renderConsolidationPrompt } from "../../src/write/consolidate-prompt.js"
import { expectGolden } from "../golden/golden.js"

const templates = loadConsolidationTemplates(fileURLToPath(new URL("../../templates", import.meta.url)))

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
