// memory_reset across every version: what each version learned (outputs, jobs, the forget queue,
// readiness progress), the catalog's citation records, every session checkpoint, the consolidation
// reviews, every memory folder and what the search index held of them. Then the reset epoch moves
// to now: phase 1 of every process learns only from what is said after it, so the sessions of the
// last days are not learned again.
// Kept: session modes, version stamps, the forget times of sessions, the redaction audit (counts,
// no text), the spend ledger and the pause. Refused, changing nothing, while any version's
// consolidation holds a live lease; each version's clearing re-checks that inside its own transaction.
import type { ResetReport } from "../../tools/ports.js"
import type { CheckpointStore } from "../store/checkpoint-store.js"
import type { MemoryStore } from "../store/memory-store.js"
import type { ConsolidationReviews } from "../store/reviews.js"
import type { HomeSettings } from "../store/settings.js"
import type { SessionCatalog } from "../store/session-catalog.js"
import type { VersionStore } from "../store/version-store.js"
import type { MemoryVersion } from "../util/paths.js"
import { dropSnapshot } from "../write/phase2/run-snapshot.js"
import { clearFolder } from "./clear-folder.js"

export interface ResettableVersion {
  store(): VersionStore | undefined
  readonly paths: { memoryRoot: string }
  invalidate(): void
  /** Empties what the ranked search index holds of the erased folder and records. */
  refreshIndex(): void
}

/** The catalog's tables a reset touches. */
export interface ResettableCatalog {
  store: MemoryStore
  checkpoints?: CheckpointStore | undefined
  reviews?: ConsolidationReviews | undefined
  settings?: HomeSettings | undefined
  sessions?: SessionCatalog | undefined
}

export function resetAllVersions(catalog: ResettableCatalog, versions: readonly ResettableVersion[], now: number): ResetReport {
  const stores = versions.map((v) => v.store()).filter((store) => store !== undefined)
  for (const store of stores) {
    const running = store.liveConsolidation()
    if (running) return refused(store.version, running.leaseUntil, false)
  }
  // First, so that a phase 1 running anywhere stops choosing older sessions at once.
  catalog.settings?.setResetEpoch(now)
  let outputs = 0
  let jobs = 0
  for (const store of stores) {
    // A consolidation may have been claimed since the check above: its transaction says so.
    const outcome = store.reset()
    if (outcome.type === "refused_consolidation_running") return refused(store.version, outcome.leaseUntil, outputs + jobs > 0)
    outputs += outcome.outputs
    jobs += outcome.jobs
  }
  catalog.store.clearCitations()
  const checkpoints = catalog.checkpoints?.clear() ?? 0
  catalog.reviews?.clear()
  catalog.sessions?.hideAll()
  let files = 0
  for (const version of versions) {
    // A copy kept aside by a consolidation that stopped midway would come back at the next one
    // (and is what readers see): it goes first, so a kill during the clearing cannot bring it back.
    dropSnapshot(version.paths.memoryRoot)
    files += clearFolder(version.paths.memoryRoot)
    version.invalidate()
    version.refreshIndex()
  }
  return { type: "reset", outputs, jobs, files, checkpoints }
}

function refused(version: MemoryVersion, leaseUntil: number, partial: boolean): ResetReport {
  const until = new Date(leaseUntil).toISOString()
  const changed = partial ? "What the other version learned was already erased." : "Nothing was changed."
  return { type: "refused", reason: `a ${version} consolidation is running (its lease lasts until ${until}); try again after it finishes. ${changed}` }
}
