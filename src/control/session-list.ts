// The sessions memory knows, with the state each is in for one memory version and when the next
// step can happen: the `sessions` command, and the waiting list of memory_inspect and `status`.
// Pure: the caller reads the catalog and the version's traces, this decides the states.
import type { MemoryMode } from "../store/memory-store.js"
import type { CatalogRow } from "../store/session-catalog.js"
import type { SessionTrace } from "../store/version-store.js"

export type SessionState =
  /** Not idle long enough yet, or idle and due at the next pass (eligibleAt says which). */
  | "waiting"
  | "extracting"
  /** The last extraction failed; it is tried again at retryAt. */
  | "retrying"
  | "failed"
  /** Extracted, with records the next consolidation takes in. */
  | "extracted"
  | "consolidated"
  /** Extracted, with nothing worth remembering. */
  | "nothing_learned"
  /** Waiting for the next consolidation to remove it from the folder. */
  | "forgetting"
  | "forgotten"
  /** Its memory mode keeps it out. */
  | "off"
  /** Older than max_rollout_age_days, or not active since the last reset: never learned. */
  | "too_old"
  | "before_reset"

export interface SessionListing {
  sessionId: string
  title: string | undefined
  /** The folder it ran in. */
  directory: string | undefined
  /** The project that folder belongs to (the routing hint), when the catalog has it. */
  project: { key: string; name: string } | undefined
  mode: MemoryMode
  state: SessionState
  /** Last activity OpenCode reported, when the catalog has it. */
  updatedAt: number | undefined
  /** When phase 1 may take it (again): set for waiting sessions and for records its later activity makes stale. */
  eligibleAt: number | undefined
  records: number
  error: string | undefined
}

export interface SessionListInput {
  catalog: readonly CatalogRow[]
  traces: ReadonlyMap<string, SessionTrace>
  modes: ReadonlyMap<string, MemoryMode>
  forgottenBefore: ReadonlyMap<string, number>
  resetEpoch: number | undefined
  now: number
  minIdleHours: number
  maxAgeDays: number
}

/** Every session of the catalog or the traces, most recently active first (unknown activity last). */
export function listSessions(input: SessionListInput): SessionListing[] {
  const rows = new Map(input.catalog.map((row) => [row.session_id, row]))
  const ids = new Set([...rows.keys(), ...input.traces.keys()])
  const listed = [...ids].map((id) => describeSession(id, rows.get(id), input))
  return listed.sort((a, b) => (b.updatedAt ?? -1) - (a.updatedAt ?? -1) || (a.sessionId < b.sessionId ? 1 : -1))
}

function describeSession(id: string, row: CatalogRow | undefined, input: SessionListInput): SessionListing {
  const trace = input.traces.get(id)
  const mode = input.modes.get(id) ?? "enabled"
  const updatedAt = row ? Number(row.updated_at) : trace?.recordUpdatedAt
  const base = {
    sessionId: id,
    title: row?.title ?? undefined,
    directory: row?.directory ?? undefined,
    project: row?.project_key && row.project_name ? { key: row.project_key, name: row.project_name } : undefined,
    mode,
    updatedAt,
    records: trace?.records ?? 0,
    error: undefined as string | undefined,
  }
  const idleAt = updatedAt === undefined ? undefined : updatedAt + input.minIdleHours * 3_600_000
  const job = trace?.job
  // Newer activity than its newest record: the record is learned again once idle.
  const stale = trace?.recordUpdatedAt !== undefined && updatedAt !== undefined && updatedAt > trace.recordUpdatedAt
  const again = stale && mode === "enabled" ? idleAt : undefined
  if (trace?.forgetting) return { ...base, state: "forgetting", eligibleAt: undefined }
  if (trace && trace.records > 0) return { ...base, state: trace.unconsolidated > 0 ? "extracted" : "consolidated", eligibleAt: again }
  if (mode !== "enabled") return { ...base, state: "off", eligibleAt: undefined }
  const forgotten = input.forgottenBefore.get(id)
  if (forgotten !== undefined && (updatedAt === undefined || updatedAt <= forgotten)) return { ...base, state: "forgotten", eligibleAt: undefined }
  if (trace?.consolidated) return { ...base, state: "consolidated", eligibleAt: undefined }
  if (job?.status === "running") return { ...base, state: "extracting", eligibleAt: undefined }
  if (job?.lastError && job.status !== "done") {
    const retrying = job.retriesLeft > 0
    return { ...base, state: retrying ? "retrying" : "failed", eligibleAt: retrying ? (job.retryAt ?? undefined) : undefined, error: job.lastError }
  }
  if (job?.status === "done" && !stale) return { ...base, state: "nothing_learned", eligibleAt: undefined }
  if (updatedAt === undefined) return { ...base, state: "waiting", eligibleAt: undefined }
  if (updatedAt < input.now - input.maxAgeDays * 86_400_000) return { ...base, state: "too_old", eligibleAt: undefined }
  if (input.resetEpoch !== undefined && updatedAt <= input.resetEpoch) return { ...base, state: "before_reset", eligibleAt: undefined }
  return { ...base, state: "waiting", eligibleAt: idleAt }
}

/** The sessions still to go idle (eligible later than `now`), soonest first. */
export function waitingToGoIdle(sessions: readonly SessionListing[], now: number): SessionListing[] {
  return sessions.filter((s) => s.state === "waiting" && s.eligibleAt !== undefined && s.eligibleAt > now).sort((a, b) => a.eligibleAt! - b.eligibleAt!)
}

export interface ProjectGroup<T> {
  /** The project's name; a folder's when it is in no project; the key beside a name two projects share. */
  heading: string
  items: T[]
  /** How many folders the group's items ran in: a list names each item's folder when it is more than one. */
  folders: number
}

/**
 * Items grouped by project, in the order their groups first appear (the `sessions` list and the
 * viewer's page show the same groups). An item with no project stands under its folder.
 */
export function groupByProject<T>(items: readonly T[], of: (item: T) => { project?: { key: string; name: string } | null | undefined; folder?: string | null | undefined }): ProjectGroup<T>[] {
  const groups = new Map<string, { name: string; items: T[]; folders: Set<string> }>()
  for (const item of items) {
    const { project, folder } = of(item)
    const key = project?.key ?? (folder ? `folder:${folder}` : "")
    const name = project?.name ?? (folder ? `${folder} (no project)` : "(project not kept)")
    const group = groups.get(key) ?? { name, items: [], folders: new Set<string>() }
    group.items.push(item)
    if (folder) group.folders.add(folder)
    groups.set(key, group)
  }
  // Two projects of one name (two checkouts without a remote) are told apart by their key.
  const names = new Map<string, number>()
  for (const group of groups.values()) names.set(group.name, (names.get(group.name) ?? 0) + 1)
  return [...groups].map(([key, group]) => ({
    heading: (names.get(group.name) ?? 0) > 1 && key ? `${group.name} (${key})` : group.name,
    items: group.items,
    folders: group.folders.size,
  }))
}
