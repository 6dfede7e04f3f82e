// What one memory version learned, in that version's database (memory.db for V1, memory_v2.db for
// V2): its outputs and jobs as memory_inspect counts them, the usage citations add, the queueing a
// mode change or pollution causes, the reset, and (V2) readiness progress. The job rules
// themselves are in stage1-jobs.ts and phase2-jobs.ts. Each method is one short transaction.
import { JOBS } from "../constants.js"
import type { MemoryVersion } from "../util/paths.js"
import { immediate } from "./database.js"
import { keyOfSession, SEGMENT_SEPARATOR, sessionOfColumn } from "./record-keys.js"
import { leaseOwners, type LeaseOwners } from "./lease-owner.js"
import type { SqlDatabase } from "./sqlite.js"
import { queuePhase2 } from "./stage1-jobs.js"

export interface VersionCounts {
  outputs: number
  outputsUsed: number
  jobs: Array<{ kind: string; status: string; count: number }>
  /** Sessions whose learned text the next consolidation removes from the folder (the forget queue). */
  forgetting: number
  /** Records no consolidation has taken in yet, or changed since one did. */
  unconsolidated: number
}

export interface JobRow {
  kind: string
  job_key: string
  status: string
  lease_until: number | null
  retry_at: number | null
  retry_remaining: number
  last_error: string | null
  started_at: number | null
  finished_at: number | null
  last_success_at?: number | null
  owner_pid?: number | null
  owner_boot?: string | null
}

/** One stored extraction record, as the table keeps it. */
export interface RecordRow {
  session_id: string
  source_updated_at: number
  raw_memory: string
  rollout_summary: string
  rollout_slug: string | null
  cwd: string | null
  /** Null: no project, or recorded before projects were (migrations 12 and V2's 5). */
  project_key: string | null
  project_name: string | null
  generated_at: number
  usage_count: number
  last_usage: number | null
  selected_for_phase2: number
  selected_for_phase2_source_updated_at: number | null
}

/** What one version holds of a session, for the `sessions` list (session-list.ts). */
export interface SessionTrace {
  /** Its records (its own and its segments'), and the last activity the newest one covers. */
  records: number
  recordUpdatedAt: number | undefined
  /** Records no consolidation took in yet, or changed since. */
  unconsolidated: number
  /** The folder holds its text (the last consolidation consumed it). */
  consolidated: boolean
  /** Waiting in the forget queue for the next consolidation. */
  forgetting: boolean
  /** Its stage-1 job, if any: the newest of its own and its segments'. */
  job: { status: string; lastError: string | null; retryAt: number | null; retriesLeft: number } | undefined
}

export type ResetOutcome = { type: "reset"; outputs: number; jobs: number } | { type: "refused_consolidation_running"; leaseUntil: number }

export class VersionStore {
  constructor(
    readonly version: MemoryVersion,
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    private readonly owners: LeaseOwners = leaseOwners(),
  ) {}

  counts(): VersionCounts {
    const one = (sql: string) => Number(this.db.prepare(sql).get<{ n: number }>()?.n ?? 0)
    return {
      outputs: one("SELECT COUNT(*) AS n FROM stage1_outputs"),
      outputsUsed: one("SELECT COUNT(*) AS n FROM stage1_outputs WHERE usage_count > 0"),
      jobs: this.db
        .prepare("SELECT kind, status, COUNT(*) AS count FROM jobs GROUP BY kind, status ORDER BY kind, status")
        .all<{ kind: string; status: string; count: number }>(),
      forgetting: one("SELECT COUNT(*) AS n FROM forget_queue"),
      unconsolidated: one("SELECT COUNT(*) AS n FROM stage1_outputs WHERE selected_for_phase2 = 0 OR selected_for_phase2_source_updated_at IS NOT source_updated_at"),
    }
  }

  /** The sessions waiting to be forgotten by the next consolidation. */
  forgetQueue(): string[] {
    return this.db.prepare("SELECT session_id FROM forget_queue ORDER BY queued_at, session_id").all<{ session_id: string }>().map((row) => row.session_id)
  }

  phase2Job(): JobRow | undefined {
    return this.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $key").get<JobRow>({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY })
  }

  /** Most recent job failures, newest first. */
  recentJobErrors(limit: number): JobRow[] {
    return this.db
      .prepare("SELECT * FROM jobs WHERE last_error IS NOT NULL ORDER BY COALESCE(finished_at, started_at, 0) DESC LIMIT $limit")
      .all<JobRow>({ limit })
  }

  /** Stored records, newest first, a page at a time (the CLI's `view --all`). */
  records(offset: number, limit: number): RecordRow[] {
    return this.db
      .prepare("SELECT * FROM stage1_outputs ORDER BY source_updated_at DESC, session_id DESC LIMIT $limit OFFSET $offset")
      .all<RecordRow>({ limit: Math.max(0, Math.floor(limit)), offset: Math.max(0, Math.floor(offset)) })
  }

