// Home-wide settings in memory.db, shared by every process: whether background learning is paused
// (the CLI's pause and resume; read at the start of each pass), when memory was last reset (the
// reset epoch), and the rate-limit breakers the processes opened, recorded so that the CLI's status
// can show them.
import type { SqlDatabase } from "./sqlite.js"

const PAUSED = "learning_paused"
const RESET_EPOCH = "reset_epoch"
const BREAKER = "breaker:"

export interface RecordedBreaker {
  scope: string
  until: number
  reason: string
}

export class HomeSettings {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** When learning was paused, or undefined while it runs. */
  pausedSince(): number | undefined {
    const row = this.db.prepare("SELECT value, updated_at FROM settings WHERE key = $key").get<{ value: string; updated_at: number }>({ key: PAUSED })
    return row?.value === "1" ? Number(row.updated_at) : undefined
  }

  /**
   * When memory was last reset: nothing said before it is learned from again (phase 1 leaves older
   * sessions and older messages out). Undefined when memory was never reset.
   */
  resetEpoch(): number | undefined {
    const row = this.db.prepare("SELECT value FROM settings WHERE key = $key").get<{ value: string }>({ key: RESET_EPOCH })
    const at = row === undefined ? NaN : Number(row.value)
    return Number.isFinite(at) ? at : undefined
  }

  /** Moves the reset epoch forward to `at` (never back: a later reset is the one that counts). */
  setResetEpoch(at: number): void {
    this.db
      .prepare(
        `INSERT INTO settings (key, value, updated_at) VALUES ($key, $value, $now)
         ON CONFLICT (key) DO UPDATE SET value = CASE WHEN CAST(excluded.value AS INTEGER) > CAST(value AS INTEGER) THEN excluded.value ELSE value END, updated_at = excluded.updated_at`,
      )
      .run({ key: RESET_EPOCH, value: String(Math.floor(at)), now: this.now() })
  }

  /** A breaker some process opened (its reason redacted by the caller). */
  recordBreaker(breaker: RecordedBreaker): void {
    this.db
      .prepare("INSERT INTO settings (key, value, updated_at) VALUES ($key, $value, $now) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at")
      .run({ key: `${BREAKER}${breaker.scope}`, value: JSON.stringify({ until: breaker.until, reason: breaker.reason }), now: this.now() })
  }

  /** Breakers still open now, in any process; expired ones are dropped. */
  openBreakers(): RecordedBreaker[] {
    const now = this.now()
    this.db.prepare("DELETE FROM settings WHERE substr(key, 1, 8) = $prefix AND CAST(json_extract(value, '$.until') AS INTEGER) <= $now").run({ prefix: BREAKER, now })
    return this.db
      .prepare("SELECT key, value FROM settings WHERE substr(key, 1, 8) = $prefix ORDER BY key")
      .all<{ key: string; value: string }>({ prefix: BREAKER })
      .flatMap((row) => {
        try {
          const value = JSON.parse(row.value) as { until?: unknown; reason?: unknown }
          return typeof value.until === "number" ? [{ scope: row.key.slice(BREAKER.length), until: value.until, reason: String(value.reason ?? "") }] : []
        } catch {
          return []
        }
      })
  }

  /** Pauses or resumes background learning; returns whether it was paused before. */
  setPaused(paused: boolean): boolean {
    const before = this.pausedSince() !== undefined
    if (paused) {
      if (!before) {
        this.db
          .prepare("INSERT INTO settings (key, value, updated_at) VALUES ($key, '1', $now) ON CONFLICT (key) DO UPDATE SET value = '1', updated_at = excluded.updated_at")
          .run({ key: PAUSED, now: this.now() })
      }
    } else this.db.prepare("DELETE FROM settings WHERE key = $key").run({ key: PAUSED })
    return before
  }
}
