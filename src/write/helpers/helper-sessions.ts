// The plugin's own helper sessions (extraction, consolidation) are ordinary OpenCode sessions.
// They carry both a generated title and a metadata marker: discovery skips them, the read path
// injects nothing into them, and leftovers from a crashed process are recognised and deleted.
import type { Host, HostSession } from "../../host.js"
import { leaseOwners, type LeaseOwners } from "../../store/lease-owner.js"

export const HELPER_MARKER = "opencode-codex-memory"
export type HelperRole = "extract" | "consolidate"

const TITLE = /^\[codex-memory\] (extract|consolidate)( ses_[A-Za-z0-9]+)?$/
/** Leftovers younger than this may still be running in another process. */
export const HELPER_STALE_MS = 90 * 60 * 1000

export function helperTitle(role: HelperRole, sourceId?: string): string {
  return `[codex-memory] ${role}${sourceId ? ` ${sourceId}` : ""}`
}

export function helperMetadata(role: HelperRole, sourceId: string | undefined, createdAt: number, owners: LeaseOwners = leaseOwners()): Record<string, unknown> {
  return { [HELPER_MARKER]: { role, ...(sourceId ? { source: sourceId } : {}), pid: owners.self.pid, boot: owners.self.boot, createdAt } }
}

/** Both signs are required: a user's session that merely has a similar title is never touched. */
export function isHelperSession(session: Pick<HostSession, "title" | "metadata">): boolean {
  return TITLE.test(session.title) && typeof session.metadata?.[HELPER_MARKER] === "object"
}

/**
 * Deletes leftover helper sessions: those whose process is known to be gone (a reload, a crash,
 * a closed window), and any older than HELPER_STALE_MS. Returns how many were deleted.
 */
export async function deleteLeftoverHelpers(host: Host, now: number, signal: AbortSignal, owners: LeaseOwners = leaseOwners()): Promise<number> {
  const { sessions } = await host.listRootSessions({ signal, search: "[codex-memory]" })
  let deleted = 0
  for (const session of sessions) {
    if (!isHelperSession(session)) continue
    const mark = session.metadata?.[HELPER_MARKER] as { pid?: unknown; boot?: unknown }
    // This process's own helpers are in use: start-up's clean-up can list them when a pass began
    // first, and a clock running ahead (a test clock, a suspended laptop) would call them stale.
    if (mark.pid === owners.self.pid && mark.boot === owners.self.boot) continue
    const abandoned = owners.isGone(mark.pid, mark.boot) || now - session.updatedAt >= HELPER_STALE_MS
    if (abandoned && (await host.deleteSession(session.id, session.directory))) deleted++
  }
  return deleted
}
