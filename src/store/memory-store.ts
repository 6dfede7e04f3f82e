// Domain operations on memory.db. Each method is one short transaction: SQLite calls are
// synchronous, so nothing here may hold a lock for long.
import { JOBS } from "../constants.js"
import { immediate } from "./database.js"
import { leaseOwners, type LeaseOwners } from "./lease-owner.js"
import type { SqlDatabase } from "./sqlite.js"
import { queuePhase2 } from "./stage1-jobs.js"

export type MemoryMode = "enabled" | "disabled" | "polluted"

/** Where redaction counts come from: the transcript sent to the extractor, or its answer. */
export type RedactionStage = "transcript" | "answer"

export interface CitedRange {
  path: string
  start: number
  end: number
}

export interface StoreCounts {
  outputs: number
  outputsUsed: number
  sessionsByMode: Record<MemoryMode, number>
  jobs: Array<{ kind: string; status: string; count: number }>
  citedParts: number
  citedFiles: number
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

export type ResetOutcome = { type: "reset"; outputs: number; jobs: number } | { type: "refused_consolidation_running"; leaseUntil: number }

export class MemoryStore {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    private readonly owners: LeaseOwners = leaseOwners(),
  ) {}

  /** A session's memory mode; sessions never seen are enabled. */
  mode(sessionId: string): MemoryMode {
    const row = this.db.prepare("SELECT memory_mode FROM session_meta WHERE session_id = $id").get<{ memory_mode: MemoryMode }>({ id: sessionId })
    return row?.memory_mode ?? "enabled"
  }

  /** Sessions kept out of memory (disabled or polluted); every other session is enabled. */
  sessionsNotEnabled(): Set<string> {
    const rows = this.db.prepare("SELECT session_id FROM session_meta WHERE memory_mode <> 'enabled'").all<{ session_id: string }>()
    return new Set(rows.map((row) => row.session_id))
  }

  /**
   * Sets a session's mode and returns the one it had. A change for a session with a stored record
   * moves that record into or out of the consolidation inputs, so phase 2 is queued in the same
   * transaction (as pollution does): disabling a session is then forgotten at the next
   * consolidation, even right after a check that found nothing to do.
   */
  setMode(sessionId: string, mode: MemoryMode): MemoryMode {
    return immediate(this.db, () => {
      const previous = this.mode(sessionId)
      const now = this.now()
      this.db
        .prepare(
          `INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $now)
           ON CONFLICT (session_id) DO UPDATE SET memory_mode = excluded.memory_mode, updated_at = excluded.updated_at`,
        )
        .run({ id: sessionId, mode, now })
      // Disabled and polluted are both "out"; only crossing the line changes the inputs.
      const moved = (previous === "enabled") !== (mode === "enabled")
      if (moved && this.db.prepare("SELECT 1 AS yes FROM stage1_outputs WHERE session_id = $id").get({ id: sessionId })) queuePhase2(this.db, now)
      return previous
    })
  }

  /**
   * Records one citation block of one assistant text part. Returns false when that part was
   * already counted (the same block is seen by several hooks, and on every later turn).
   * Cited sessions get usage_count + 1 and last_usage = now; unknown ids are ignored, as in Codex.
   */
  recordCitation(partId: string, citingSession: string | undefined, sessionIds: readonly string[], files: readonly CitedRange[]): boolean {
    return immediate(this.db, () => {
      const now = this.now()
      const inserted = this.db
        .prepare("INSERT INTO citation_parts (part_id, session_id, recorded_at) VALUES ($part, $session, $now) ON CONFLICT (part_id) DO NOTHING")
        .run({ part: partId, session: citingSession ?? null, now })
      if (inserted.changes === 0) return false
      const bump = this.db.prepare("UPDATE stage1_outputs SET usage_count = usage_count + 1, last_usage = $now WHERE session_id = $id")
      for (const id of new Set(sessionIds)) bump.run({ id, now })
      const cite = this.db.prepare(
        `INSERT INTO cited_files (path, usage_count, last_usage, last_range) VALUES ($path, 1, $now, $range)
         ON CONFLICT (path) DO UPDATE SET usage_count = usage_count + 1, last_usage = excluded.last_usage, last_range = excluded.last_range`,
      )
      const seen = new Set<string>()
      for (const file of files) {
        if (seen.has(file.path)) continue
        seen.add(file.path)
        cite.run({ path: file.path, now, range: `${file.start}-${file.end}` })
      }
      return true
    })
  }

