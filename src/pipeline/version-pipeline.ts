// One memory version's whole pipeline, bound to that version by construction: its own database
// handle, job tables, phase-1 throttle, phase-2 guard and abort scopes, read path and tool
// backend, every one built from the version's descriptor and nothing else. Two pipelines in one
// process share only what is meant to be shared (the host, the catalog, the rate-limit breaker
// and the set of helper sessions), so nothing of one version can reach the other's rows or files.
//
// A pipeline reads always (a session stamped with its version keeps reading it) and writes only
// when its version is selected or dual-write is on.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import type { Diagnostics } from "../diagnostics.js"
import { errorMessage } from "../diagnostics.js"
import type { Host, HostSession, ModelRef, SessionListing } from "../host.js"
import type { MemoryOptions } from "../options.js"
import { LocalMemoryBackend } from "../backend/local-backend.js"
import type { RankedRecord } from "../backend/ranked-search.js"
import { ReadPath } from "../read/read-path.js"
import type { SpendPhase, Usage } from "../store/ledger.js"
import type { RedactionStage } from "../store/memory-store.js"
import type { ReviewSummary } from "../store/reviews.js"
import type { MemoryVersion } from "../util/paths.js"
import { Phase2Jobs } from "../store/phase2-jobs.js"
import { followProjects, type CurrentProject } from "../store/record-projects.js"
import type { DatabaseCheck } from "../store/database.js"
import type { SqlDatabase } from "../store/sqlite.js"
import { SegmentCaptures } from "../store/segment-captures.js"
import { Stage1Jobs } from "../store/stage1-jobs.js"
import { VersionStore, type RecordRow } from "../store/version-store.js"
import type { RateLimitBreaker } from "../write/helpers/breaker.js"
import { Phase1 } from "../write/phase1/phase1.js"
import { consolidationInputBudget, Phase2 } from "../write/phase2/phase2.js"
import type { OwnFiles } from "../write/transcript/own-output.js"
import type { ProjectIdentity } from "../write/phase1/project-identity.js"
import type { WorkspaceExtension } from "../write/phase2/workspace-extension.js"
import { hasWholeSnapshot, readableRoot, snapshotFile } from "../write/phase2/run-snapshot.js"
import { renderWorkspaceDiff } from "../write/phase2/workspace-diff.js"
import type { VersionSnapshot } from "../control/inspect.js"
import { handbookStats } from "../write/phase2/duplicates.js"
import { summaryStats } from "../control/summary-stats.js"
import { openReported } from "./open-store.js"
import { readiness } from "./readiness.js"
import type { VersionSpec } from "./versions.js"

export interface PipelineDeps {
  spec: VersionSpec
  /** True when this version learns: it is the selected version, or dual-write is on. */
  writes: boolean
  host: Host
  options: MemoryOptions
  now: () => number
  diagnostics: Diagnostics
  templatesDir: string
  /** Sessions this plugin instance started; shared by every version. */
  helperSessions: Set<string>
  /** Shared by every version: a model that hit a rate limit rests for both. */
  breaker: RateLimitBreaker
  workerId: string
  extractionModel: () => ModelRef | undefined
  consolidationModel: () => ModelRef | undefined
  /** Sessions whose mode is not enabled, from the catalog. */
  excludedSessions: () => ReadonlySet<string>
  recordRedactions: (sessionId: string, counts: Readonly<Record<string, number>>, stage: RedactionStage) => void
  /** The spend ledger (memory.db): what each helper session cost. */
  recordUsage?: (phase: SpendPhase, usage: Usage) => void
  /** Why background learning is held, if it is: paused, or the daily budget spent. */
  hold?: () => string | undefined
  /** Builds no phase 1 or phase 2: work is only queued in the database (the command-line tool). */
  passive?: boolean
  /** Keeps this version's consolidation reviews (memory.db). */
  recordReview?: (version: MemoryVersion, summary: ReviewSummary, diff: string) => void
  /** Exchanges with other agents this version's phase 2 runs (src/interop). */
  extensions: readonly WorkspaceExtension[]
  /** Read once per pass: before when nothing of a session is learned (a reset, a forget), if ever. */
  learningWindow?: () => (sessionId: string) => number | undefined
  /** Memory's own files: transcripts leave out tool calls that read them. */
  ownFiles?: OwnFiles
  /** The project a session belongs to, stored with its records. */
  projectOf?: (session: HostSession) => ProjectIdentity | undefined
  /** Each fresh listing phase 1 makes, for reconciliation. */
  onDiscovered?: (listing: SessionListing, signal: AbortSignal) => void
  /** A claimed session OpenCode no longer has. */
  onSessionGone?: (sessionId: string) => void
  /** Reconciliation before a consolidation chooses its inputs. */
  beforeSelect?: (signal: AbortSignal) => Promise<void>
  /** Opens the version's own file with a driver; tests wrap it to inject faults (a full disk). */
  connect?: (file: string) => SqlDatabase
  /** What opening the version's own file checks (store/database.ts). */
  databaseCheck?: DatabaseCheck
  /** Before each phase-1 pass: the owner opens again a database that could not be opened. */
  beforePass?: () => void
}

