// Phase-1 job rules (Codex: try_claim_stage1_job and the mark_stage1_job_* family). Every OpenCode
// process sharing the home runs these against one jobs table, so each claim and each multi-step
// change is one short IMMEDIATE transaction (single updates are atomic on their own), and every
// change after a claim proves ownership with the claim's token: a process whose lease ran out and
// was taken over can no longer write. A claim records its owner process, and a lease whose owner
// is gone (lease-owner.ts) counts as expired: it is taken over at once and holds no running slot.
import { randomUUID } from "node:crypto"
import { JOBS, STAGE_ONE } from "../constants.js"
import { immediate } from "./database.js"
import { leaseOwners, type LeaseOwners } from "./lease-owner.js"
import { sessionOfKey } from "./record-keys.js"
import type { SqlDatabase } from "./sqlite.js"

export interface Stage1Candidate {
  sessionId: string
  /** The session's time.updated: the watermark a claim records and a success covers. */
  updatedAt: number
}

export type Stage1ClaimOutcome =
  | { type: "claimed"; sessionId: string; token: string; watermark: number }
  /** A done job or a stored output already covers this watermark. */
  | { type: "skipped_up_to_date" }
  /** Another owner holds a live lease on this session (unexpired, and its owner not known to be gone). */
  | { type: "skipped_running" }
  /** Failed recently: retry_at is not reached and the session has no newer activity. */
  | { type: "skipped_retry_backoff" }
  /** No retries left and no newer activity. */
  | { type: "skipped_retry_exhausted" }
  /** The cross-process cap of running stage-1 jobs is reached. */
  | { type: "skipped_running_cap" }

export type Stage1Claim = Extract<Stage1ClaimOutcome, { type: "claimed" }>

export interface Stage1Output {
  rawMemory: string
  rolloutSummary: string
  slug: string | null
  cwd: string | null
  /** The host the session is in ("opencode1", "opencode2"): only that host may call it deleted. */
  host?: string
  /** The branch the session's folder had checked out (gitBranch), cleaned; absent outside a repository. */
  gitBranch?: string
  /** The project the session's folder belongs to (project-identity.ts), cleaned; absent when none. */
  project?: { key: string; name: string }
}

interface JobState {
  status: string
  lease_until: number | null
  retry_at: number | null
  retry_remaining: number
  input_watermark: number | null
  owner_pid: number | null
  owner_boot: string | null
}

