// Peak memory of rendering ~100 MB sessions for phase 1 (the shapes of
// scripts/check-transcript-memory.ts), each in a fresh Node process.
import { TARGET_GROWTH_MB, measureInChildren } from "../check-transcript-memory.js"
import type { BenchResult } from "./measure.js"

export async function benchTranscriptMemory(): Promise<BenchResult> {
  const results = measureInChildren()
  const worst = Math.max(...results.map((result) => result.peakGrowthMB))
  return {
    name: "transcript memory: peak RSS growth while rendering ~100 MB sessions",
    details: results.map(
      (m) => `${m.shape.padEnd(13)} ${m.inputMB.toFixed(0)} MB of text: +${m.peakGrowthMB.toFixed(1)} MB (${m.method}), ${m.renderMs.toFixed(0)} ms`,
    ),
    checks: [{ kind: "absolute", what: "largest peak RSS growth over the shapes", value: worst, unit: "MB", max: TARGET_GROWTH_MB }],
  }
}
