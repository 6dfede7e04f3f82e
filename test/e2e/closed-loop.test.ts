// The closed loop on a real OpenCode: learn a fact from session A, show it to session B, forget
// it once session A is deleted, for Memory V1 and for Memory V2. The scenario lives in
// support/closed-loop.ts (the demo runs it too).
import { describe, expect, it } from "vitest"
import { checkV2Summary } from "../../src/write/phase2/summary-v2.js"
import { FACT, runClosedLoop } from "./support/closed-loop.js"
import { systemTexts, toolNames } from "./support/fake-llm.js"

/** A sentence only each version's injected instructions carry (templates/read_path.md, templates/v2/read_path.md). */
const V1_BLOCK = "You have a long-term memory built from earlier OpenCode sessions"
const V2_BLOCK = "Below is a recap of this user's earlier OpenCode sessions"

describe("closed loop on a real OpenCode", () => {
  it("learns a fact, injects it into a new session, and forgets it after the session is deleted", async () => {
    const result = await runClosedLoop()
    expect(result.learnedSummary.split("\n")[0]).toBe("v1")
    expect(result.learnedSummary).toContain(FACT)
    expect(result.learnedHandbook).toContain(FACT)
    expect(result.injectedBlock).toContain("----- MEMORY SUMMARY BEGINS -----")
    expect(result.injectedBlock).toContain(V1_BLOCK)
    expect(result.injectedBlock).toContain(FACT)
    expect(result.forgottenSummary).not.toContain("make ship")
    expect(result.factAfterForgetting).toBe(false)
    // V2 was never turned on: it has no folder and no database.
    expect(result.idle.v2).toEqual({ folder: false, outputs: undefined })

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

  it('with version "v2": learns into memories_v2, injects the V2 recap into a new session, and forgets after deletion', async () => {
    const result = await runClosedLoop({ version: "v2" })
    expect(result.memoryRoot).toMatch(/memories_v2$/)
    // The one V2 artifact passes Codex's V2 check, and there is no handbook.
    expect(checkV2Summary(result.learnedSummary)).toEqual({ valid: true })
    expect(result.learnedSummary).toContain(FACT)
    expect(result.learnedHandbook).toBeUndefined()
    // The scripted consolidator copied its pointer from the diff: the entry names session A's file.
    const [file] = result.writers.v2!.rolloutFiles
    expect(result.writers.v2!.rolloutFiles).toHaveLength(1)
    expect(result.learnedSummary).toContain(`- rollout_summaries/${file} — ${FACT}; session=${result.sessionA}`)
    expect(result.injectedBlock).toContain(V2_BLOCK)
    expect(result.injectedBlock).not.toContain(V1_BLOCK)
    expect(result.injectedBlock).toContain(FACT)
    expect(checkV2Summary(result.forgottenSummary)).toEqual({ valid: true })
    expect(result.forgottenSummary).not.toContain("make ship")
    expect(result.factAfterForgetting).toBe(false)
    // V1 did not learn: no folder, and memory.db (the catalog) holds no V1 output.
    expect(result.idle.v1).toEqual({ folder: false, outputs: 0 })

    // The V2 helpers: a summary-only schema, and a consolidator asked for memory_summary.md alone.
    const { extraction, consolidation } = result.helperRequests
    const schema = JSON.stringify(extraction.tools)
    expect(schema).toContain("rollout_summary")
    expect(schema).not.toContain("raw_memory")
    expect(JSON.stringify(extraction.messages)).toContain("Return the JSON object: `rollout_summary` and `rollout_slug`.")
    const consolidationSystem = systemTexts(consolidation).join("\n")
    expect(consolidationSystem).toContain("# Memory consolidation (summary only)")
    expect(toolNames(consolidation).sort()).toEqual(["edit", "glob", "grep", "read", "write"])
  })
})
