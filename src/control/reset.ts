// memory_reset across every version: what each version learned (outputs, jobs, readiness
// progress), the catalog's citation records and every memory folder. Session modes and version
// stamps are the user's, and stay. Refused, changing nothing, while any version's consolidation
// holds a live lease; each version's clearing re-checks that inside its own transaction.
import type { ResetReport } from "../../tools/ports.js"
import type { MemoryStore } from "../store/memory-store.js"
import type { VersionStore } from "../store/version-store.js"
import type { MemoryVersion } from "../util/paths.js"
import { clearFolder } from "./clear-folder.js"

export interface ResettableVersion {
  store(): VersionStore | undefined
  readonly paths: { memoryRoot: string }
  invalidate(): void
}

export function resetAllVersions(catalog: MemoryStore, versions: readonly ResettableVersion[]): ResetReport {
  const stores = versions.map((v) => v.store()).filter((store) => store !== undefined)
  for (const store of stores) {
    const running = store.liveConsolidation()
    if (running) return refused(store.version, running.leaseUntil, false)
  }
  let outputs = 0
  let jobs = 0
  for (const store of stores) {
    // A consolidation may have been claimed since the check above: its transaction says so.
    const outcome = store.reset()
    if (outcome.type === "refused_consolidation_running") return refused(store.version, outcome.leaseUntil, outputs + jobs > 0)
    outputs += outcome.outputs
    jobs += outcome.jobs
  }
  catalog.clearCitations()
  let files = 0
  for (const version of versions) {
    files += clearFolder(version.paths.memoryRoot)
    version.invalidate()
  }
  return { type: "reset", outputs, jobs, files }
}

function refused(version: MemoryVersion, leaseUntil: number, partial: boolean): ResetReport {
  const until = new Date(leaseUntil).toISOString()
  const changed = partial ? "What the other version learned was already erased." : "Nothing was changed."
  return { type: "refused", reason: `a ${version} consolidation is running (its lease lasts until ${until}); try again after it finishes. ${changed}` }
}
