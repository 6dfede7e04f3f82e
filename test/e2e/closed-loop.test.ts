// The closed loop on a real OpenCode: learn a fact from session A, show it to session B, forget
// it once session A is deleted. The scenario lives in support/closed-loop.ts (the demo runs it too).
import { describe, expect, it } from "vitest"
import { FACT, runClosedLoop } from "./support/closed-loop.js"
import { systemTexts, toolNames } from "./support/fake-llm.js"

describe("closed loop on a real OpenCode", () => {
  it("learns a fact, injects it into a new session, and forgets it after the session is deleted", async () => {
    const result = await runClosedLoop()
    expect(result.learnedSummary.split("\n")[0]).toBe("v1")
    expect(result.learnedSummary).toContain(FACT)
    expect(result.learnedHandbook).toContain(FACT)
    expect(result.injectedBlock).toContain("----- MEMORY SUMMARY BEGINS -----")
    expect(result.injectedBlock).toContain(FACT)
    expect(result.forgottenSummary).not.toContain("make ship")
    expect(result.factAfterForgetting).toBe(false)

    // The helpers' requests carry their own prompts instead of OpenCode's coding-agent prompt,
    // and still get OpenCode's environment block, the structured-output instruction and their tools.
    const { extraction, consolidation } = result.helperRequests
    const extractionSystem = systemTexts(extraction).join("\n")
    expect(toolNames(extraction)).toEqual(["StructuredOutput"])
    expect(extraction.tool_choice).toBe("required")
    expect(extractionSystem).toContain("You MUST use the StructuredOutput tool")
    expect(extractionSystem).toMatch(/^You are the memory extractor of opencode-codex-memory/)
    expect(extractionSystem).toContain("<env>")
    expect(extractionSystem).toContain("# Memory extraction")
    const consolidationSystem = systemTexts(consolidation).join("\n")
    expect(toolNames(consolidation).sort()).toEqual(["edit", "glob", "grep", "read", "write"])
    expect(consolidationSystem).toMatch(/^You are the memory consolidator of opencode-codex-memory/)
    expect(consolidationSystem).toContain("<env>")
    expect(consolidationSystem).toContain("# Memory consolidation")
    for (const request of [extraction, consolidation]) expect(JSON.stringify(request.messages)).not.toContain("You are opencode")
  })
})
