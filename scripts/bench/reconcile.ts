// Reconciliation over 10,000 sessions, beside the phase-1 pass it rides on. A memory home holds a
// record of each of 10,000 sessions (and checkpoints of 2,000) and the in-memory host lists them
// all: the steady state, where every session still exists, is what every background pass pays
// (the sweep of sessions kept out, what memory holds, the set difference with the listing). Then
// 25 of the sessions are deleted behind memory's back: the pass that finds them looks each one up
// and forgets it. The baseline is one phase-1 pass over the same listing, in the same home and run.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { Memory } from "../../src/memory.js"
import { FakeHost } from "../../test/fakes/host.js"
import { median, type BenchResult } from "./measure.js"

const SESSIONS = 10_000
const CHECKPOINTS = 2_000
const DELETED = 25
const RUNS = 7
const HOUR = 3_600_000

export async function benchReconcile(): Promise<BenchResult> {
  const steady: number[] = []
  const passes: number[] = []
  const finding: number[] = []
  let forgotten = 0
  for (let run = 0; run < RUNS; run++) {
    const result = await timeRun()
    steady.push(result.steadyMs)
    passes.push(result.passMs)
    finding.push(result.findingMs)
    forgotten = result.forgotten
  }
  const ratio = median(steady) / median(passes)
  return {
    name: `reconciliation: memory compared with the host's ${SESSIONS.toLocaleString("en")} sessions (in-memory host)`,
    details: [
      `${SESSIONS.toLocaleString("en")} records and ${CHECKPOINTS.toLocaleString("en")} checkpoints in memory.db; the listing comes from an in-memory host (no HTTP)`,
      `steady state: every session still listed; finding: ${DELETED} deleted behind memory's back, each looked up and forgotten (${RUNS} runs each)`,
      `median steady reconciliation ${median(steady).toFixed(1)} ms, phase-1 pass ${median(passes).toFixed(1)} ms, finding ${median(finding).toFixed(1)} ms`,
    ],
    checks: [
      { kind: "condition", what: `the finding pass forgot exactly the ${DELETED} deleted sessions`, holds: forgotten === DELETED },
      { kind: "ratio", what: "steady reconciliation", ratio, baseline: "one phase-1 pass over the same listing", max: 1 },
      { kind: "absolute", what: "median finding pass", value: median(finding), unit: "ms", max: 250 },
    ],
  }
}

async function timeRun(): Promise<{ steadyMs: number; passMs: number; findingMs: number; forgotten: number }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-rec-"))
  const now = Date.UTC(2026, 11, 1, 12)
  const host = new FakeHost(() => now)
  const memory = new Memory({ home }, { host, env: {}, homedir: home, now: () => now })
  try {
    await memory.start()
    const db = memory.catalog.store!.db
    const record = db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, $at, '- r', 's', $at)")
    const job = db.prepare("INSERT INTO jobs (kind, job_key, status, retry_remaining, last_success_watermark) VALUES ('memory_stage1', $id, 'done', 3, $at)")
    const checkpoint = db.prepare("INSERT INTO session_checkpoints (session_id, state, updated_at, host) VALUES ($id, '{}', $at, 'opencode1')")
    db.exec("BEGIN")
    for (let i = 0; i < SESSIONS; i++) {
      const id = `ses_${String(i).padStart(6, "0")}`
      const at = now - 2 * HOUR - i * 100_000
      host.addSession({ id, directory: `/projects/p${i % 40}`, updatedAt: at }, [])
      record.run({ id, at })
      job.run({ id, at })
      if (i < CHECKPOINTS) checkpoint.run({ id, at })
    }
    db.exec("COMMIT")
    const signal = new AbortController().signal

    const listing = await host.listRootSessions({ signal })
    let start = process.hrtime.bigint()
    const steady = await memory.reconcile(listing, signal)
    const steadyMs = Number(process.hrtime.bigint() - start) / 1e6
    if (steady.missing !== 0) throw new Error(`benchmark setup: ${steady.missing} sessions missing in the steady state`)

    // The pass reconciliation rides on: every session is listed and found up to date.
    start = process.hrtime.bigint()
    const pass = await memory.pipeline("v1").phase1!.pass()
    const passMs = Number(process.hrtime.bigint() - start) / 1e6
    if (pass.type !== "done" || pass.claimed !== 0) throw new Error(`benchmark setup: unexpected pass ${JSON.stringify(pass).slice(0, 200)}`)

    for (let i = 0; i < DELETED; i++) host.sessions.delete(`ses_${String(i * 97).padStart(6, "0")}`)
    const after = await host.listRootSessions({ signal })
    start = process.hrtime.bigint()
    const finding = await memory.reconcile(after, signal)
    const findingMs = Number(process.hrtime.bigint() - start) / 1e6
    return { steadyMs, passMs, findingMs, forgotten: finding.forgotten.length }
  } finally {
    await memory.dispose()
    fs.rmSync(home, { recursive: true, force: true })
  }
}
