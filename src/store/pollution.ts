// Marking a session polluted (it used web or MCP content while disable_on_external_context is on):
// it is never extracted, drops out of consolidation inputs, and, when it was part of the last
// consolidation, phase 2 is queued so the consolidator forgets what it contributed (as in Codex).
import { immediate } from "./database.js"
import type { SqlDatabase } from "./sqlite.js"
import { queuePhase2 } from "./stage1-jobs.js"

export function markPolluted(db: SqlDatabase, sessionId: string, now: number): { changed: boolean; queued: boolean } {
  return immediate(db, () => {
    const current = db.prepare("SELECT memory_mode FROM session_meta WHERE session_id = $id").get<{ memory_mode: string }>({ id: sessionId })
    // A session the user disabled stays disabled; an already polluted one needs nothing.
    if (current && current.memory_mode !== "enabled") return { changed: false, queued: false }
    db.prepare(
      `INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, 'polluted', $now)
       ON CONFLICT (session_id) DO UPDATE SET memory_mode = 'polluted', updated_at = excluded.updated_at`,
    ).run({ id: sessionId, now })
    const selected = db.prepare("SELECT 1 AS yes FROM stage1_outputs WHERE session_id = $id AND selected_for_phase2 = 1").get({ id: sessionId })
    if (selected) queuePhase2(db, now)
    return { changed: true, queued: selected !== undefined }
  })
}
