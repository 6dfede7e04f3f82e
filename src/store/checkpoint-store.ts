// Session checkpoints in memory.db (migration 7). The state is JSON owned by src/checkpoint; this
// module only keeps it, with the two views a compaction needs: pending (rendered when the
// compaction starts) and frozen (promoted when it ends, injected until the next one). Each
// update is one IMMEDIATE transaction, so two processes serving one home never interleave a
// read-modify-write of the same session.
import { immediate } from "./database.js"
import type { SqlDatabase } from "./sqlite.js"

export interface CheckpointRow {
  state: string
  updatedAt: number
  pendingView: string | null
  frozenView: string | null
  frozenAt: number | null
  compactions: number
}

interface Row {
  state: string
  updated_at: number
  pending_view: string | null
  frozen_view: string | null
  frozen_at: number | null
  compactions: number
}

export class CheckpointStore {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    /** The host whose sessions these checkpoints are of (only it may call one deleted). */
    private readonly host: string = "opencode1",
  ) {}

  get(sessionId: string): CheckpointRow | undefined {
    const row = this.db.prepare("SELECT * FROM session_checkpoints WHERE session_id = $id").get<Row>({ id: sessionId })
    return row && toRow(row)
  }

  /**
   * Reads the state, lets `change` compute the next one, and writes it, in one transaction.
   * `change` returns undefined to write nothing. Returns what was written, if anything.
   */
  update<T>(sessionId: string, change: (state: string | undefined) => { state: string; result: T } | undefined): T | undefined {
    return immediate(this.db, () => {
      const current = this.db.prepare("SELECT state FROM session_checkpoints WHERE session_id = $id").get<{ state: string }>({ id: sessionId })
      const next = change(current?.state)
      if (!next) return undefined
      this.db
        .prepare(
          `INSERT INTO session_checkpoints (session_id, state, updated_at, host) VALUES ($id, $state, $now, $host)
           ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
        )
        .run({ id: sessionId, state: next.state, now: this.now(), host: this.host })
      return next.result
    })
  }

  /** Only the frozen view: read on every model call, so the state JSON is left unread. */
  frozenView(sessionId: string): string | undefined {
    return this.db.prepare("SELECT frozen_view FROM session_checkpoints WHERE session_id = $id").get<{ frozen_view: string | null }>({ id: sessionId })?.frozen_view ?? undefined
  }

  /** The view a compaction in progress was given. */
  setPending(sessionId: string, view: string): void {
    this.db.prepare("UPDATE session_checkpoints SET pending_view = $view WHERE session_id = $id").run({ id: sessionId, view })
  }

  /** The compaction ended: its view is frozen for every turn until the next. False when none was pending. */
  freeze(sessionId: string): boolean {
    return (
      this.db
        .prepare(
          `UPDATE session_checkpoints SET frozen_view = pending_view, pending_view = NULL, frozen_at = $now, compactions = compactions + 1
           WHERE session_id = $id AND pending_view IS NOT NULL`,
        )
        .run({ id: sessionId, now: this.now() }).changes > 0
    )
  }

  delete(sessionId: string): void {
    this.db.prepare("DELETE FROM session_checkpoints WHERE session_id = $id").run({ id: sessionId })
  }

  /** Every session with a checkpoint kept by this store's host (reconciliation's candidates). */
  sessionIds(): string[] {
    return this.db
      .prepare("SELECT session_id FROM session_checkpoints WHERE COALESCE(host, 'opencode1') = $host")
      .all<{ session_id: string }>({ host: this.host })
      .map((row) => row.session_id)
  }

  /** Which of `sessions` have a checkpoint. */
  sessionsOf(sessions: ReadonlySet<string>): string[] {
    if (!sessions.size) return []
    return this.db
      .prepare("SELECT session_id FROM session_checkpoints WHERE session_id IN (SELECT value FROM json_each($ids))")
      .all<{ session_id: string }>({ ids: JSON.stringify([...sessions]) })
      .map((row) => row.session_id)
  }

  /** A reset's share: every checkpoint goes (the reset keeps nothing said before it). */
  clear(): number {
    return this.db.prepare("DELETE FROM session_checkpoints").run().changes
  }

  counts(): { sessions: number; frozen: number } {
    const row = this.db.prepare("SELECT COUNT(*) AS n, COUNT(frozen_view) AS f FROM session_checkpoints").get<{ n: number; f: number }>()
    return { sessions: Number(row?.n ?? 0), frozen: Number(row?.f ?? 0) }
  }
}

function toRow(row: Row): CheckpointRow {
  return {
    state: row.state,
    updatedAt: Number(row.updated_at),
    pendingView: row.pending_view,
    frozenView: row.frozen_view,
    frozenAt: row.frozen_at === null ? null : Number(row.frozen_at),
    compactions: Number(row.compactions),
  }
}