export interface PipelineStoreState {
  status: "closed" | "absent" | "open" | "failed"
  driver?: string
  schemaVersion?: number
  error?: string
}

interface Tables {
  store: VersionStore
  stage1: Stage1Jobs
  captures: SegmentCaptures
  phase2: Phase2Jobs
}

export class VersionPipeline {
  readonly version: VersionSpec["version"]
  readonly paths: VersionSpec["paths"]
  readonly readPath: ReadPath
  readonly backend: LocalMemoryBackend
  /** Present only when this version writes. */
  readonly phase1: Phase1 | undefined
  readonly phase2: Phase2 | undefined
  private tables: Tables | undefined
  private state: PipelineStoreState = { status: "closed" }
  private ownsDb = false

  constructor(private readonly deps: PipelineDeps) {
    const { spec } = deps
    this.version = spec.version
    this.paths = spec.paths
    this.readPath = new ReadPath({
      memoryRoot: spec.paths.memoryRoot,
      summaryFile: spec.paths.summary,
      dedicatedTools: deps.options.dedicated_tools,
      templates: spec.readTemplates,
      isHelperSession: (id) => deps.helperSessions.has(id),
      onRefuse: (reason) => deps.diagnostics.report("warn", "read-path", reason),
      accepts: spec.consolidation.acceptsSummary,
      pendingCopy: { summaryFile: snapshotFile(spec.paths.memoryRoot, path.basename(spec.paths.summary)), whole: () => hasWholeSnapshot(spec.paths.memoryRoot) },
    })
    this.backend = new LocalMemoryBackend({
      root: spec.paths.memoryRoot,
      view: () => this.readableRoot(),
      index: {
        file: spec.paths.index,
        records: () => {
          const store = this.tables?.store
          if (!store) return undefined
          return { fingerprint: store.unconsolidatedFingerprint(), rows: () => store.unconsolidatedRecords().map(rankedRecord) }
        },
        onRebuild: (reason) => deps.diagnostics.report("warn", "search", reason),
      },
    })
    // A passive instance (the CLI) queues work in the database for OpenCode's instances and runs none itself.
    if (!deps.writes || deps.passive) return
    const common = {
      host: deps.host,
      options: deps.options,
      now: deps.now,
      diagnostics: deps.diagnostics,
      memoryRoot: spec.paths.memoryRoot,
      helperSessions: deps.helperSessions,
      breaker: deps.breaker,
      workerId: deps.workerId,
      ...(deps.recordUsage ? { recordUsage: deps.recordUsage } : {}),
      ...(deps.hold ? { hold: deps.hold } : {}),
    }
    this.phase1 = new Phase1({
      ...common,
      ...(deps.learningWindow ? { learningWindow: deps.learningWindow } : {}),
      ...(deps.ownFiles ? { ownFiles: deps.ownFiles } : {}),
      ...(deps.projectOf ? { projectOf: deps.projectOf } : {}),
      ...(deps.onDiscovered ? { onDiscovered: deps.onDiscovered } : {}),
      ...(deps.onSessionGone ? { onSessionGone: deps.onSessionGone } : {}),
      strategy: spec.extraction,
      jobs: () => this.tables?.stage1,
      captures: () => this.tables?.captures,
      excludedSessions: deps.excludedSessions,
      extractionModel: deps.extractionModel,
      afterPass: () => this.afterExtraction(),
      ...(deps.beforePass ? { beforePass: deps.beforePass } : {}),
      recordRedactions: deps.recordRedactions,
    })
    this.phase2 = new Phase2({
      ...common,
      strategy: spec.consolidation,
      templatesDir: deps.templatesDir,
      jobs: () => this.tables?.phase2,
      excludedSessions: deps.excludedSessions,
      consolidationModel: deps.consolidationModel,
      extensions: () => deps.extensions,
      ...(deps.beforeSelect ? { beforeSelect: deps.beforeSelect } : {}),
      extractionsSettled: () => this.phase1?.inFlight() ?? Promise.resolve(),
      ...(deps.recordReview ? { recordReview: (summary: ReviewSummary, diff: string) => deps.recordReview!(spec.version, summary, diff) } : {}),
      onConsolidated: (sessions) => {
        this.tables?.store.recordConsolidated(sessions)
        this.invalidate()
        this.refreshIndex()
      },
    })
  }

