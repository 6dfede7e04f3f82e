// The closed loop on a real OpenCode: learn a fact from session A, show it to session B, forget
// it once session A is deleted. The scenario lives in support/closed-loop.ts (the demo runs it too).
import { describe, expect, it } from "vitest"
import { FACT, runClosedLoop } from "./support/closed-loop.js"

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
  })
})
