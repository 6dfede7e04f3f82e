// Records follow their session's project. A record's project is computed once, at extraction;
// when the rule changes (D26: OpenCode's project id on both lines instead of 1.x's git folder,
// real paths, names for bare layouts), or a repository gets its first commit, or a mapping is
// added, the next listing places the session elsewhere, and its records follow, so that a home
// made under an older rule keeps one group per project and the project filter finds its records.
// The re-key is lazy (driven by listings, no migration step that reads every folder at start-up)
// and bounded by the records table.
import { immediate } from "./database.js"
import { sessionOfKey } from "./record-keys.js"
import type { SqlDatabase } from "./sqlite.js"

/** A session's project as a listing found it, cleaned; null: the session's folder is no project. */
export type CurrentProject = { key: string; name: string } | null

interface RecordProject {
  session_id: string
  cwd: string | null
  project_key: string | null
  project_name: string | null
}

/**
 * Re-keys the records of `db` (a version database's stage1_outputs) to the projects `current`
 * gives their sessions, and the records of sessions it does not list to the one project the
 * records that shared their old key moved to. Returns how many records changed.
 *
 * The listing cleaned the new key and name with the session's title and folder only; the record
 * was cleaned with its whole transcript too (D11: a span marked private in a message is cut from
 * every string stored from that session). So a record takes a new key or name only when it
 * reveals nothing the record's own cleaning kept out: an opaque id (`host:<id>`), none at all, or
 * text every part of which the record already holds (its folder, key or name).
 */
export function followProjects(db: SqlDatabase, current: ReadonlyMap<string, CurrentProject>): number {
  if (current.size === 0) return 0
  return immediate(db, () => {
    const rows = db.prepare("SELECT session_id, cwd, project_key, project_name FROM stage1_outputs WHERE project_key IS NOT NULL").all<RecordProject>()
    const changes: Array<{ id: string; key: string | null; name: string | null }> = []
    const moved = new Map<string, Set<string | null>>()
    const unlisted: RecordProject[] = []
    for (const row of rows) {
      const own = current.get(sessionOfKey(row.session_id))
      if (own === undefined) {
        unlisted.push(row)
        continue
      }
      // Where the listing places it, whether or not it can go there.
      const targets = moved.get(row.project_key!) ?? new Set<string | null>()
      targets.add(own === null ? null : own.key)
      moved.set(row.project_key!, targets)
      const next = taken(row, own)
      if (next.key !== row.project_key || next.name !== row.project_name) changes.push({ id: row.session_id, ...next })
    }
    for (const row of unlisted) {
      const targets = moved.get(row.project_key!)
      // Only where every listed record of the old key belongs in one place.
      if (!targets || targets.size !== 1) continue
      const key = [...targets][0] as string | null
      const next = key === null ? { key: null, name: null } : reveals(key, row) ? undefined : { key, name: row.project_name }
      if (next && next.key !== row.project_key) changes.push({ id: row.session_id, ...next })
    }
    const update = db.prepare("UPDATE stage1_outputs SET project_key = $key, project_name = $name WHERE session_id = $id")
    for (const change of changes) update.run(change)
    return changes.length
  })
}

/** What a listed session's record becomes: its session's project, each of key and name only where that reveals nothing new. */
function taken(row: RecordProject, own: CurrentProject): { key: string | null; name: string | null } {
  if (own === null) return { key: null, name: null }
  const key = reveals(own.key, row) ? row.project_key : own.key
  // A record keeps a name only with a key: a name that cannot be taken stays beside the new key.
  const name = reveals(own.name, row) ? row.project_name : own.name
  return { key, name: key === null ? null : name }
}

/** OpenCode's ids are hex digests; any id without a path or spaces in it says nothing of the folder. */
const OPAQUE_KEY = /^host:[A-Za-z0-9._-]{1,200}$/
const KEY_KIND = /^(?:dir|git|map|host):/

/** Whether `value` holds text the record does not: a part of it (split at separators) found in none of the record's folder, key and name. */
function reveals(value: string, row: RecordProject): boolean {
  if (OPAQUE_KEY.test(value)) return false
  const held = [row.cwd, row.project_key, row.project_name].filter((text): text is string => !!text).join("\n")
  // A key's kind is the rule's own word, not the folder's.
  return value
    .replace(KEY_KIND, "")
    .split(/[/\\:\s]+/)
    .filter(Boolean)
    .some((part) => !held.includes(part))
}