  get writes(): boolean {
    return this.deps.writes
  }

  /** This version's tables, once its database is open. */
  store(): VersionStore | undefined {
    return this.tables?.store
  }

  storeState(): PipelineStoreState {
    return { ...this.state }
  }

  /**
   * Opens the version's database: memory.db's handle for a version that shares it, else its own
   * file. A version that does not write and has never written keeps no database (nothing is
   * created for a version the user never turned on). Throws after recording the failure.
   */
  open(catalogDb: SqlDatabase | undefined): void {
    const { spec } = this.deps
    // Opened early by an event of a short-lived process (Memory.ensureStores), then by start-up.
    if (this.state.status === "open" || this.state.status === "absent") return
    try {
      let db: SqlDatabase
      if (spec.sharesCatalogDb) {
        if (!catalogDb) throw new Error("memory.db is not open")
        db = catalogDb
        this.state = { status: "open", driver: db.driver }
      } else {
        if (!this.deps.writes && !fs.existsSync(spec.paths.db)) {
          this.state = { status: "absent" }
          return
        }
        const opened = openReported(spec.paths.db, { migrations: spec.migrations, now: this.deps.now, ...(this.deps.connect ? { connect: this.deps.connect } : {}), ...(this.deps.databaseCheck ? { check: this.deps.databaseCheck } : {}) }, this.deps.diagnostics)
        db = opened.db
        this.ownsDb = true
        this.state = { status: "open", driver: db.driver, schemaVersion: opened.migrated.to }
      }
      this.tables = {
        store: new VersionStore(spec.version, db, this.deps.now),
        stage1: new Stage1Jobs(db, this.deps.now),
        captures: new SegmentCaptures(db, this.deps.now),
        phase2: new Phase2Jobs(db, this.deps.now),
      }
    } catch (error) {
      this.state = { status: "failed", error: errorMessage(error) }
      throw error
    }
  }

  /** After each phase-1 pass: retention pruning, then a consolidation if one is due. */
  private afterExtraction(): void {
    const pruned = this.tables?.phase2.pruneUnused(this.deps.options.max_unused_days) ?? 0
    if (pruned) this.deps.diagnostics.report("info", "retention", `${this.version}: pruned ${pruned} memory record(s) unused for ${this.deps.options.max_unused_days} days`)
    this.phase2?.trigger()
  }

  /** Starts a consolidation when this version writes (it decides itself whether there is work). */
  consolidate(): void {
    this.phase2?.trigger()
  }

  /** This version's records follow their sessions' projects as a listing found them (record-projects.ts); how many changed. */
  followProjects(current: ReadonlyMap<string, CurrentProject>): number {
    return this.tables ? followProjects(this.tables.stage1.db, current) : 0
  }

  /**
   * This version forgets what it learned from a session (deleted, kept out, or forgotten on
   * request). When the folder holds something of it, a version that learns queues it for the next
   * consolidation, which may run within minutes (phase2-jobs.ts); the run is started here when this
   * instance runs phase 2.
   */
  forgetSession(sessionId: string, options: { before?: number } = {}): { deleted: boolean; queued: boolean } {
    const forgotten = this.tables?.phase2.forgetSession(sessionId, { queue: this.deps.writes, ...options }) ?? { deleted: false, queued: false }
    if (forgotten.queued) this.phase2?.trigger()
    return forgotten
  }

  /** Every session this version holds a record of from the host (reconciliation's candidates). */
  knownSessions(): string[] {
    return this.tables?.phase2.knownSessions(this.deps.host.kind) ?? []
  }

  /** Which forgotten sessions still have a record from before their forget time. */
  learnedBefore(forgotten: ReadonlyMap<string, number>): string[] {
    return this.tables?.phase2.learnedBefore(forgotten) ?? []
  }

  /** Which of `sessions` this version holds a record or job of. */
  heldOf(sessions: ReadonlySet<string>): string[] {
    return this.tables?.phase2.heldOf(sessions) ?? []
  }

  /** A session moved into or out of the inputs; phase 2 looks again when this version holds a record of it. */
  inputsMoved(sessionId: string): boolean {
    const queued = this.tables?.store.queueIfHasOutput(sessionId) ?? false
    if (queued) this.phase2?.trigger()
    return queued
  }

