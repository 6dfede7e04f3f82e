// Marking a session polluted (it used web or MCP content while disable_on_external_context is on):
// it is never extracted again. The caller then forgets what was learned from it
// (control/forgetting.ts), which queues a consolidation when the folder holds something of it, so
// the consolidator removes what it contributed (as in Codex).
import { immediate } from "./database.js"
import type { SqlDatabase } from "./sqlite.js"

/** Polluted now, where it was enabled before; a session the user disabled stays disabled. */
export function markPolluted(db: SqlDatabase, sessionId: string, now: number): { changed: boolean } {
  return immediate(db, () => {
    const current = db.prepare("SELECT memory_mode FROM session_meta WHERE session_id = $id").get<{ memory_mode: string }>({ id: sessionId })
    if (current && current.memory_mode !== "enabled") return { changed: false }
    db.prepare(
      `INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, 'polluted', $now)
       ON CONFLICT (session_id) DO UPDATE SET memory_mode = 'polluted', updated_at = excluded.updated_at`,
    ).run({ id: sessionId, now })
    return { changed: true }
  })
}
