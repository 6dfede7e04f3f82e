// The root sessions memory has seen in the host's listings, in memory.db's session_catalog: when
// each was created and last active (so when it becomes eligible for learning), with its title,
// folder and project for people to recognise it by. Written from phase 1's listings, read by `sessions`,
// `status` and memory_inspect. The instance remembers what it last wrote, so a listing of ten
// thousand unchanged sessions writes nothing.
import { immediate } from "./database.js"
import type { SqlDatabase } from "./sqlite.js"

/** One listed session, its title and folder already cleaned (private spans cut, secrets redacted). */
export interface CatalogEntry {
  id: string
  /** Undefined: not kept, because the session may not be learned from (its mode is off, or it was forgotten). */
  title: string | undefined
  directory: string | undefined
  /** The project its folder belongs to, cleaned like the folder; undefined: none, or not kept. */
  project?: { key: string; name: string } | undefined
  createdAt: number
  updatedAt: number
}

export interface CatalogRow {
  session_id: string
  title: string | null
  directory: string | null
  project_key: string | null
  project_name: string | null
  created_at: number
  updated_at: number
  listed_at: number
}

export class SessionCatalog {
  /** id → the title, folder and activity this instance last wrote or read for it. */
  private readonly written = new Map<string, string>()

  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes the entries that changed since this instance last wrote them, in one transaction. */
  remember(entries: readonly CatalogEntry[]): number {
    const changed = entries.filter((entry) => this.written.get(entry.id) !== fingerprint(entry))
    if (changed.length === 0) return 0
    const at = this.now()
    immediate(this.db, () => {
      const upsert = this.db.prepare(
        `INSERT INTO session_catalog (session_id, title, directory, project_key, project_name, created_at, updated_at, listed_at)
         VALUES ($id, $title, $directory, $projectKey, $projectName, $created, $updated, $at)
         ON CONFLICT (session_id) DO UPDATE SET title = excluded.title, directory = excluded.directory,
           project_key = excluded.project_key, project_name = excluded.project_name,
           created_at = excluded.created_at, updated_at = excluded.updated_at, listed_at = excluded.listed_at`,
      )
      for (const entry of changed) {
        upsert.run({
          id: entry.id,
          title: entry.title ?? null,
          directory: entry.directory ?? null,
          projectKey: entry.project?.key ?? null,
          projectName: entry.project?.name ?? null,
          created: entry.createdAt,
          updated: entry.updatedAt,
          at,
        })
      }
    })
    // Recorded after the commit: a failed write is tried again by the next listing.
    for (const entry of changed) this.written.set(entry.id, fingerprint(entry))
    return changed.length
  }

  /** Every session in the catalog, most recently active first. */
  all(): CatalogRow[] {
    return this.db.prepare("SELECT * FROM session_catalog ORDER BY updated_at DESC, session_id DESC").all<CatalogRow>()
  }

  ids(): string[] {
    return this.db.prepare("SELECT session_id FROM session_catalog").all<{ session_id: string }>().map((row) => row.session_id)
  }

  /** Drops a session's title, folder and project (its mode turned off, it was forgotten), keeping its times. */
  hide(sessionId: string): void {
    this.db.prepare("UPDATE session_catalog SET title = NULL, directory = NULL, project_key = NULL, project_name = NULL WHERE session_id = $id").run({ id: sessionId })
    this.written.delete(sessionId)
  }

  /** Removes a session OpenCode deleted. */
  remove(sessionId: string): void {
    this.db.prepare("DELETE FROM session_catalog WHERE session_id = $id").run({ id: sessionId })
    this.written.delete(sessionId)
  }

  /** A reset: every title, folder and project goes; the next listing brings back those that may be learned from. */
  hideAll(): void {
    this.db.prepare("UPDATE session_catalog SET title = NULL, directory = NULL, project_key = NULL, project_name = NULL").run()
    this.written.clear()
  }
}

function fingerprint(entry: CatalogEntry): string {
  return JSON.stringify([entry.title ?? null, entry.directory ?? null, entry.project?.key ?? null, entry.project?.name ?? null, entry.createdAt, entry.updatedAt])
}
