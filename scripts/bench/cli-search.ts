// The command-line tool's ranked search on the 20 MB folder (search.ts's workspace: 4,096 rollout
// summaries and a 1 MB MEMORY.md), beside a trivial command, each a new process of the built CLI
// (`node dist/src/cli/main.js`, the package's bin): what a search costs above starting the tool.
// The index is built once first. Runs are interleaved, so machine noise hits every series alike:
//   - `capabilities`, which opens nothing;
//   - `search --mode ranked` within FULL_SWEEP_MS of the previous search: the index's sweep stamp
//     (backend/ranked-search.ts) lets it lstat the folders and the files edited in place only;
//   - the same search once the stamp is FULL_SWEEP_MS old (moved back in the index, not waited
//     for): every rollout summary is lstat'ed too,
//     the price of D27's bound on how long an in-place edit of one goes unseen; printed without a
//     target (its floor is one lstat per file, about 30 ms for 4,096 in a new process).
// Every search must print the same results as the first one.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { FULL_SWEEP_MS } from "../../src/backend/ranked-search.js"
import { openDatabase } from "../../src/store/database.js"
import { openSqlite } from "../../src/store/sqlite.js"
import { median, type BenchResult, type Check } from "./measure.js"
import { writeWorkspace } from "./search.js"

const TARGET_MS = 60
const ROUNDS = 9
const QUERY = "how was the retry budget tuned"
const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url))

export async function benchCliSearch(): Promise<BenchResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-cli-search-"))
  const home = path.join(work, "home")
  const root = path.join(home, "memories")
  fs.mkdirSync(root, { recursive: true })
  // No user's config: the CLI reads OpenCode's global config from here, and finds none.
  const env = { ...process.env, HOME: work, XDG_CONFIG_HOME: path.join(work, "config"), XDG_DATA_HOME: path.join(work, "data") }
  const cli = (...args: string[]) => {
    const start = performance.now()
    const ran = spawnSync(process.execPath, [CLI, ...args, "--home", home], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    const ms = performance.now() - start
    if (ran.status !== 0) throw new Error(`opencode-codex-memory ${args.join(" ")} exited ${ran.status}: ${ran.stderr}`)
    return { ms, stdout: ran.stdout }
  }
  try {
    const bytes = writeWorkspace(root)
    // The folder at rest, as a search usually finds it (times older than the settle window).
    const old = new Date(Date.now() - 60_000)
    for (const relative of filesUnder(root)) fs.utimesSync(path.join(root, relative), old, old)
    openDatabase(path.join(home, "memory.db")).db.close()
    const search = () => cli("search", "--mode", "ranked", QUERY)
    const build = search()
    const expected = resultsOf(build.stdout)
    // Its folders were made just now: once they have settled, a search can stamp what it saw.
    await sleep(2_500)
    search()
    const indexMb = fs.statSync(path.join(home, "memory_index.db")).size / 1024 / 1024

    const trivial: number[] = []
    const recent: number[] = []
    const aged: number[] = []
    let same = (JSON.parse(expected) as unknown[]).length > 0
    for (let round = 0; round < ROUNDS; round++) {
      // Past the stamp's age limit, then a trivial command, then a search within it.
      // The stamp made FULL_SWEEP_MS old, as that much time would (ten minutes a round is too long to wait).
      ageStamp(path.join(home, "memory_index.db"))
      const stale = search()
      aged.push(stale.ms)
      trivial.push(cli("capabilities").ms)
      // A minute later, as a person types the next command.
      await sleep(50)
      const warm = search()
      recent.push(warm.ms)
      same &&= resultsOf(stale.stdout) === expected && resultsOf(warm.stdout) === expected
    }
    const base = median(trivial)
    const overRecent = median(recent) - base
    const overAged = median(aged) - base
    const checks: Check[] = [
      { kind: "condition", what: "every search printed the results of the first one", holds: same },
      { kind: "absolute", what: "ranked search above `capabilities`, within 10 min of the last full check (medians)", value: overRecent, unit: "ms", max: TARGET_MS },
    ]
    return {
      name: "the CLI's ranked search on a 20 MB folder, a new process each time, beside a trivial command",
      details: [
        `workspace     ${filesUnder(root).length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB; index ${indexMb.toFixed(1)} MB, built by the first search in ${(build.ms / 1000).toFixed(1)} s (no target); Node ${process.versions.node}`,
        `   capabilities                       ${base.toFixed(0)} ms median of ${trivial.length}`,
        `   search, last full check < ${FULL_SWEEP_MS / 60_000} min ago   ${median(recent).toFixed(0)} ms median of ${recent.length} (+${overRecent.toFixed(0)} ms)`,
        `   search, last full check ${FULL_SWEEP_MS / 60_000} min old     ${median(aged).toFixed(0)} ms median of ${aged.length} (+${overAged.toFixed(0)} ms; no target: every rollout summary is lstat'ed, at most once in ${FULL_SWEEP_MS / 60_000} min)`,
      ],
      checks,
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

/** Moves the index's sweep stamp FULL_SWEEP_MS into the past. */
function ageStamp(indexFile: string): void {
  const db = openSqlite(indexFile)
  try {
    const row = db.prepare("SELECT value FROM index_state WHERE key = 'sweep'").get() as { value: string } | undefined
    if (!row) throw new Error("the index holds no sweep stamp to age")
    const stamp = JSON.parse(row.value) as { at: number }
    db.prepare("UPDATE index_state SET value = $value WHERE key = 'sweep'").run({ value: JSON.stringify({ ...stamp, at: stamp.at - FULL_SWEEP_MS - 1_000 }) })
  } finally {
    db.close()
  }
}

/** The matches of a search's JSON answer, as text to compare. */
function resultsOf(stdout: string): string {
  const answer = JSON.parse(stdout) as { matches: Array<{ path: string; line: number; score: number }> }
  return JSON.stringify(answer.matches.map((m) => [m.path, m.line, m.score]))
}

function filesUnder(root: string, relative = ""): string[] {
  return fs.readdirSync(path.join(root, relative), { withFileTypes: true }).flatMap((entry) => {
    const child = relative ? `${relative}/${entry.name}` : entry.name
    return entry.isDirectory() ? filesUnder(root, child) : [child]
  })
}