  /**
   * What identifies the records no consolidation has taken in yet: their sessions and versions.
   * It changes whenever one is stored, replaced, dropped or consolidated (the ranked index's check).
   */
  unconsolidatedFingerprint(): string {
    const rows = this.db
      .prepare("SELECT session_id, source_updated_at FROM stage1_outputs WHERE selected_for_phase2 = 0 OR selected_for_phase2_source_updated_at IS NOT source_updated_at ORDER BY session_id")
      .all<{ session_id: string; source_updated_at: number }>()
    return rows.map((row) => `${row.session_id}@${Number(row.source_updated_at)}`).join(",")
  }

  /** Records no consolidation has taken in yet (or changed since), newest first: the CLI's search covers them. */
  unconsolidatedRecords(): RecordRow[] {
    return this.db
      .prepare("SELECT * FROM stage1_outputs WHERE selected_for_phase2 = 0 OR selected_for_phase2_source_updated_at IS NOT source_updated_at ORDER BY source_updated_at DESC, session_id DESC")
      .all<RecordRow>()
  }

  /** Records per project, most first (records outside any project are not counted). */
  projectCounts(): Array<{ key: string; name: string; records: number }> {
    return this.db
      .prepare(
        `SELECT project_key AS key, MAX(project_name) AS name, COUNT(*) AS records FROM stage1_outputs
         WHERE project_key IS NOT NULL AND project_name IS NOT NULL GROUP BY project_key ORDER BY records DESC, key`,
      )
      .all<{ key: string; name: string; records: number }>()
      .map((row) => ({ key: row.key, name: row.name, records: Number(row.records) }))
  }

  /** A session's records: its own and those of the segments its compactions closed. */
  recordsOf(sessionId: string): RecordRow[] {
    return this.db.prepare(`SELECT * FROM stage1_outputs WHERE ${keyOfSession("session_id")} ORDER BY session_id`).all<RecordRow>({ id: sessionId })
  }

  /** The session's stage-1 jobs (its own and its segments'), for `recall`. */
  jobsOf(sessionId: string): JobRow[] {
    return this.db.prepare(`SELECT * FROM jobs WHERE kind IN ($stage1, $capture) AND ${keyOfSession("job_key")} ORDER BY job_key`).all<JobRow>({ id: sessionId, stage1: JOBS.STAGE1, capture: JOBS.CAPTURE })
  }

  /** Every session this version holds anything of, by session id (a few table scans: for the CLI and inspect). */
  sessionTraces(): Map<string, SessionTrace> {
    const traces = new Map<string, SessionTrace>()
    const of = (id: string) => {
      let trace = traces.get(id)
      if (!trace) traces.set(id, (trace = { records: 0, recordUpdatedAt: undefined, unconsolidated: 0, consolidated: false, forgetting: false, job: undefined }))
      return trace
    }
    const records = this.db
      .prepare(`SELECT ${sessionOfColumn("session_id")} AS id, COUNT(*) AS n, MAX(source_updated_at) AS updated,
                  SUM(selected_for_phase2 = 0 OR selected_for_phase2_source_updated_at IS NOT source_updated_at) AS pending
                FROM stage1_outputs GROUP BY id`)
      .all<{ id: string; n: number; updated: number; pending: number }>()
    for (const row of records) Object.assign(of(row.id), { records: Number(row.n), recordUpdatedAt: Number(row.updated), unconsolidated: Number(row.pending) })
    for (const row of this.db.prepare("SELECT session_id FROM consolidated_sessions").all<{ session_id: string }>()) of(row.session_id).consolidated = true
    for (const row of this.db.prepare("SELECT session_id FROM forget_queue").all<{ session_id: string }>()) of(row.session_id).forgetting = true
    const jobs = this.db
      .prepare(`SELECT ${sessionOfColumn("job_key")} AS id, status, last_error, retry_at, retry_remaining FROM jobs WHERE kind IN ($stage1, $capture)
                ORDER BY COALESCE(finished_at, started_at, 0)`)
      .all<{ id: string; status: string; last_error: string | null; retry_at: number | null; retry_remaining: number }>({ stage1: JOBS.STAGE1, capture: JOBS.CAPTURE })
    // Ordered oldest first, so the newest job of a session is the one kept.
    for (const row of jobs) {
      of(row.id).job = { status: row.status, lastError: row.last_error, retryAt: row.retry_at === null ? null : Number(row.retry_at), retriesLeft: Number(row.retry_remaining) }
    }
    return traces
  }

  /** Running jobs with their owners, for `status`. */
  runningJobs(): JobRow[] {
    return this.db.prepare("SELECT * FROM jobs WHERE status = 'running' ORDER BY kind, job_key").all<JobRow>()
  }

