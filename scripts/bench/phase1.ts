// One phase-1 pass (discovery, eligibility, claim) over 10,000 sessions, in the two states that
// matter: a fresh home where everything is eligible, and a steady state where every session was
// already extracted and each must be found up to date. Discovery runs on an in-memory host
// (test/fakes/host.ts), so the figures leave out OpenCode's session listing over HTTP: they
// measure the plugin's own work on the sessions once listed.
import { v1Extraction } from "../../src/write/phase1/extraction-strategy.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Diagnostics } from "../../src/diagnostics.js"
import { parseOptions } from "../../src/options.js"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { loadExtractionTemplates } from "../../src/write/phase1/extract.js"
import { RateLimitBreaker } from "../../src/write/helpers/breaker.js"
import { Phase1 } from "../../src/write/phase1/phase1.js"
import { FakeHost } from "../../test/fakes/host.js"
import { median, type BenchResult } from "./measure.js"

const SESSIONS = 10_000
const RUNS = 7
const HOUR = 3_600_000
const TARGET_MS = 250

export async function benchPhase1(): Promise<BenchResult> {
  const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
  const now = Date.UTC(2026, 10, 30, 12)
  const fresh: number[] = []
  const steady: number[] = []
  for (let run = 0; run < RUNS; run++) {
    fresh.push(await timePass(templates, now, false))
    steady.push(await timePass(templates, now, true))
  }
  return {
    name: `phase 1: one discovery, eligibility and claim pass over ${SESSIONS.toLocaleString("en")} sessions (in-memory host)`,
    details: [
      "discovery lists the sessions from an in-memory host: no OpenCode server, no HTTP; the times are the plugin's own work",
      `fresh home: all eligible, 2 claimed and extracted; steady state: all already extracted, none claimed (${RUNS} runs each)`,
    ],
    checks: [
      { kind: "absolute", what: "median pass, fresh home", value: median(fresh), unit: "ms", max: TARGET_MS },
      { kind: "absolute", what: "median pass, steady state", value: median(steady), unit: "ms", max: TARGET_MS },
    ],
  }
}

async function timePass(templates: ReturnType<typeof loadExtractionTemplates>, now: number, extracted: boolean): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-p1-"))
  const { db } = openDatabase(path.join(dir, "memory.db"))
  const host = new FakeHost(() => now)
  const message = [{ info: { role: "user" }, parts: [{ type: "text", text: "fix the build" }] }]
  for (let i = 0; i < SESSIONS; i++) {
    // Ages spread over 12 days: some too fresh, some too old, most eligible.
    host.addSession({ id: `ses_${String(i).padStart(6, "0")}`, directory: `/projects/p${i % 40}`, updatedAt: now - 2 * HOUR - i * 100_000 }, message)
  }
  host.responder = () => ({ text: "", structured: { rollout_summary: "s", raw_memory: "r", rollout_slug: "x" } })
  const jobs = new Stage1Jobs(db, () => now)
  if (extracted) {
    const insert = db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, $at, 'r', 's', $at)")
    db.exec("BEGIN")
    for (const session of host.sessions.values()) insert.run({ id: session.id, at: session.updatedAt })
    db.exec("COMMIT")
  }
  const phase1 = new Phase1({
    host,
    options: parseOptions({}).options,
    now: () => now,
    diagnostics: new Diagnostics(host, () => now),
    strategy: v1Extraction(templates),
    memoryRoot: path.join(dir, "memories"),
    jobs: () => jobs,
    excludedSessions: () => new Set(),
    helperSessions: new Set(),
    extractionModel: () => undefined,
    workerId: "bench",
    breaker: new RateLimitBreaker(() => now),
  })
  const start = process.hrtime.bigint()
  const report = await phase1.pass()
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (report.type !== "done" || report.claimed !== (extracted ? 0 : 2)) throw new Error(`benchmark setup: unexpected pass ${JSON.stringify(report).slice(0, 200)}`)
  await phase1.dispose()
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return ms
}
