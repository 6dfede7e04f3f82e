// Forgetting, one path for every reason a session leaves memory: OpenCode deleted it (seen as an
// event, or found by reconciliation), its mode was set to disabled or polluted, or the user asked
// memory to forget it. Each version deletes the session's records and jobs and, when its folder
// still holds something learned from them, queues a consolidation that may run within minutes;
// the catalog drops the session's checkpoint and audit rows (and, for a deleted session, its mode,
// stamp and counted citations); the consolidation reviews of a version that held it are dropped,
// since any of their diffs may quote it.
//
// The promises are level-triggered: `sweep()` enforces "kept out" on whatever the databases hold
// at every background pass (a mode set by another process, records an import brought in), and the
// Reconciler compares what memory holds with the sessions the host still has.
import type { Diagnostics } from "../diagnostics.js"
import { errorMessage } from "../diagnostics.js"
import type { Host, SessionListing } from "../host.js"
import type { Catalog } from "../pipeline/catalog.js"
import type { VersionPipeline } from "../pipeline/version-pipeline.js"
import type { MemoryMode } from "../store/memory-store.js"
import type { MemoryVersion } from "../util/paths.js"
import { SingleFlight } from "../util/single-flight.js"

export type ForgetReason = "deleted" | "disabled" | "polluted" | "forgotten"

export interface ForgetReport {
  /** Versions that held a record or a job of the session. */
  versions: MemoryVersion[]
  /** Versions whose folder still holds something of it: a consolidation will remove it. */
  queued: MemoryVersion[]
}

export interface ForgettingDeps {
  catalog: Catalog
  pipelines: ReadonlyMap<MemoryVersion, VersionPipeline>
  diagnostics: Diagnostics
  /** In-process state of a checkpoint (a compaction in flight) goes with its row. */
  dropCheckpoint?: (sessionId: string) => void
}

export class Forgetting {
  constructor(private readonly deps: ForgettingDeps) {}

  /**
   * Forgets what memory learned from the session, for `reason`. The session's mode is the caller's
   * (set before, for disabled and polluted). Never throws for a version whose database is not open.
   */
  forget(sessionId: string, reason: ForgetReason, options: { before?: number } = {}): ForgetReport {
    const report: ForgetReport = { versions: [], queued: [] }
    for (const pipeline of this.deps.pipelines.values()) {
      const forgotten = pipeline.forgetSession(sessionId, options)
      // Its records leave the search index now, not at the next search.
      if (forgotten.deleted) pipeline.refreshIndex({ recordsOnly: true })
      // A version whose folder still holds the session forgets it too, records or not.
      if (forgotten.deleted || forgotten.queued) report.versions.push(pipeline.version)
      if (forgotten.queued) {
        report.queued.push(pipeline.version)
        // Any earlier review of this version may show the session's text among the lines it added.
        this.deps.catalog.reviews?.clear(pipeline.version)
      }
    }
    const store = this.deps.catalog.store
    // A polluted session keeps its working state: it is kept out of learning, not erased.
    const keepCheckpoint = reason === "polluted"
    store?.forgetSession(sessionId, { deleted: reason === "deleted", keepCheckpoint })
    // Its title and folder go with it; a session that goes on existing keeps its times in the list.
    if (reason === "deleted") this.deps.catalog.sessions?.remove(sessionId)
    else this.deps.catalog.sessions?.hide(sessionId)
    if (!keepCheckpoint) this.deps.dropCheckpoint?.(sessionId)
    if (report.versions.length) {
      const queued = report.queued.length ? `; a consolidation will remove it from ${report.queued.join(" and ")} within minutes` : ""
      this.deps.diagnostics.report("info", "forgetting", `forgot session ${sessionId} (${describe(reason)})${queued}`)
    }
    return report
  }

  /**
   * Kept out means nothing kept, whoever set the mode and whatever put the records there: every
   * record or job of a session that is not enabled is forgotten, and a disabled session's
   * checkpoint goes; a record learned before a session's forget time goes too. Cheap when there is
   * nothing to do (a few indexed queries per version).
   */
  sweep(): number {
    const store = this.deps.catalog.store
    if (!store) return 0
    let swept = 0
    const out = new Map(store.keptOut().map((entry) => [entry.sessionId, entry.mode] as const))
    if (out.size) {
      const held = new Set<string>()
      for (const pipeline of this.deps.pipelines.values()) for (const id of pipeline.heldOf(new Set(out.keys()))) held.add(id)
      for (const id of this.deps.catalog.checkpoints?.sessionsOf(new Set([...out].filter(([, mode]) => mode === "disabled").map(([id]) => id))) ?? []) held.add(id)
      for (const id of held) this.forget(id, out.get(id) === "polluted" ? "polluted" : "disabled")
      swept += held.size
    }
    // A session forgotten on request keeps nothing learned before its forget time, wherever a record
    // of that time came from; what it said later stays.
    const forgotten = store.forgottenBefore()
    if (forgotten.size) {
      const stale = new Set<string>()
      for (const pipeline of this.deps.pipelines.values()) for (const id of pipeline.learnedBefore(forgotten)) stale.add(id)
      for (const id of stale) {
        for (const pipeline of this.deps.pipelines.values()) {
          const forgottenHere = pipeline.forgetSession(id, { before: forgotten.get(id)! })
          if (forgottenHere.queued) this.deps.catalog.reviews?.clear(pipeline.version)
        }
      }
      swept += stale.size
    }
    return swept
  }
}

function describe(reason: ForgetReason): string {
  switch (reason) {
    case "deleted":
      return "deleted in OpenCode"
    case "forgotten":
      return "forgotten on request"
    default:
      return `set to ${reason}`
  }
}