  /**
   * Cited sessions get usage_count + 1 and last_usage = now; unknown ids are ignored, as in Codex.
   * Returns how many records were bumped. A citation names a record, or a whole session: then every
   * segment of it counts. Each record counts once per call, even when the ids repeat it (the same id
   * twice, or a session and one of its segments): Codex's store would count a repeated id twice,
   * but its citation parser drops repeats first, so one citation counts a session once there too.
   */
  bumpUsage(sessionIds: readonly string[]): number {
    if (!sessionIds.length) return 0
    // One statement, so a record matched by several ids is still updated once.
    return this.db
      .prepare(
        `UPDATE stage1_outputs SET usage_count = usage_count + 1, last_usage = $now
         WHERE EXISTS (
           SELECT 1 FROM json_each($ids) AS cited
           WHERE stage1_outputs.session_id = cited.value
              OR substr(stage1_outputs.session_id, 1, length(cited.value) + 1) = cited.value || $separator
         )`,
      )
      .run({ now: this.now(), ids: JSON.stringify([...new Set(sessionIds)]), separator: SEGMENT_SEPARATOR }).changes
  }

  /**
   * A session moved into or out of the inputs (its mode crossed enabled/not enabled): phase 2 is
   * queued when this version holds a record of it, or, with `selectedOnly`, only when that record
   * was part of the last consolidation (pollution: only then does the folder hold something of it).
   */
  queueIfHasOutput(sessionId: string, options: { selectedOnly?: boolean } = {}): boolean {
    return immediate(this.db, () => {
      const condition = options.selectedOnly ? "AND selected_for_phase2 = 1" : ""
      const found = this.db.prepare(`SELECT 1 AS yes FROM stage1_outputs WHERE ${keyOfSession("session_id")} ${condition}`).get({ id: sessionId })
      if (found) queuePhase2(this.db, this.now())
      return found !== undefined
    })
  }

  /** The consolidation lease another process holds right now, if any (a reset is refused then). */
  liveConsolidation(): { leaseUntil: number } | undefined {
    const job = this.phase2Job()
    const now = this.now()
    // A consolidation whose process is gone (a closed window) no longer counts.
    if (job?.status !== "running" || (job.lease_until ?? 0) <= now || this.owners.isGone(job.owner_pid ?? null, job.owner_boot ?? null)) return undefined
    return { leaseUntil: job.lease_until ?? now }
  }

  /**
   * Forgets everything this version learned: outputs, jobs, the forget queue and readiness
   * progress. The phase-2 row is left finished now with no success, so nothing consolidates an
   * empty folder, and the first record learned after the reset (the reset epoch keeps older
   * sessions out, pipeline/reset-epoch) is consolidated without a cooldown. Refused while any
   * process holds a live consolidation lease; the check and the clearing share one transaction.
   */
  reset(): ResetOutcome {
    return immediate(this.db, () => {
      const now = this.now()
      const running = this.liveConsolidation()
      if (running) return { type: "refused_consolidation_running", leaseUntil: running.leaseUntil }
      const outputs = this.db.prepare("DELETE FROM stage1_outputs").run().changes
      const jobs = this.db.prepare("DELETE FROM jobs").run().changes
      this.db.prepare("DELETE FROM forget_queue").run()
      this.db.prepare("DELETE FROM consolidated_sessions").run()
      if (this.hasProgress()) this.db.prepare("DELETE FROM consolidation_progress").run()
      this.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, finished_at, last_success_at, retry_remaining, last_error)
           VALUES ($kind, $key, 'done', $now, NULL, $retries, NULL)`,
        )
        .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, now, retries: JOBS.RETRIES })
      return { type: "reset", outputs, jobs }
    })
  }

  /**
   * A successful consolidation consumed `sessions` distinct sessions: the readiness boundary is
   * the most any one success consumed. A no-op on a database without progress (V1).
   */
  recordConsolidated(sessions: number): void {
    if (!this.hasProgress()) return
    this.db
      .prepare(
        `INSERT INTO consolidation_progress (id, max_session_count, updated_at) VALUES (1, $n, $now)
         ON CONFLICT (id) DO UPDATE SET max_session_count = MAX(max_session_count, excluded.max_session_count),
           updated_at = CASE WHEN excluded.max_session_count > max_session_count THEN excluded.updated_at ELSE updated_at END`,
      )
      .run({ n: Math.max(0, Math.floor(sessions)), now: this.now() })
  }

  /** The most distinct sessions one successful consolidation consumed; 0 before any. */
  maxConsolidated(): number {
    if (!this.hasProgress()) return 0
    return Number(this.db.prepare("SELECT max_session_count AS n FROM consolidation_progress WHERE id = 1").get<{ n: number }>()?.n ?? 0)
  }

  private hasProgress(): boolean {
    return this.db.prepare("SELECT 1 AS yes FROM sqlite_master WHERE type = 'table' AND name = 'consolidation_progress'").get() !== undefined
  }
}
