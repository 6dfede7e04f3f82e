// The closed loop's learning time on the real OpenCode with the scripted model: from the message
// that makes session A's extraction start to its fact being in memory_summary.md.
import { runClosedLoop } from "../../test/e2e/support/closed-loop.js"
import { median, type BenchResult } from "./measure.js"

const RUNS = 3
const TARGET_MS = 6_000

export async function benchClosedLoop(): Promise<BenchResult> {
  const times: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const result = await runClosedLoop()
    if (result.factAfterForgetting || !result.injectedBlock.includes("make ship")) throw new Error("benchmark setup: the closed loop did not behave")
    times.push(result.learnMs)
  }
  const ms = median(times)
  return {
    name: "closed loop: session A eligible -> its fact in the summary (real OpenCode, scripted model)",
    details: [`${RUNS} runs  [${times.map((t) => t.toFixed(0)).join(", ")}] ms`],
    checks: [{ kind: "absolute", what: "median learning time", value: ms, unit: "ms", digits: 0, max: TARGET_MS }],
  }
}
