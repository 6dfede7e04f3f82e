// Phase-2 job rules (Codex: try_claim_global_phase2_job, the mark_global_phase2_job_* family,
// get_phase2_input_selection, delete_thread_memory and prune_stage1_outputs_for_retention). One
// global row serialises consolidation across every OpenCode process sharing the home: a claim is
// one IMMEDIATE transaction, and every change after it proves ownership with the claim's token,
// so a consolidator whose lease was taken over can no longer write. A claim records its owner
// process, and a lease whose owner is gone (lease-owner.ts) counts as expired.
//
// As in Codex, a claim needs nothing queued: whether there is work is decided afterwards, by
// comparing the inputs the workspace would get with the git baseline. The queue (status
// 'pending', input_watermark) says that something changed since the last look; a check that found
// nothing to do leaves the row 'done' with finished_at = the check, and without a queued change
// the next check waits as long as Codex's cooldown would after its no-op success (6 h), while a
// queued change is looked at as soon as the last real consolidation's cooldown allows.
import { randomUUID } from "node:crypto"
import { JOBS, STAGE_TWO } from "../constants.js"
import { immediate } from "./database.js"
import { keyOfSession, sessionOfColumn, sessionOfKey } from "./record-keys.js"
import { leaseOwners, type LeaseOwners } from "./lease-owner.js"
import type { SqlDatabase } from "./sqlite.js"
import { cut, queuePhase2 } from "./stage1-jobs.js"
import { capRecord } from "./record-caps.js"
import { estimateTokens } from "../util/token-estimate.js"

export type Phase2ClaimOutcome =
  | { type: "claimed"; token: string; watermark: number }
  /** A check found nothing to do less than 6 h ago, and nothing was queued since. */
  | { type: "skipped_unchanged"; until: number }
  /** Another owner holds a live lease (unexpired, and its owner not known to be gone). */
  | { type: "skipped_running" }
  /** The last clean success is less than 6 h old. */
  | { type: "skipped_cooldown"; until: number }
  /** A failure's retry delay is not over. */
  | { type: "skipped_retry_backoff"; until: number }

export type Phase2Claim = Extract<Phase2ClaimOutcome, { type: "claimed" }>

/** One stage-1 output as phase 2 consumes it. */
export interface Phase2Input {
  sessionId: string
  sourceUpdatedAt: number
  rawMemory: string
  rolloutSummary: string
  slug: string | null
  cwd: string | null
  /** The session folder's git branch when the record was made, or null. */
  gitBranch: string | null
  /** The project the record was made in (key and name), or null: none, or recorded before projects. */
  projectKey: string | null
  projectName: string | null
  usageCount: number
  lastUsage: number | null
  generatedAt: number
}

/** The snapshot a consolidation read: an output is identified by its session and its version. */
export interface Phase2Snapshot {
  sessionId: string
  sourceUpdatedAt: number
}

interface JobState {
  status: string
  lease_until: number | null
  retry_at: number | null
  input_watermark: number | null
  finished_at: number | null
  last_success_at: number | null
  owner_pid: number | null
  owner_boot: string | null
}

interface OutputRow {
  session_id: string
  source_updated_at: number
  raw_memory: string
  rollout_summary: string
  rollout_slug: string | null
  cwd: string | null
  git_branch: string | null
  project_key: string | null
  project_name: string | null
  usage_count: number
  last_usage: number | null
  generated_at: number
}

const DAY_MS = 24 * 60 * 60 * 1000
/** What trim() removes when deciding that an output is blank (SQLite's default is spaces only). */
const BLANK = " \t\r\n"
/** The global row's key, and the condition every change after a claim adds to it. */
const ROW = Object.freeze({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY })
const OWNED = "WHERE kind = $kind AND job_key = $key AND status = 'running' AND ownership_token = $token"