export class Stage1Jobs {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    /** Whose claims these are, and whether another claim's owner is gone. */
    private readonly owners: LeaseOwners = leaseOwners(),
  ) {}

  /** Cheap check outside any transaction, to skip most up-to-date sessions before claiming. */
  isUpToDate(sessionId: string, updatedAt: number): boolean {
    const row = this.db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM stage1_outputs WHERE session_id = $id AND source_updated_at >= $at)
             OR EXISTS (SELECT 1 FROM jobs WHERE kind = $kind AND job_key = $id AND last_success_watermark >= $at) AS covered`,
      )
      .get<{ covered: number }>({ id: sessionId, at: updatedAt, kind: JOBS.STAGE1 })
    return Number(row?.covered ?? 0) === 1
  }

  /** Whether a stored output exists for the session (whatever its watermark). */
  hasOutput(sessionId: string): boolean {
    return this.db.prepare("SELECT 1 AS found FROM stage1_outputs WHERE session_id = $id").get({ id: sessionId }) !== undefined
  }

  /** Claims one session in a BEGIN IMMEDIATE transaction; repeats the up-to-date check inside. */
  claim(candidate: Stage1Candidate, options: { workerId: string; maxRunning: number }): Stage1ClaimOutcome {
    const { sessionId, updatedAt } = candidate
    return immediate(this.db, () => {
      const now = this.now()
      if (this.isUpToDate(sessionId, updatedAt)) return { type: "skipped_up_to_date" }
      const job = this.job(sessionId)
      if (job?.status === "running" && this.holds(job, now)) return { type: "skipped_running" }
      // Newer activity than the last claim restores the retries and skips the backoff.
      const newer = job === undefined || job.input_watermark === null || updatedAt > job.input_watermark
      if (job !== undefined && !newer) {
        if (job.retry_remaining <= 0) return { type: "skipped_retry_exhausted" }
        if (job.retry_at !== null && job.retry_at > now) return { type: "skipped_retry_backoff" }
      }
      if (this.countRunning(now) >= options.maxRunning) return { type: "skipped_running_cap" }
      const token = randomUUID()
      // retry_at is cleared so that a takeover after a crash (same watermark) is not held back by
      // a backoff this claim ignored.
      this.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at, lease_until, retry_at, retry_remaining, input_watermark,
                             owner_pid, owner_boot)
           VALUES ($kind, $id, 'running', $worker, $token, $now, $lease, NULL, $retries, $watermark, $pid, $boot)
           ON CONFLICT (kind, job_key) DO UPDATE SET
             status = 'running', worker_id = excluded.worker_id, ownership_token = excluded.ownership_token,
             started_at = excluded.started_at, lease_until = excluded.lease_until, retry_at = NULL,
             retry_remaining = excluded.retry_remaining, input_watermark = excluded.input_watermark,
             owner_pid = excluded.owner_pid, owner_boot = excluded.owner_boot, overflow_budgets = NULL`,
        )
        .run({
          kind: JOBS.STAGE1,
          id: sessionId,
          worker: options.workerId,
          token,
          now,
          lease: now + STAGE_ONE.JOB_LEASE_MS,
          retries: newer ? JOBS.RETRIES : (job?.retry_remaining ?? JOBS.RETRIES),
          watermark: updatedAt,
          pid: this.owners.self.pid,
          boot: this.owners.self.boot,
        })
      return { type: "claimed", sessionId, token, watermark: updatedAt }
    })
  }

  /**
   * Claims candidates in order (newest first is the caller's job) until `maxClaims` are claimed.
   * Each claim is its own short transaction, so other processes interleave between them. A claim
   * that throws (a full disk) ends the claiming: with claims made, they are returned and `onError`
   * hears the cause; with none, it throws.
   */
  claimMany(
    candidates: readonly Stage1Candidate[],
    options: { workerId: string; maxClaims: number; maxRunning: number; onError?: (error: unknown) => void },
  ): Stage1Claim[] {
    const claimed: Stage1Claim[] = []
    for (const candidate of candidates) {
      if (claimed.length >= options.maxClaims) break
      if (this.isUpToDate(candidate.sessionId, candidate.updatedAt)) continue
      let outcome: Stage1ClaimOutcome
      try {
        outcome = this.claim(candidate, options)
      } catch (error) {
        if (!claimed.length || !options.onError) throw error
        options.onError(error)
        break
      }
      if (outcome.type === "claimed") claimed.push(outcome)
      // Every later candidate would meet the same cap.
      else if (outcome.type === "skipped_running_cap") break
    }
    return claimed
  }

  /**
   * Success, in one transaction: the job is done at its claimed watermark, the output is stored
   * (an output from a newer watermark is never replaced; usage and phase-2 selection are kept),
   * and phase 2 is enqueued. Returns false, changing nothing, when the token no longer owns the job.
   * An empty result belongs in succeedNoOutput.
   */
  succeed(sessionId: string, token: string, output: Stage1Output): boolean {
    return immediate(this.db, () => {
      const now = this.now()
      const watermark = this.finish(sessionId, token, now)
      if (watermark === undefined) return false
      this.db
        .prepare(
          `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at, host, git_branch, project_key, project_name)
           VALUES ($id, $watermark, $raw, $summary, $slug, $cwd, $now, $host, $branch, $projectKey, $projectName)
           ON CONFLICT (session_id) DO UPDATE SET
             source_updated_at = excluded.source_updated_at, raw_memory = excluded.raw_memory,
             rollout_summary = excluded.rollout_summary, rollout_slug = excluded.rollout_slug,
             cwd = excluded.cwd, generated_at = excluded.generated_at, host = excluded.host,
             git_branch = excluded.git_branch, project_key = excluded.project_key, project_name = excluded.project_name
           WHERE excluded.source_updated_at >= stage1_outputs.source_updated_at`,
        )
        .run({
          id: sessionId,
          watermark,
          raw: output.rawMemory,
          summary: output.rolloutSummary,
          slug: output.slug,
          cwd: output.cwd,
          now,
          host: output.host ?? null,
          branch: output.gitBranch ?? null,
          projectKey: output.project?.key ?? null,
          projectName: output.project?.name ?? null,
        })
      // A closed segment's record covers what the session's open-segment record, taken before the
      // compaction, had learned from part of it: that older record goes, so nothing counts twice.
      const session = sessionOfKey(sessionId)
      if (session !== sessionId) {
        this.db.prepare("DELETE FROM stage1_outputs WHERE session_id = $session AND source_updated_at <= $watermark").run({ session, watermark })
      }
      queuePhase2(this.db, watermark)
      return true
    })
  }

  /** Nothing worth remembering: the job is done and any stored output is deleted; phase 2 is enqueued only if one was. */
  succeedNoOutput(sessionId: string, token: string): boolean {
    return immediate(this.db, () => {
      const watermark = this.finish(sessionId, token, this.now())
      if (watermark === undefined) return false
      const deleted = this.db.prepare("DELETE FROM stage1_outputs WHERE session_id = $id").run({ id: sessionId }).changes
      if (deleted > 0) queuePhase2(this.db, watermark)
      return true
    })
  }

  /**
   * Failure: the job waits out the retry delay, and spends a retry unless `spendRetry` is false
   * (a provider rate limit says nothing about the session). The caller redacts `error`.
   */
  fail(sessionId: string, token: string, error: string, options: { spendRetry?: boolean } = {}): boolean {
    const now = this.now()
    const changes = this.db
      .prepare(
        `UPDATE jobs SET status = 'failed', ownership_token = NULL, lease_until = NULL, finished_at = $now,
           retry_at = $retryAt, last_error = $error,
           retry_remaining = CASE WHEN $spend = 1 THEN MAX(retry_remaining - 1, 0) ELSE retry_remaining END
         WHERE kind = $kind AND job_key = $id AND status = 'running' AND ownership_token = $token`,
      )
      .run({
        kind: JOBS.STAGE1,
        id: sessionId,
        token,
        now,
        retryAt: now + STAGE_ONE.RETRY_DELAY_MS,
        error: cut(error, STAGE_ONE.LAST_ERROR_MAX_CHARS),
        spend: options.spendRetry === false ? 0 : 1,
      }).changes
    return changes > 0
  }

  /**
   * This run's request was too large for the model at each of `budgets` (tokens, in order), and is
   * being asked again with less: recorded on the owned job (jobs.overflow_budgets) as it happens,
   * kept whatever the run's outcome until the next claim. False when the token no longer owns it.
   */
  noteOverflow(sessionId: string, token: string, budgets: readonly number[]): boolean {
    return (
      this.db
        .prepare(`UPDATE jobs SET overflow_budgets = $budgets WHERE kind = $kind AND job_key = $id AND status = 'running' AND ownership_token = $token`)
        .run({ kind: JOBS.STAGE1, id: sessionId, token, budgets: JSON.stringify(budgets) }).changes > 0
    )
  }

  /**
   * Shutdown: gives the job back, claimable at once, with its retries untouched. A job that had
   * failed before this claim reads as failed again, so its last error stays visible.
   */
  release(sessionId: string, token: string): boolean {
    const changes = this.db
      .prepare(
        `UPDATE jobs SET status = CASE WHEN last_error IS NULL THEN 'pending' ELSE 'failed' END,
           ownership_token = NULL, lease_until = NULL, retry_at = $now
         WHERE kind = $kind AND job_key = $id AND status = 'running' AND ownership_token = $token`,
      )
      .run({ kind: JOBS.STAGE1, id: sessionId, token, now: this.now() }).changes
    return changes > 0
  }

  /** Live running stage-1 jobs across processes: lease not expired, owner not known to be gone. */
  runningCount(): number {
    return this.countRunning(this.now())
  }

  /**
   * Enqueues phase 2 (also when a session's memory is deleted later). A job that is not running
   * goes back to pending with its retry delay cleared; a running one keeps running. Either way the
   * input watermark moves strictly forward: to `watermark` if larger, else one past its old value,
   * so a consolidator comparing it at the end sees that input arrived while it ran, even input
   * from an older session. Cooldown, lease and token are never touched.
   */
  enqueuePhase2(watermark: number): void {
    immediate(this.db, () => queuePhase2(this.db, watermark))
  }

  /** Marks an owned running job done at its claimed watermark; undefined when `token` does not own it. */
  private finish(sessionId: string, token: string, now: number): number | undefined {
    const owned = this.db
      .prepare("SELECT input_watermark FROM jobs WHERE kind = $kind AND job_key = $id AND status = 'running' AND ownership_token = $token")
      .get<{ input_watermark: number | null }>({ kind: JOBS.STAGE1, id: sessionId, token })
    if (owned === undefined) return undefined
    const watermark = Number(owned.input_watermark ?? 0)
    this.db
      .prepare(
        `UPDATE jobs SET status = 'done', ownership_token = NULL, lease_until = NULL, retry_at = NULL, last_error = NULL,
           finished_at = $now, last_success_at = $now, last_success_watermark = $watermark
         WHERE kind = $kind AND job_key = $id`,
      )
      .run({ kind: JOBS.STAGE1, id: sessionId, now, watermark })
    return watermark
  }

  private job(sessionId: string): JobState | undefined {
    return this.db
      .prepare("SELECT status, lease_until, retry_at, retry_remaining, input_watermark, owner_pid, owner_boot FROM jobs WHERE kind = $kind AND job_key = $id")
      .get<JobState>({ kind: JOBS.STAGE1, id: sessionId })
  }

  /** Counted per owner, so that each owner's liveness is checked once however many leases it holds. */
  private countRunning(now: number): number {
    const owners = this.db
      .prepare(
        `SELECT owner_pid, owner_boot, COUNT(*) AS n FROM jobs WHERE kind = $kind AND status = 'running' AND lease_until > $now
         GROUP BY owner_pid, owner_boot`,
      )
      .all<{ owner_pid: number | null; owner_boot: string | null; n: number }>({ kind: JOBS.STAGE1, now })
    return owners.reduce((sum, owner) => (this.owners.isGone(owner.owner_pid, owner.owner_boot) ? sum : sum + Number(owner.n)), 0)
  }

  /** Whether a running job's lease still keeps others out. */
  private holds(job: JobState, now: number): boolean {
    return isLive(job.lease_until, now) && !this.owners.isGone(job.owner_pid, job.owner_boot)
  }
}

