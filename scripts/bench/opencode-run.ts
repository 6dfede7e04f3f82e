// Wall time of a real `opencode run` for one prompt with the plugin, against the same without it:
// real binary, scripted model, alternating pairs so machine noise hits both sides alike. The figure
// is the median of the pairs' own ratios, which cancels the drift between minutes that a ratio of
// two medians kept (a run here varies by 10-20% from one minute to the next).
import { FakeLlm } from "../../test/e2e/support/fake-llm.js"
import { createSandbox, runOpencode, seedSummary, type Sandbox } from "../../test/e2e/support/opencode.js"
import { median, type BenchResult } from "./measure.js"

const PAIRS = 9

export async function benchOpencodeRun(): Promise<BenchResult> {
  const llm = await FakeLlm.start()
  const sandboxes: Sandbox[] = []
  try {
    const withPlugin = await createSandbox({ llmUrl: llm.url })
    const without = await createSandbox({ llmUrl: llm.url, plugins: [] })
    sandboxes.push(withPlugin, without)
    await seedSummary(withPlugin, `v1\n${"- a remembered fact about the user's projects\n".repeat(200)}`)
    const run = async (sandbox: Sandbox) => {
      const result = await runOpencode(sandbox, "say hello")
      if (result.code !== 0) throw new Error(`opencode run failed (${result.code}): ${result.stderr.slice(-2000)}`)
      return result.ms
    }
    // One warm-up each: the first start of a fresh sandbox creates OpenCode's database.
    await run(withPlugin)
    await run(without)
    const on: number[] = []
    const off: number[] = []
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternate which side goes first, so a slow moment does not always land on the same one.
      if (pair % 2 === 0) {
        on.push(await run(withPlugin))
        off.push(await run(without))
      } else {
        off.push(await run(without))
        on.push(await run(withPlugin))
      }
    }
    const ratio = median(on.map((ms, pair) => ms / off[pair]!))
    return {
      name: `opencode run, one prompt, ${PAIRS} alternating pairs (real binary, scripted model)`,
      details: [
        `with the plugin     median ${median(on).toFixed(0)} ms  [${on.map((ms) => ms.toFixed(0)).join(", ")}]`,
        `without the plugin  median ${median(off).toFixed(0)} ms  [${off.map((ms) => ms.toFixed(0)).join(", ")}]`,
      ],
      checks: [{ kind: "ratio", what: "median of each pair's wall time with the plugin", ratio, baseline: "the same `opencode run` without the plugin, in the same pair", max: 1.05 }],
    }
  } finally {
    for (const sandbox of sandboxes) await sandbox.cleanup()
    await llm.close()
  }
}
