// Shared set-up for the conformance tests: one temp database per case, every job class on it,
// and one clock the case moves by hand (Codex's tests back-date rows with SQL instead; moving our
// injected clock is the same thing without touching the rows).
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { expect } from "vitest"
import { JOBS } from "../../src/constants.js"
import { openDatabase } from "../../src/store/database.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import { Phase2Jobs, type Phase2Claim, type Phase2ClaimOutcome } from "../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs, type Stage1Claim, type Stage1ClaimOutcome, type Stage1Output } from "../../src/store/stage1-jobs.js"
import { VersionStore } from "../../src/store/version-store.js"

export const HOUR = 60 * 60 * 1000
export const DAY = 24 * HOUR
/** Far enough from 0 that "N days ago" stays positive. */
export const START = 400 * DAY
/** Codex's tests pass 36_500 days when they mean "no unused-days window". */
export const NO_WINDOW_DAYS = 36_500

export interface Runtime {
  file: string
  db: SqlDatabase
  clock: { now: number }
  stage1: Stage1Jobs
  phase2: Phase2Jobs
  version: VersionStore
  catalog: MemoryStore
  /** Another connection to the same file, as a second OpenCode process would hold. */
  connect(): { stage1: Stage1Jobs; phase2: Phase2Jobs }
}

const opened: SqlDatabase[] = []

export function closeAll(): void {
  for (const db of opened.splice(0)) db.close()
}

export function runtime(): Runtime {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conformance-")), "memory.db")
  const clock = { now: START }
  const now = () => clock.now
  const open = () => {
    const { db } = openDatabase(file)
    opened.push(db)
    return db
  }
  const db = open()
  return {
    file,
    db,
    clock,
    stage1: new Stage1Jobs(db, now),
    phase2: new Phase2Jobs(db, now),
    version: new VersionStore("v1", db, now),
    catalog: new MemoryStore(db, now),
    connect() {
      const other = open()
      return { stage1: new Stage1Jobs(other, now), phase2: new Phase2Jobs(other, now) }
    },
  }
}

export const WORKER = { workerId: "worker-a", maxRunning: 64 }

export function output(raw: string, summary: string, slug: string | null = null, cwd: string | null = null): Stage1Output {
  return { rawMemory: raw, rolloutSummary: summary, slug, cwd }
}

export function claimed(outcome: Stage1ClaimOutcome): Stage1Claim {
  expect(outcome.type).toBe("claimed")
  return outcome as Stage1Claim
}

export function claimedPhase2(outcome: Phase2ClaimOutcome): Phase2Claim {
  expect(outcome.type).toBe("claimed")
  return outcome as Phase2Claim
}

/** Codex's recurring set-up: claim the session at `at` and store an output for it. */
export function persist(rt: Runtime, sessionId: string, at: number, out: Stage1Output = output(`raw-${at}`, `summary-${at}`)): void {
  const claim = claimed(rt.stage1.claim({ sessionId, updatedAt: at }, WORKER))
  expect(rt.stage1.succeed(sessionId, claim.token, out)).toBe(true)
}

/** A consolidation that consumed `sessions` at their current snapshots. */
export function consolidate(rt: Runtime, sessions: readonly string[]): void {
  const claim = claimedPhase2(rt.phase2.claim("worker-a"))
  expect(rt.phase2.succeed(claim.token, claim.watermark, snapshots(rt, sessions))).toBe(true)
}

export function snapshots(rt: Runtime, sessions: readonly string[]): Array<{ sessionId: string; sourceUpdatedAt: number }> {
  return sessions.map((sessionId) => ({ sessionId, sourceUpdatedAt: record(rt, sessionId)!.source_updated_at }))
}

export interface OutputRecord {
  session_id: string
  source_updated_at: number
  usage_count: number
  last_usage: number | null
  selected_for_phase2: number
  selected_for_phase2_source_updated_at: number | null
}

export function record(rt: Runtime, sessionId: string): OutputRecord | undefined {
  return rt.db.prepare("SELECT * FROM stage1_outputs WHERE session_id = $id").get<OutputRecord>({ id: sessionId })
}

export function phase2Row(rt: Runtime): { status: string; input_watermark: number | null; retry_remaining: number } | undefined {
  return rt.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $key").get({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY })
}

export function stage1Row(rt: Runtime, sessionId: string): { status: string; retry_remaining: number; input_watermark: number | null } | undefined {
  return rt.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $id").get({ kind: JOBS.STAGE1, id: sessionId })
}

export function count(rt: Runtime, sql: string, params: Params = {}): number {
  return Number(rt.db.prepare(sql).get<{ n: number }>(params)?.n ?? 0)
}
type Params = { [key: string]: string | number | null }

/** Usage as Codex's tests set it: straight into the row. */
export function setUsage(rt: Runtime, sessionId: string, usage: number, lastUsage: number | null): void {
  rt.db.prepare("UPDATE stage1_outputs SET usage_count = $usage, last_usage = $last WHERE session_id = $id").run({ id: sessionId, usage, last: lastUsage })
}