/**
 * The body of enqueuePhase2, for callers already inside a transaction (stage-1 successes here,
 * forgetting a session in phase2-jobs.ts). `keepBackoff`: the retry delay of a failed run stays
 * (forgetting: a consolidator that keeps failing is not run again for every deletion).
 */
export function queuePhase2(db: SqlDatabase, watermark: number, options: { keepBackoff?: boolean } = {}): void {
  db.prepare(
    `INSERT INTO jobs (kind, job_key, status, retry_remaining, input_watermark)
     VALUES ($kind, $key, 'pending', $retries, $watermark)
     ON CONFLICT (kind, job_key) DO UPDATE SET
       status = CASE WHEN status = 'running' THEN 'running' ELSE 'pending' END,
       retry_at = CASE WHEN status = 'running' OR $keep = 1 THEN retry_at ELSE NULL END,
       input_watermark = CASE
         WHEN input_watermark IS NULL OR excluded.input_watermark > input_watermark THEN excluded.input_watermark
         ELSE input_watermark + 1
       END`,
  ).run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, retries: JOBS.RETRIES, watermark, keep: options.keepBackoff ? 1 : 0 })
}

const isLive = (leaseUntil: number | null, now: number): boolean => leaseUntil !== null && leaseUntil > now

/** Cuts `text` to `max` UTF-16 units without splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max
  return text.slice(0, end)
}