export class Phase2Jobs {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    /** Whose claims these are, and whether another claim's owner is gone. */
    private readonly owners: LeaseOwners = leaseOwners(),
  ) {}

  /**
   * BEGIN IMMEDIATE. Claims the global job: status running, new token, lease now + 1 h, worker id
   * and owner. A running row whose owner process is gone is taken over as if its lease had expired.
   * A missing row is created already claimed (Codex does the same): nothing has to be queued.
   */
  claim(workerId: string): Phase2ClaimOutcome {
    return immediate(this.db, () => {
      const now = this.now()
      const token = randomUUID()
      const owner = { worker: workerId, token, now, lease: now + STAGE_TWO.JOB_LEASE_MS, pid: this.owners.self.pid, boot: this.owners.self.boot }
      const job = this.job()
      if (job === undefined) {
        this.db
          .prepare(
            `INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at, lease_until, retry_remaining, input_watermark, owner_pid, owner_boot)
             VALUES ($kind, $key, 'running', $worker, $token, $now, $lease, $retries, 0, $pid, $boot)`,
          )
          .run({ ...ROW, ...owner, retries: JOBS.RETRIES })
        return { type: "claimed", token, watermark: 0 }
      }
      const skipped = this.skipped(job, now)
      if (skipped) return skipped
      // last_error stays visible until a success, as in phase 1.
      this.db
        .prepare(
          `UPDATE jobs SET status = 'running', worker_id = $worker, ownership_token = $token, started_at = $now,
             lease_until = $lease, retry_at = NULL, owner_pid = $pid, owner_boot = $boot, overflow_budgets = NULL
           WHERE kind = $kind AND job_key = $key`,
        )
        .run({ ...ROW, ...owner })
      return { type: "claimed", token, watermark: Number(job.input_watermark ?? 0) }
    })
  }

  /**
   * Why a claim now would be skipped, if it would, read without a transaction or a write: a look ahead, so work
   * that should precede a claim (reconciliation) is done only when one is coming. The claim itself
   * decides again.
   */
  wouldSkip(): Exclude<Phase2ClaimOutcome, Phase2Claim> | undefined {
    const job = this.job()
    return job === undefined ? undefined : this.skipped(job, this.now())
  }

  /** Why the job cannot be claimed now, if it cannot (claim's rules). */
  private skipped(job: JobState, now: number): Exclude<Phase2ClaimOutcome, Phase2Claim> | undefined {
    const held = job.lease_until !== null && job.lease_until > now && !this.owners.isGone(job.owner_pid, job.owner_boot)
    if (job.status === "running" && held) return { type: "skipped_running" }
    if (job.retry_at !== null && job.retry_at > now) return { type: "skipped_retry_backoff", until: job.retry_at }
    // Measured from the last clean success, whatever happened since: a pending row is held back
    // too, or every phase-1 success would start a consolidation. Forgetting waits only minutes:
    // a user who deletes a session wants its facts out of the next conversations, not tomorrow's.
    const forgetting = this.hasPendingForgets()
    const wait = forgetting ? JOBS.FORGET_INTERVAL_MS : JOBS.PHASE2_COOLDOWN_MS
    const cooledAt = job.last_success_at === null ? undefined : job.last_success_at + wait
    if (cooledAt !== undefined && cooledAt > now) return { type: "skipped_cooldown", until: cooledAt }
    // 'done' means nothing was queued since the last success or check: look again only after 6 h
    // (ageing out of the window, resources expiring and hand edits queue nothing).
    const recheckAt = !forgetting && job.status === "done" && job.finished_at !== null ? job.finished_at + JOBS.PHASE2_COOLDOWN_MS : undefined
    if (recheckAt !== undefined && recheckAt > now) return { type: "skipped_unchanged", until: recheckAt }
    return undefined
  }

  /**
   * Something the workspace would show changed outside phase 1 (a note was added): queue a look,
   * which a check that found nothing recently no longer holds back. The cooldown still applies.
   */
  enqueue(watermark: number = this.now()): void {
    immediate(this.db, () => queuePhase2(this.db, watermark))
  }

  /** Extends the lease by 1 h if the token still owns the running job; false means ownership was lost. */
  heartbeat(token: string): boolean {
    return this.owned(token, "lease_until = $lease", { lease: this.now() + STAGE_TWO.JOB_LEASE_MS })
  }

  /**
   * Codex's selection: non-blank outputs of sessions not in `excluded` (the sessions whose mode is
   * not enabled, from the catalog in memory.db), used or, if never used, updated within
   * `maxUnusedDays`; ranked by usage, then recency; the top `limit`, returned in ascending session
   * id order so that a change of rank does not reorder the files phase 2 writes. The modes live in
   * another database for V2, so the excluded ids come in as one JSON parameter and are filtered in
   * the same query (Codex pages through candidates instead).
   *
   * Not in Codex: the selection also stops, in rank order, before the raw memories and summaries
   * taken together pass `maxTokens` (estimated by util/token-estimate.ts on the capped records, so
   * text that tokenizes densely, hex or base64, counts for what it costs; phase 2 derives the budget
   * from the consolidation model's window, STAGE_TWO.DEFAULT_INPUT_TOKENS without one), so the
   * consolidator's input is bounded however large the records are; the records left out are the
   * least used and oldest. SQL ranks and limits; the running sum is taken here over the ranked rows.
   */
  selectInputs(limit: number, maxUnusedDays: number, excluded: ReadonlySet<string> = new Set(), maxTokens: number = STAGE_TWO.DEFAULT_INPUT_TOKENS): Phase2Input[] {
    // A negative LIMIT would mean no limit to SQLite.
    const top = Math.max(0, Math.floor(limit))
    if (top === 0) return []
    const rows = this.db
      .prepare(
        `SELECT o.session_id, o.source_updated_at, o.raw_memory, o.rollout_summary, o.rollout_slug, o.cwd, o.git_branch,
                o.project_key, o.project_name, o.usage_count, o.last_usage, o.generated_at
         FROM stage1_outputs AS o
         WHERE ${sessionOfColumn("o.session_id")} NOT IN (SELECT value FROM json_each($excluded))
           AND (trim(o.raw_memory, $blank) <> '' OR trim(o.rollout_summary, $blank) <> '')
           AND (o.last_usage >= $cutoff OR (o.last_usage IS NULL AND o.source_updated_at >= $cutoff))
         ORDER BY o.usage_count DESC, COALESCE(o.last_usage, o.source_updated_at) DESC, o.source_updated_at DESC, o.session_id DESC
         LIMIT $top`,
      )
      .all<OutputRow>({ blank: BLANK, cutoff: this.cutoff(maxUnusedDays), top, excluded: JSON.stringify([...excluded]) })
    const budget = Math.max(0, Math.floor(maxTokens))
    const chosen: Phase2Input[] = []
    let total = 0
    for (const row of rows) {
      // Records stored before the caps existed are held to them here, as new ones are when stored.
      const capped = capRecord(row.raw_memory, row.rollout_summary)
      total += estimateTokens(capped.rawMemory) + estimateTokens(capped.rolloutSummary)
      if (total > budget) break
      chosen.push({
        sessionId: row.session_id,
        sourceUpdatedAt: Number(row.source_updated_at),
        rawMemory: capped.rawMemory,
        rolloutSummary: capped.rolloutSummary,
        slug: row.rollout_slug,
        cwd: row.cwd,
        gitBranch: row.git_branch,
        projectKey: row.project_key,
        projectName: row.project_name,
        usageCount: Number(row.usage_count),
        lastUsage: row.last_usage === null ? null : Number(row.last_usage),
        generatedAt: Number(row.generated_at),
      })
    }
    // Session id order, as SQLite's BINARY collation compares them (UTF-8 bytes).
    return chosen.sort((a, b) => Buffer.compare(Buffer.from(a.sessionId), Buffer.from(b.sessionId)))
  }

  /**
   * True when some output was ever consolidated or a clean success exists. Phase 2 uses it to
   * leave the folder alone, and start no cooldown, on an empty first run.
   */
  hasConsolidatedBefore(): boolean {
    const row = this.db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM stage1_outputs WHERE selected_for_phase2 = 1)
             OR EXISTS (SELECT 1 FROM jobs WHERE kind = $kind AND job_key = $key AND last_success_at IS NOT NULL) AS consolidated`,
      )
      .get<{ consolidated: number }>(ROW)
    return Number(row?.consolidated ?? 0) === 1
  }

  /**
   * Success, in one transaction: the job finishes cleanly (which starts the cooldown), and the
   * consumed snapshots become the selection the next run is compared with. Input enqueued while
   * this run worked (input_watermark above the claimed one) leaves the job pending. A consumed
   * output that phase 1 refreshed meanwhile is marked with the snapshot that was read, so the
   * next run sees it as changed (Codex matches the exact snapshot and would drop it from the
   * selection, leaving it unprotected from pruning and forgetting). Returns false, changing
   * nothing, when the token no longer owns the job.
   */
  succeed(token: string, claimedWatermark: number, consumed: ReadonlyArray<Phase2Snapshot>, selectedAt?: number): boolean {
    return immediate(this.db, () => {
      if (!this.ownedBy(token)) return false
      this.settleForgets(selectedAt)
      const now = this.now()
      const newest = consumed.reduce((max, snapshot) => Math.max(max, snapshot.sourceUpdatedAt), claimedWatermark)
      // The learning cooldown restarts only when a run took in a record the last one had not: a
      // run for a note or a forgetting alone keeps the earlier start, so the sessions extracted
      // after it are not held back six more hours by it.
      const learned = this.takesInNew(consumed) ? 1 : 0
      this.db
        .prepare(
          `UPDATE jobs SET status = CASE WHEN COALESCE(input_watermark, 0) > $claimed THEN 'pending' ELSE 'done' END,
             finished_at = $now, last_success_at = CASE WHEN $learned = 1 OR last_success_at IS NULL THEN $now ELSE last_success_at END,
             ownership_token = NULL, lease_until = NULL, last_error = NULL,
             retry_at = NULL, retry_remaining = $retries,
             last_success_watermark = MAX(COALESCE(last_success_watermark, 0), $newest)
           WHERE kind = $kind AND job_key = $key`,
        )
        .run({ ...ROW, claimed: claimedWatermark, now, retries: JOBS.RETRIES, newest, learned })
      this.markSelection(consumed)
      return true
    })
  }

  /**
   * The check found nothing to do: the workspace matched the baseline (or there was nothing to
   * consolidate yet). Unlike Codex, which records a success here, the last success and its
   * cooldown stay as they were, so the next real change waits for nothing this check did. The
   * row becomes 'done' at now, which holds back unqueued checks for 6 h; input queued meanwhile
   * leaves it pending. The consumed snapshots become the selection, as after a success; the
   * error of an earlier failure stays visible. False, changing nothing, without ownership.
   */
  finishUnchanged(token: string, claimedWatermark: number, consumed: ReadonlyArray<Phase2Snapshot>, selectedAt?: number): boolean {
    return immediate(this.db, () => {
      if (!this.ownedBy(token)) return false
      this.settleForgets(selectedAt)
      this.db
        .prepare(
          `UPDATE jobs SET status = CASE WHEN COALESCE(input_watermark, 0) > $claimed THEN 'pending' ELSE 'done' END,
             finished_at = $now, ownership_token = NULL, lease_until = NULL, retry_at = NULL
           WHERE kind = $kind AND job_key = $key`,
        )
        .run({ ...ROW, claimed: claimedWatermark, now: this.now() })
      this.markSelection(consumed)
      return true
    })
  }

  /**
   * Failure: back off 1 h, spending a retry unless `spendRetry` is false (a provider rate limit).
   * The count is informational: phase 2 is claimable again after the backoff even at 0, as in
   * Codex (#19809). The caller redacts `error`.
   */
  fail(token: string, error: string, options: { spendRetry?: boolean } = {}): boolean {
    const now = this.now()
    return this.owned(
      token,
      `status = 'failed', ownership_token = NULL, lease_until = NULL, finished_at = $now, retry_at = $retryAt, last_error = $error,
       retry_remaining = CASE WHEN $spend = 1 THEN MAX(retry_remaining - 1, 0) ELSE retry_remaining END`,
      {
        now,
        retryAt: now + STAGE_TWO.RETRY_DELAY_MS,
        error: cut(error, STAGE_TWO.LAST_ERROR_MAX_CHARS),
        spend: options.spendRetry === false ? 0 : 1,
      },
    )
  }

  /**
   * This run's consolidator found its inputs too large for the model at each of `budgets` (tokens,
   * in order), and runs again with fewer: recorded on the owned job (jobs.overflow_budgets), kept
   * whatever the run's outcome until the next claim. False when the token no longer owns it.
   */
  noteOverflow(token: string, budgets: readonly number[]): boolean {
    return this.owned(token, "overflow_budgets = $budgets", { budgets: JSON.stringify(budgets) })
  }

  /** Shutdown: gives the claim back at once, pending, with no retry spent and no backoff. */
  release(token: string): boolean {
    return this.owned(token, "status = 'pending', ownership_token = NULL, lease_until = NULL, retry_at = NULL")
  }

  /**
   * The consolidator's helper session could not be confirmed deleted, so it may still be editing
   * the memory folder: the job stays running under its lease (no other consolidator starts and a
   * reset is refused until it expires), the error is recorded and a retry spent. The token is
   * dropped, so neither a heartbeat nor a shutdown release can shorten the lease. The owner stays:
   * the helper runs inside the owner's OpenCode process, so once that process is gone it is too.
   */
  failKeepingLease(token: string, error: string): boolean {
    return this.owned(
      token,
      `ownership_token = NULL, finished_at = $now, last_error = $error, retry_remaining = MAX(retry_remaining - 1, 0)`,
      { now: this.now(), error: cut(error, STAGE_TWO.LAST_ERROR_MAX_CHARS) },
    )
  }

  /**
   * Forgets a session (deleted in OpenCode, kept out of memory, or forgotten on request): its
   * records and its stage-1 and capture jobs go, in one transaction. Only when a record was part of
   * the last consolidation does the memory folder hold something learned from it: then phase 2 is
   * enqueued and, unless `queue` is false (a version that no longer learns), the session joins the
   * forget queue, which lets the next consolidation run within minutes instead of hours.
   */
  forgetSession(sessionId: string, options: { queue?: boolean; before?: number } = {}): { deleted: boolean; queued: boolean } {
    return immediate(this.db, () => {
      // The session's own record and those of the segments its compactions closed; with `before`,
      // only what was learned from activity before that time (what a forget covers), and the jobs
      // whose success it was.
      const older = options.before === undefined ? "" : "AND source_updated_at < $before"
      const olderJobs = options.before === undefined ? "" : "AND COALESCE(last_success_watermark, input_watermark, 0) < $before"
      const params = { id: sessionId, ...(options.before === undefined ? {} : { before: options.before }) }
      const output = this.db
        .prepare(`SELECT COUNT(*) AS n, MAX(selected_for_phase2) AS selected FROM stage1_outputs WHERE ${keyOfSession("session_id")} ${older}`)
        .get<{ n: number; selected: number | null }>(params)
      this.db.prepare(`DELETE FROM stage1_outputs WHERE ${keyOfSession("session_id")} ${older}`).run(params)
      this.db.prepare(`DELETE FROM jobs WHERE kind IN ($kind, $capture) AND ${keyOfSession("job_key")} ${olderJobs}`).run({ ...params, kind: JOBS.STAGE1, capture: JOBS.CAPTURE })
      const found = Number(output?.n ?? 0) > 0
      // The folder holds what the last consolidation consumed, even of a record replaced since (a
      // compaction's segment) or dropped (nothing left to remember); a forget by time covers only
      // records it deleted.
      const consolidated = options.before === undefined && this.db.prepare("SELECT 1 AS yes FROM consolidated_sessions WHERE session_id = $id").get({ id: sessionId }) !== undefined
      const queued = (found && Number(output?.selected ?? 0) !== 0) || consolidated
      if (queued) {
        queuePhase2(this.db, this.now(), { keepBackoff: true })
        if (options.queue !== false) {
          this.db
            .prepare("INSERT INTO forget_queue (session_id, queued_at) VALUES ($id, $now) ON CONFLICT (session_id) DO UPDATE SET queued_at = excluded.queued_at")
            .run({ id: sessionId, now: this.now() })
        }
      }
      return { deleted: found, queued }
    })
  }

  /** Sessions whose learned text may still be in the memory folder, waiting for a consolidation, oldest first. */
  pendingForgets(): Array<{ sessionId: string; queuedAt: number }> {
    return this.db
      .prepare("SELECT session_id, queued_at FROM forget_queue ORDER BY queued_at, session_id")
      .all<{ session_id: string; queued_at: number }>()
      .map((row) => ({ sessionId: row.session_id, queuedAt: Number(row.queued_at) }))
  }

  /**
   * Every session this version holds a record of from `host` (segment keys folded into their
   * session; records from before hosts were recorded count as OpenCode 1's): what reconciliation
   * compares with the sessions that host still has. Another host's sessions are not its to judge.
   */
  knownSessions(host: string): string[] {
    return this.db
      .prepare(`SELECT DISTINCT ${sessionOfColumn("session_id")} AS id FROM stage1_outputs WHERE COALESCE(host, 'opencode1') = $host`)
      .all<{ id: string }>({ host })
      .map((row) => row.id)
  }

  /**
   * Which sessions of `forgotten` (session -> its forget time) still have a record learned from
   * before that time: one an import brought back, say.
   */
  learnedBefore(forgotten: ReadonlyMap<string, number>): string[] {
    if (!forgotten.size) return []
    return this.db
      .prepare(
        `SELECT DISTINCT f.key AS id FROM stage1_outputs AS o JOIN json_each($forgotten) AS f
           ON ${sessionOfColumn("o.session_id")} = f.key AND o.source_updated_at < f.value`,
      )
      .all<{ id: string }>({ forgotten: JSON.stringify(Object.fromEntries(forgotten)) })
      .map((row) => row.id)
  }

  /** Which of `sessions` this version holds a record or a job of. */
  heldOf(sessions: ReadonlySet<string>): string[] {
    if (!sessions.size) return []
    return this.db
      .prepare(
        `SELECT DISTINCT ${sessionOfColumn("session_id")} AS id FROM stage1_outputs WHERE ${sessionOfColumn("session_id")} IN (SELECT value FROM json_each($ids))
         UNION SELECT DISTINCT ${sessionOfColumn("job_key")} AS id FROM jobs WHERE kind IN ($kind, $capture) AND ${sessionOfColumn("job_key")} IN (SELECT value FROM json_each($ids))`,
      )
      .all<{ id: string }>({ ids: JSON.stringify([...sessions]), kind: JOBS.STAGE1, capture: JOBS.CAPTURE })
      .map((row) => row.id)
  }

  /**
   * Retention: deletes up to `batch` outputs outside the last consolidation whose last use (or
   * update, if never used) is older than `maxUnusedDays`, stalest first. Their stage-1 jobs are
   * kept, as in Codex: the job's success watermark is what stops phase 1 from extracting the same
   * session again and paying a model call for an output that would be pruned again.
   */
  pruneUnused(maxUnusedDays: number, batch: number = STAGE_TWO.PRUNE_BATCH): number {
    const limit = Math.max(0, Math.floor(batch))
    if (limit === 0) return 0
    return this.db
      .prepare(
        `DELETE FROM stage1_outputs WHERE session_id IN (
           SELECT session_id FROM stage1_outputs
           WHERE selected_for_phase2 = 0 AND COALESCE(last_usage, source_updated_at) < $cutoff
           ORDER BY COALESCE(last_usage, source_updated_at) ASC, source_updated_at ASC, session_id ASC
           LIMIT $limit
         )`,
      )
      .run({ cutoff: this.cutoff(maxUnusedDays), limit }).changes
  }

  /** The consumed snapshots, and only they, become the selection; called inside a transaction. */
  /** Whether `consumed` holds a record the last successful run did not take in at this version. */
  private takesInNew(consumed: ReadonlyArray<Phase2Snapshot>): boolean {
    const taken = this.db.prepare("SELECT 1 AS n FROM stage1_outputs WHERE session_id = $id AND selected_for_phase2 <> 0 AND selected_for_phase2_source_updated_at = $at")
    return consumed.some((snapshot) => taken.get<{ n: number }>({ id: snapshot.sessionId, at: snapshot.sourceUpdatedAt }) === undefined)
  }

  private markSelection(consumed: ReadonlyArray<Phase2Snapshot>): void {
    this.db
      .prepare(
        `UPDATE stage1_outputs SET selected_for_phase2 = 0, selected_for_phase2_source_updated_at = NULL
         WHERE selected_for_phase2 <> 0 OR selected_for_phase2_source_updated_at IS NOT NULL`,
      )
      .run()
    this.db.prepare("DELETE FROM consolidated_sessions").run()
    const held = this.db.prepare("INSERT INTO consolidated_sessions (session_id) VALUES ($id) ON CONFLICT (session_id) DO NOTHING")
    for (const snapshot of consumed) held.run({ id: sessionOfKey(snapshot.sessionId) })
    // An output is only ever replaced by a newer one, so ">=" finds the consumed snapshot or its successor.
    const mark = this.db.prepare(
      `UPDATE stage1_outputs SET selected_for_phase2 = 1, selected_for_phase2_source_updated_at = $at
       WHERE session_id = $id AND source_updated_at >= $at`,
    )
    for (const snapshot of consumed) mark.run({ id: snapshot.sessionId, at: snapshot.sourceUpdatedAt })
  }

  private cutoff(maxUnusedDays: number): number {
    return this.now() - Math.max(0, maxUnusedDays) * DAY_MS
  }

  private hasPendingForgets(): boolean {
    return this.db.prepare("SELECT 1 AS yes FROM forget_queue LIMIT 1").get() !== undefined
  }

  /**
   * A run that finished chose its inputs at `selectedAt` (the claim's start when not told): every
   * session queued for forgetting before then had no record left to choose, so the folder this run
   * leaves no longer holds it. Called inside the finishing transaction.
   */
  private settleForgets(selectedAt: number | undefined): void {
    const at = selectedAt ?? Number(this.db.prepare("SELECT started_at FROM jobs WHERE kind = $kind AND job_key = $key").get<{ started_at: number | null }>(ROW)?.started_at ?? 0)
    this.db.prepare("DELETE FROM forget_queue WHERE queued_at <= $at").run({ at })
  }

  private job(): JobState | undefined {
    return this.db
      .prepare("SELECT status, lease_until, retry_at, input_watermark, finished_at, last_success_at, owner_pid, owner_boot FROM jobs WHERE kind = $kind AND job_key = $key")
      .get<JobState>(ROW)
  }

  private ownedBy(token: string): boolean {
    return this.db.prepare(`SELECT 1 AS found FROM jobs ${OWNED}`).get({ ...ROW, token }) !== undefined
  }

  /** Applies `set` to the job if `token` owns it; a single update is atomic on its own. */
  private owned(token: string, set: string, params: Record<string, string | number> = {}): boolean {
    return this.db.prepare(`UPDATE jobs SET ${set} ${OWNED}`).run({ ...ROW, ...params, token }).changes > 0
  }
}
