// The capture queue: one row per session whose compaction closed a segment that is not learned
// from yet. A compaction enqueues its session before anything can fail, so a capture that fails
// (the host unreachable, a model error) stays queued and is retried by a later pass after the
// phase-1 backoff; nothing is dropped. The row is only the reminder: each segment's extraction is
// an ordinary stage-1 job under the segment's own key (stage1-jobs.ts), which is what stops the
// same text from being extracted twice. Same lease and ownership rules as the other jobs.
import { randomUUID } from "node:crypto"
import { JOBS, STAGE_ONE } from "../constants.js"
import { immediate } from "./database.js"
import { leaseOwners, type LeaseOwners } from "./lease-owner.js"
import type { SqlDatabase } from "./sqlite.js"
import { cut } from "./stage1-jobs.js"

export interface CaptureClaim {
  sessionId: string
  token: string
  /** The queue's watermark when claimed: a compaction after it leaves the row pending. */
  watermark: number
}

interface Row {
  status: string
  lease_until: number | null
  retry_at: number | null
  retry_remaining: number
  owner_pid: number | null
  owner_boot: string | null
}

export class SegmentCaptures {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    private readonly owners: LeaseOwners = leaseOwners(),
  ) {}

  /** A compaction happened at `at`: the session's segments wait for capture, with fresh retries. */
  enqueue(sessionId: string, at: number): void {
    this.db
      .prepare(
        `INSERT INTO jobs (kind, job_key, status, retry_remaining, input_watermark)
         VALUES ($kind, $id, 'pending', $retries, $at)
         ON CONFLICT (kind, job_key) DO UPDATE SET
           status = CASE WHEN status = 'running' THEN 'running' ELSE 'pending' END,
           retry_at = CASE WHEN status = 'running' THEN retry_at ELSE NULL END,
           retry_remaining = $retries,
           input_watermark = MAX(COALESCE(input_watermark, 0) + 1, $at)`,
      )
      .run({ kind: JOBS.CAPTURE, id: sessionId, retries: JOBS.RETRIES, at })
  }

  /** Sessions whose capture could be claimed now, oldest queued first. */
  due(limit: number): string[] {
    const now = this.now()
    const rows = this.db
      .prepare(
        `SELECT job_key, status, lease_until, retry_at, retry_remaining, owner_pid, owner_boot FROM jobs
         WHERE kind = $kind AND status <> 'done' ORDER BY COALESCE(input_watermark, 0) ASC, job_key ASC`,
      )
      .all<Row & { job_key: string }>({ kind: JOBS.CAPTURE })
    return rows.filter((row) => this.claimable(row, now)).slice(0, Math.max(0, limit)).map((row) => row.job_key)
  }

  claim(sessionId: string, workerId: string): CaptureClaim | undefined {
    return immediate(this.db, () => {
      const row = this.db
        .prepare("SELECT status, lease_until, retry_at, retry_remaining, owner_pid, owner_boot, input_watermark FROM jobs WHERE kind = $kind AND job_key = $id")
        .get<Row & { input_watermark: number | null }>({ kind: JOBS.CAPTURE, id: sessionId })
      const now = this.now()
      if (!row || !this.claimable(row, now)) return undefined
      const token = randomUUID()
      this.db
        .prepare(
          `UPDATE jobs SET status = 'running', worker_id = $worker, ownership_token = $token, started_at = $now,
             lease_until = $lease, owner_pid = $pid, owner_boot = $boot
           WHERE kind = $kind AND job_key = $id`,
        )
        .run({ kind: JOBS.CAPTURE, id: sessionId, worker: workerId, token, now, lease: now + STAGE_ONE.JOB_LEASE_MS, pid: this.owners.self.pid, boot: this.owners.self.boot })
      return { sessionId, token, watermark: Number(row.input_watermark ?? 0) }
    })
  }

  /** Every closed segment is learned from (or has no retries left): done, unless a compaction came meanwhile. */
  finish(claim: CaptureClaim): boolean {
    return this.update(
      claim,
      `status = CASE WHEN COALESCE(input_watermark, 0) > $claimed THEN 'pending' ELSE 'done' END,
       finished_at = $now, last_success_at = $now, last_error = NULL, retry_at = NULL`,
      { claimed: claim.watermark },
    )
  }

  /** Some segment failed: retried after the phase-1 backoff, spending one of the row's retries. The caller redacts `error`. */
  fail(claim: CaptureClaim, error: string): boolean {
    const now = this.now()
    return this.update(
      claim,
      `status = 'failed', finished_at = $now, retry_at = $retryAt, last_error = $error, retry_remaining = MAX(retry_remaining - 1, 0)`,
      { retryAt: now + STAGE_ONE.RETRY_DELAY_MS, error: cut(error, STAGE_ONE.LAST_ERROR_MAX_CHARS) },
    )
  }

  /** Shutdown: back in the queue at once, nothing spent. */
  release(claim: CaptureClaim): boolean {
    return this.update(claim, "status = CASE WHEN last_error IS NULL THEN 'pending' ELSE 'failed' END, retry_at = $now", {})
  }

  /** The session is gone: nothing of it is captured any more. */
  forget(sessionId: string): void {
    this.db.prepare("DELETE FROM jobs WHERE kind = $kind AND job_key = $id").run({ kind: JOBS.CAPTURE, id: sessionId })
  }

  private update(claim: CaptureClaim, set: string, params: Record<string, string | number>): boolean {
    return (
      this.db
        .prepare(
          `UPDATE jobs SET ${set}, ownership_token = NULL, lease_until = NULL
           WHERE kind = $kind AND job_key = $id AND status = 'running' AND ownership_token = $token`,
        )
        .run({ kind: JOBS.CAPTURE, id: claim.sessionId, token: claim.token, now: this.now(), ...params }).changes > 0
    )
  }

  private claimable(row: Row, now: number): boolean {
    if (row.status === "pending") return true
    if (row.status === "failed") return row.retry_remaining > 0 && (row.retry_at ?? 0) <= now
    if (row.status === "running") return row.lease_until === null || row.lease_until <= now || this.owners.isGone(row.owner_pid, row.owner_boot)
    return false
  }
}
