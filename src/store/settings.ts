// Home-wide settings in memory.db, shared by every process: today only whether background
// learning is paused (the CLI's pause and resume). Read at the start of each pass.
import type { SqlDatabase } from "./sqlite.js"

const PAUSED = "learning_paused"

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