  counts(): StoreCounts {
    const one = (sql: string) => Number(this.db.prepare(sql).get<{ n: number }>()?.n ?? 0)
    const sessionsByMode: Record<MemoryMode, number> = { enabled: 0, disabled: 0, polluted: 0 }
    for (const row of this.db.prepare("SELECT memory_mode AS mode, COUNT(*) AS n FROM session_meta GROUP BY memory_mode").all<{ mode: MemoryMode; n: number }>()) {
      sessionsByMode[row.mode] = Number(row.n)
    }
    return {
      outputs: one("SELECT COUNT(*) AS n FROM stage1_outputs"),
      outputsUsed: one("SELECT COUNT(*) AS n FROM stage1_outputs WHERE usage_count > 0"),
      sessionsByMode,
      jobs: this.db
        .prepare("SELECT kind, status, COUNT(*) AS count FROM jobs GROUP BY kind, status ORDER BY kind, status")
        .all<{ kind: string; status: string; count: number }>(),
      citedParts: one("SELECT COUNT(*) AS n FROM citation_parts"),
      citedFiles: one("SELECT COUNT(*) AS n FROM cited_files"),
    }
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

  /** Records what redaction replaced in one extraction stage; empty counts record nothing. */
  recordRedactions(sessionId: string, counts: Readonly<Record<string, number>>, stage: RedactionStage = "transcript"): void {
    const clean = Object.fromEntries(Object.entries(counts).filter(([, count]) => Number.isInteger(count) && count > 0))
    if (!Object.keys(clean).length) return
    this.db
      .prepare("INSERT INTO redaction_log (session_id, stage, recorded_at, counts) VALUES ($session, $stage, $now, $counts)")
      .run({ session: sessionId, stage, now: this.now(), counts: JSON.stringify(clean) })
  }

  /** Everything redaction ever replaced before or after extraction, summed by class. */
  redactionTotals(): Record<string, number> {
    const totals: Record<string, number> = {}
    for (const row of this.db.prepare("SELECT counts FROM redaction_log").all<{ counts: string }>()) {
      let counts: unknown
      try {
        counts = JSON.parse(row.counts)
      } catch {
        continue
      }
      if (typeof counts !== "object" || counts === null) continue
      for (const [name, count] of Object.entries(counts)) if (typeof count === "number") totals[name] = (totals[name] ?? 0) + count
    }
    return totals
  }

  /**
   * Forgets everything learned: outputs, jobs and citation records. Session modes stay (they are
   * the user's choices). The phase-2 row is left finished now, which starts the cooldown, so no
   * consolidation rebuilds memory right after the user cleared it. Refused while any process
   * holds a live consolidation lease; the check and the clearing share one transaction.
   */
  reset(): ResetOutcome {
    return immediate(this.db, () => {
      const now = this.now()
      const running = this.phase2Job()
      // A consolidation whose process is gone (a closed window) no longer blocks the reset.
      if (running?.status === "running" && (running.lease_until ?? 0) > now && !this.owners.isGone(running.owner_pid, running.owner_boot)) {
        return { type: "refused_consolidation_running", leaseUntil: running.lease_until ?? now }
      }
      const outputs = this.db.prepare("DELETE FROM stage1_outputs").run().changes
      const jobs = this.db.prepare("DELETE FROM jobs").run().changes
      this.db.prepare("DELETE FROM citation_parts").run()
      this.db.prepare("DELETE FROM cited_files").run()
      this.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, finished_at, last_success_at, retry_remaining, last_error)
           VALUES ($kind, $key, 'done', $now, $now, $retries, NULL)`,
        )
        .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, now, retries: JOBS.RETRIES })
      return { type: "reset", outputs, jobs }
    })
  }
}