/** Modes that keep a session out of memory, and what forgetting calls them. */
export function reasonOfMode(mode: MemoryMode): ForgetReason | undefined {
  return mode === "enabled" ? undefined : mode
}

export interface ReconcilerDeps {
  host: Host
  forgetting: Forgetting
  /** Every session memory holds a record or checkpoint of, from this host. */
  known: () => Set<string>
  diagnostics: Diagnostics
  now: () => number
  /** After each pass (the instance refreshes its registration with the home). */
  afterPass?: () => void
}

export interface ReconcileReport {
  outcome: "done" | "partial_listing" | "lookup_untrusted" | "lookup_failed"
  /** Sessions memory holds that the listing did not show. */
  missing: number
  /** Confirmed gone and forgotten. */
  forgotten: string[]
  /** Looked up and found (archived, a child session, or a listing gap). */
  present: number
}

export const RECONCILE = Object.freeze({
  /** Look-ups of sessions missing from a listing, per pass: what a pass may cost the host. */
  LOOKUPS_PER_PASS: 25,
  /** Look-ups in flight at once. */
  CONCURRENCY: 4,
  /** A session found by look-up is not looked up again for this long. */
  PRESENT_TTL_MS: 6 * 60 * 60 * 1000,
  /** Passes riding on phase-1 listings run at most this often per instance (the listing is cached 30 s). */
  INTERVAL_MS: 60_000,
})

/**
 * Compares what memory holds with the sessions the host still has, and forgets the ones it no
 * longer has. Only a complete listing is compared; a session missing from it is forgotten only
 * after the host, asked for that session, says it does not exist, and that answer is trusted only
 * once the same look-up found a session the listing showed. A host that cannot be reached, a
 * partial listing, or a look-up that fails forgets nothing.
 */
export class Reconciler {
  /** Sessions the host confirmed although its listing left them out: when, per session. */
  private readonly present = new Map<string, number>()
  private readonly flight = new SingleFlight<ReconcileReport>()
  private last = Number.NEGATIVE_INFINITY

  constructor(private readonly deps: ReconcilerDeps) {}

  /** A phase-1 listing arrived: a pass in the background, unless one ran within INTERVAL_MS. */
  soon(listing: SessionListing, signal: AbortSignal): void {
    if (this.deps.now() - this.last < RECONCILE.INTERVAL_MS) return
    void this.flight.run(() => this.reconcile(listing, signal))?.catch((error) => this.deps.diagnostics.error("reconcile", error))
  }

  /** Before a consolidation chooses its inputs: a pass on a fresh listing, whatever ran before. */
  async fresh(signal: AbortSignal): Promise<void> {
    await this.flight.settled()
    const listing = await this.deps.host.listRootSessions({ signal })
    await (this.flight.run(() => this.reconcile(listing, signal)) ?? this.flight.settled())
  }

  /** Resolves once the pass in flight, if any, is over. */
  settled(): Promise<void> {
    return this.flight.settled()
  }

  /** One pass: "kept out" swept, then what memory holds compared with `listing`. */
  async reconcile(listing: SessionListing, signal: AbortSignal): Promise<ReconcileReport> {
    this.last = this.deps.now()
    this.deps.forgetting.sweep()
    const report = await this.compare(listing, signal)
    this.deps.afterPass?.()
    return report
  }

  private async compare(listing: SessionListing, signal: AbortSignal): Promise<ReconcileReport> {
    const report: ReconcileReport = { outcome: "done", missing: 0, forgotten: [], present: 0 }
    if (!listing.complete) return { ...report, outcome: "partial_listing" }
    const now = this.deps.now()
    const listed = new Set(listing.sessions.map((session) => session.id))
    const missing: string[] = []
    for (const id of this.deps.known()) {
      if (listed.has(id)) continue
      const seen = this.present.get(id)
      if (seen !== undefined && now - seen < RECONCILE.PRESENT_TTL_MS) continue
      missing.push(id)
    }
    report.missing = missing.length
    if (!missing.length) return report
    // A look-up that calls a listed session gone is broken (a route a release lacks, say): then
    // none of its answers counts. An empty listing gives nothing to check it with.
    const probe = listing.sessions[0]
    if (!probe) return { ...report, outcome: "lookup_untrusted" }
    try {
      if (!(await this.deps.host.sessionExists(probe.id, signal))) {
        this.deps.diagnostics.report("warn", "reconcile", `OpenCode calls its own listed session ${probe.id} missing; not forgetting anything on its word`)
        return { ...report, outcome: "lookup_untrusted" }
      }
    } catch (error) {
      this.deps.diagnostics.report("warn", "reconcile", `could not look up sessions in OpenCode; nothing forgotten this pass: ${errorMessage(error)}`)
      return { ...report, outcome: "lookup_failed" }
    }
    const batch = missing.sort().slice(0, RECONCILE.LOOKUPS_PER_PASS)
    let failed = false
    let next = 0
    const worker = async () => {
      while (next < batch.length && !failed && !signal.aborted) {
        const id = batch[next++]!
        try {
          if (await this.deps.host.sessionExists(id, signal)) {
            this.present.set(id, this.deps.now())
            report.present++
          } else {
            this.deps.forgetting.forget(id, "deleted")
            this.present.delete(id)
            report.forgotten.push(id)
          }
        } catch (error) {
          failed = true
          this.deps.diagnostics.report("warn", "reconcile", `could not look up session ${id} in OpenCode; trying again at a later pass: ${errorMessage(error)}`)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(RECONCILE.CONCURRENCY, batch.length) }, worker))
    if (report.forgotten.length) this.deps.diagnostics.report("info", "reconcile", `forgot ${report.forgotten.length} session(s) OpenCode no longer has`)
    return failed ? { ...report, outcome: "lookup_failed" } : report
  }
}