  /** This version as memory_inspect shows it; reads only. */
  snapshot(): VersionSnapshot {
    const { spec, options } = this.deps
    const store = this.tables?.store
    const summary = path.join(this.readableRoot(), path.basename(this.paths.summary))
    // V1's handbook: its size against the budget and its repeated entries (issue 39).
    const handbook = this.version === "v1" ? handbookStats(this.readableRoot()) : undefined
    return {
      version: this.version,
      selected: this.version === options.version,
      writes: this.writes,
      paths: this.paths,
      store: this.storeState(),
      counts: store?.counts(),
      phase2: store?.phase2Job(),
      summary: summaryStats(summary, options.use_memories),
      ...(handbook ? { handbook } : {}),
      ...(this.writes && this.deps.extensions.length ? { extensions: this.deps.extensions.map((extension) => extension.describe()) } : {}),
      ...(spec.tracksReadiness ? { readiness: readiness(summary, store?.maxConsolidated() ?? 0, options.v2_ready_sessions) } : {}),
      ...(this.phase1?.lastBudget() ? { extraction: this.phase1.lastBudget()! } : {}),
    }
  }

  /**
   * What the next consolidation would be shown: the version's inputs synced into a scratch copy of
   * the folder (symlinks left out), diffed against its baseline and redacted. The folder itself is
   * not touched; imports from other agents, which sync only inside a run, are not included.
   */
  async pendingDiff(): Promise<{ changes: Array<{ status: string; path: string }>; text: string } | undefined> {
    const phase2 = this.tables?.phase2
    if (!phase2) return undefined
    const { options, now } = this.deps
    // Committed memory only: an unfinished run's output is not what the next run starts from.
    const root = this.readableRoot()
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-pending-"))
    try {
      if (fs.existsSync(root)) fs.cpSync(root, scratch, { recursive: true, filter: (source) => !fs.lstatSync(source).isSymbolicLink() })
      const { ensureBaseline, workspaceDiff, workspaceStatus } = await import("../write/phase2/git-baseline.js")
      // A home that was reset or imported, or never consolidated, has no baseline yet: the next
      // run commits the folder as it stands before it syncs the inputs, and so does this preview.
      await ensureBaseline(scratch, now)
      // The same token budget a run would choose its inputs within (before any overflow shrinks it).
      const window = await this.deps.host.contextLimit(this.deps.consolidationModel(), AbortSignal.timeout(10_000)).catch(() => undefined)
      const inputs = phase2.selectInputs(options.max_raw_memories_for_consolidation, options.max_unused_days, this.deps.excludedSessions(), consolidationInputBudget(window))
      await this.deps.spec.consolidation.syncInputs(scratch, inputs, now)
      const changes = await workspaceStatus(scratch)
      return { changes, text: renderWorkspaceDiff(changes, await workspaceDiff(scratch, changes)) }
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true })
    }
  }

  /**
   * The folder as readers see it now: while a consolidation is unfinished (running here or in
   * another process, or killed), the copy it keeps of memory as it was; its output only once it
   * was validated (write/run-snapshot.ts).
   */
  readableRoot(): string {
    return readableRoot(this.paths.memoryRoot)
  }

  /** Drops cached bytes after the plugin itself changed this version's folder. */
  invalidate(): void {
    this.readPath.invalidate()
    this.backend.invalidate()
  }

  /**
   * Brings the ranked index up to date with the folder and the records (after a consolidation, a
   * forget or a reset, so the next search is quick and no forgotten text waits in the index for
   * one); never throws.
   */
  refreshIndex(options: { recordsOnly?: boolean } = {}): void {
    // An index never built holds nothing to bring up to date; the first ranked search builds it.
    if (!fs.existsSync(this.paths.index)) return
    try {
      if (options.recordsOnly) this.backend.ranked.refreshRecordsNow()
      else this.backend.ranked.refreshNow()
    } catch (error) {
      this.deps.diagnostics.report("warn", "search", `the search index was not updated: ${errorMessage(error)}; the next ranked search tries again`)
    }
  }

  async dispose(): Promise<void> {
    await Promise.all([this.phase1?.dispose(), this.phase2?.dispose()])
    this.backend.ranked.close()
    if (this.ownsDb) this.tables?.store.db.close()
    this.tables = undefined
    this.ownsDb = false
    this.state = { status: "closed" }
  }
}

/** A stored record as the ranked index reads it. */
function rankedRecord(row: RecordRow): RankedRecord {
  return {
    sessionId: row.session_id,
    rawMemory: row.raw_memory,
    rolloutSummary: row.rollout_summary,
    slug: row.rollout_slug,
    updatedAt: Number(row.source_updated_at),
    projectKey: row.project_key,
    projectName: row.project_name,
  }
}
