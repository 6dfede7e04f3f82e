// Phase 2's own work around the model call, over a full selection of 256 sessions: (a) a whole
// no-op run (claim, select, sync, status, validate, succeed), where nothing changed and no model
// is called, and (b) the baseline diff the consolidator receives after 20 files changed, next to
// a 100 KB MEMORY.md.
import { v1Consolidation } from "../../src/write/phase2/consolidation-strategy.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Diagnostics } from "../../src/diagnostics.js"
import { parseOptions } from "../../src/options.js"
import { openDatabase } from "../../src/store/database.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { loadConsolidationTemplates } from "../../src/write/phase2/consolidate-prompt.js"
import { resetBaseline, workspaceDiff, workspaceStatus } from "../../src/write/phase2/git-baseline.js"
import { RateLimitBreaker } from "../../src/write/helpers/breaker.js"
import { Phase2 } from "../../src/write/phase2/phase2.js"
import { FakeHost } from "../../test/fakes/host.js"
import { prepareWorkspace, syncInputs } from "../../src/write/phase2/workspace.js"
import { renderWorkspaceDiff } from "../../src/write/phase2/workspace-diff.js"
import { rolloutSummaryStem, type WorkspaceInput } from "../../src/write/phase2/workspace-files.js"
import { median, type BenchResult } from "./measure.js"

const INPUTS = 256
const CHANGED = 20
const RUNS = 15
const NOOP_MS = 300
const DIFF_MS = 1_000

export async function benchPhase2(): Promise<BenchResult> {
  const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
  const now = () => Date.UTC(2026, 10, 30, 12)
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-p2-")), "memories")
  const inputs = Array.from({ length: INPUTS }, (_, i) => input(i, now()))
  await prepareWorkspace(root, { templatesDir, now })
  await syncInputs(root, inputs, { now })
  const fact = "- a remembered fact about a project, a preference or a command that worked\n"
  fs.writeFileSync(path.join(root, "MEMORY.md"), fact.repeat(Math.ceil(100_000 / fact.length)))
  fs.writeFileSync(path.join(root, "memory_summary.md"), "v1\n## User profile\nA developer.\n")
  await resetBaseline(root, now)

  const noop = await timeNoOpRuns(templatesDir, inputs)

  // 19 summaries rewritten and MEMORY.md edited in its middle, as after a day of sessions.
  for (const i of Array.from({ length: CHANGED - 1 }, (_, k) => k * 13)) {
    const file = path.join(root, "rollout_summaries", `${rolloutSummaryStem(inputs[i]!)}.md`)
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("step 3", "step 3, revised after a retry"))
  }
  const memory = fs.readFileSync(path.join(root, "MEMORY.md"), "utf8")
  fs.writeFileSync(path.join(root, "MEMORY.md"), `${memory.slice(0, 50_000)}- a new fact\n${memory.slice(50_000)}`)
  const diffs: number[] = []
  let diffBytes = 0
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint()
    const changes = await workspaceStatus(root)
    const text = renderWorkspaceDiff(changes, await workspaceDiff(root, changes))
    diffs.push(Number(process.hrtime.bigint() - start) / 1e6)
    if (changes.length !== CHANGED) throw new Error(`benchmark setup: expected ${CHANGED} changes, found ${changes.length}`)
    diffBytes = Buffer.byteLength(text)
  }
  fs.rmSync(path.dirname(root), { recursive: true, force: true })

  const a = median(noop)
  const b = median(diffs)
  return {
    name: `phase 2: workspace over ${INPUTS} selected sessions (no model call)`,
    details: [
      `no-op Phase2.run (claim ... succeed, no model)   median ${a.toFixed(1)} ms`,
      `${CHANGED}-file diff (status, diff, render)            median ${b.toFixed(1)} ms (${(diffBytes / 1024).toFixed(1)} KB)`,
    ],
    checks: [
      { kind: "absolute", what: "median no-op Phase2.run", value: a, unit: "ms", max: NOOP_MS },
      { kind: "absolute", what: `median ${CHANGED}-file diff`, value: b, unit: "ms", max: DIFF_MS },
    ],
  }
}

function input(i: number, now: number): WorkspaceInput {
  const id = `ses_${String(i).padStart(6, "0")}`
  const steps = Array.from({ length: 40 }, (_, k) => `- step ${k}: ran the build for ${id}, read the failing test and fixed the import path\n`).join("")
  return {
    sessionId: id,
    sourceUpdatedAt: now - i * 3_600_000,
    rawMemory: `- ${id} prefers pnpm; the acme-api deploy needs AWS_PROFILE=staging\n`.repeat(20),
    rolloutSummary: `# Fixing the build in project ${i % 12}\n\n${steps}`,
    slug: `fix build ${i}`,
    cwd: `/home/dev/project-${i % 12}`,
  }
}

/** Whole Phase2.run() calls against a database of 256 outputs that were consolidated once already. */
async function timeNoOpRuns(templatesDir: string, inputs: readonly WorkspaceInput[]): Promise<number[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-p2run-"))
  const root = path.join(dir, "memories")
  let clock = Date.UTC(2026, 10, 30, 12)
  const { db } = openDatabase(path.join(dir, "memory.db"))
  const insert = db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ($id, $t, $raw, $summary, $slug, $cwd, $t)",
  )
  for (const i of inputs) insert.run({ id: i.sessionId, t: clock - 3_600_000, raw: i.rawMemory, summary: i.rolloutSummary, slug: i.slug, cwd: i.cwd })
  const host = new FakeHost(() => clock)
  host.responder = (_id, prompt) => {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# Task group: builds\n- fixed imports\n")
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n## User profile\nA developer.\n")
    return { text: "done" }
  }
  const phase2 = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    strategy: v1Consolidation(loadConsolidationTemplates(templatesDir)),
    templatesDir,
    memoryRoot: root,
    jobs: () => new Phase2Jobs(db, () => clock),
    excludedSessions: () => new Set(),
    helperSessions: new Set(),
    consolidationModel: () => undefined,
    onConsolidated: () => undefined,
    breaker: new RateLimitBreaker(() => clock),
    workerId: "bench",
  })
  const queue = () => new Stage1Jobs(db, () => clock).enqueuePhase2(clock)
  queue()
  const first = await phase2.run()
  if (first.type !== "succeeded") throw new Error(`benchmark setup: the first consolidation ended ${JSON.stringify(first)}`)
  const times: number[] = []
  for (let run = 0; run < RUNS; run++) {
    clock += 7 * 3_600_000 // past the cooldown
    queue()
    const start = process.hrtime.bigint()
    const outcome = await phase2.run()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
    if (outcome.type !== "succeeded_no_changes") throw new Error(`benchmark setup: the no-op run ended ${JSON.stringify(outcome)}`)
  }
  if (host.prompts.length !== 1) throw new Error("benchmark setup: a no-op run called the model")
  await phase2.dispose()
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return times
}
