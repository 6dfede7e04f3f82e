// The closed loop on a real OpenCode for Memory V2: learn a fact from session A, show it to
// session B, forget it once session A is deleted. The scenario lives in support/closed-loop.ts
// (the demo and the benchmarks run it too, on both host lines). V1's loop is checked in
// cli.test.ts, whose commands then read the home it left, and on 2.1.2 by scenarios.test.ts.
import { describe, expect, it } from "vitest"
import { checkV2Summary } from "../../src/write/phase2/summary-v2.js"
import { FACT, runClosedLoop, V1_BLOCK, V2_BLOCK } from "./support/closed-loop.js"
import { systemTexts, toolNames } from "./support/fake-llm.js"

describe("closed loop on a real OpenCode", () => {
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
