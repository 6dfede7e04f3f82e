// `npm test` after the build: every test on the Node that runs npm, then the unit suite and the
// CLI's end-to-end tests again on Node 24, the current LTS line, and one closing line for all the
// runs (each run's own is test/summary-reporter.ts's). Node 24 and the Codex CLI are fetched first
// (test-partners.ts), so no test waits on the registry.
//
//   npm run build && node dist/scripts/test.js [--fetch-only]
import { spawn } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { ensureCodex, ensureNode24, NODE24_VERSION as VERSION } from "./test-partners.js"

const repo = fileURLToPath(new URL("../..", import.meta.url))

export interface Run {
  label: string
  node: string
  args: string[]
}

const SUMMARY = /^(\d+) passed, (\d+) failed, (\d+) skipped$/

/** Runs vitest, passing its output through as it comes, and returns its closing summary (test/summary-reporter.ts). */
export async function vitest(run: Run): Promise<{ status: number; counts?: [number, number, number] }> {
  console.log(`\n# ${run.label}: vitest run ${run.args.join(" ")}`)
  const child = spawn(run.node, [path.join(repo, "node_modules", "vitest", "vitest.mjs"), "run", ...run.args], { cwd: repo, stdio: ["inherit", "pipe", "inherit"] })
  // Only the tail is kept: the summary is the run's last line.
  let tail = ""
  child.stdout.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk)
    tail = (tail + chunk.toString("utf8")).slice(-4096)
  })
  const status = await new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)))
  const line = tail.trim().split("\n").reverse().find((text) => SUMMARY.test(text.trim()))
  const match = line ? SUMMARY.exec(line.trim()) : null
  return { status, ...(match ? { counts: [Number(match[1]), Number(match[2]), Number(match[3])] as [number, number, number] } : {}) }
}

async function main(): Promise<void> {
  const runs: Run[] = [{ label: `Node ${process.versions.node}`, node: process.execPath, args: [] }]
  // The Codex exchange's partner, before any test: a fetch inside a test would race its timeout.
  const codex = ensureCodex()
  const platform = `${process.platform}-${process.arch}`
  let skipped: string | undefined
  if (platform !== "linux-x64") skipped = `the pinned Node ${VERSION} binary is for linux-x64 (this is ${platform})`
  else if (process.versions.node.startsWith("24.")) skipped = `the first run was already on Node ${process.versions.node}`
  else {
    const node = ensureNode24()
    if (process.argv.includes("--fetch-only")) return void console.log(`${node}\n${codex}`)
    runs.push({ label: `Node ${VERSION}`, node, args: ["--project", "unit"] }, { label: `Node ${VERSION}`, node, args: ["--project", "e2e", "test/e2e/cli.test.ts"] })
  }
  const totals = [0, 0, 0]
  let failed = false
  const lines: string[] = []
  for (const run of runs) {
    const result = await vitest(run)
    const counts = result.counts ?? [0, 1, 0]
    counts.forEach((count, i) => (totals[i]! += count))
    failed ||= result.status !== 0
    lines.push(`${run.label}, vitest run ${run.args.join(" ") || "(every project)"}: ${counts[0]} passed, ${counts[1]} failed, ${counts[2]} skipped (exit ${result.status})`)
  }
  console.log(`\n${lines.join("\n")}${skipped ? `\nNode ${VERSION} runs skipped: ${skipped}` : ""}`)
  console.log(`${totals[0]} passed, ${totals[1]} failed, ${totals[2]} skipped`)
  process.exitCode = failed ? 1 : 0
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main()
