// The read-path hook's cost per model call with an unchanged 10 KB summary, next to a bare
// fs.statSync of the same file: the hook must stay in the noise of one stat.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import entry from "../../src/index.js"
import { nsPerCall, type BenchResult } from "./measure.js"

export async function benchReadPath(): Promise<BenchResult> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-rp-"))
  const summaryFile = path.join(home, "memories", "memory_summary.md")
  fs.mkdirSync(path.dirname(summaryFile), { recursive: true })
  const line = "- a remembered fact about a project, a preference or a command\n"
  fs.writeFileSync(summaryFile, `v1\n${line.repeat(Math.ceil(10_240 / line.length))}`.slice(0, 10_240))
  const client = { app: { log: () => Promise.resolve(true) } }
  const hooks = await entry.server({ client, directory: home, worktree: home } as never, { home } as never)
  const transform = hooks["experimental.chat.system.transform"]!
  const input = { sessionID: "ses_bench", model: {} as never }
  const base = "You are OpenCode."
  const hook = () => transform(input, { system: [base] })
  const probe = { system: [base] }
  await transform(input, probe)
  if (probe.system.length !== 2) throw new Error("benchmark setup: the hook injected no memory block")
  const stat = () => fs.statSync(summaryFile)

  // Warm both paths, then alternate the measurements so drift hits both alike.
  await nsPerCall(hook, 20_000, 1)
  await nsPerCall(stat, 20_000, 1)
  const hookNs: number[] = []
  const statNs: number[] = []
  for (let i = 0; i < 5; i++) {
    hookNs.push(await nsPerCall(hook, 20_000, 3))
    statNs.push(await nsPerCall(stat, 20_000, 3))
  }
  await hooks.dispose?.()
  fs.rmSync(home, { recursive: true, force: true })
  const hookMedian = hookNs.sort((a, b) => a - b)[2]!
  const statMedian = statNs.sort((a, b) => a - b)[2]!
  return {
    name: "read path: system-prompt hook per call, unchanged 10 KB summary",
    details: [`hook          ${(hookMedian / 1000).toFixed(2)} µs/call`, `fs.statSync   ${(statMedian / 1000).toFixed(2)} µs/call`],
    checks: [{ kind: "ratio", what: "hook per call", ratio: hookMedian / statMedian, baseline: "a bare fs.statSync of the same summary file", max: 3 }],
  }
}
