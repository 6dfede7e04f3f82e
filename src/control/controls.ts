// What the memory tools and the citation loop reach in a plugin instance, each call routed to the
// memory version of the session it comes from: the folder its tools see, where its notes go,
// which version's usage its citations count in, and the controls (modes, reset, inspect) that
// span every version. The composition root (src/memory.ts) builds one and hands it to the tools.
import type { InspectReport, MemoryToolPorts, ResetReport } from "../../tools/ports.js"
import type { LocalMemoryBackend } from "../backend/local-backend.js"
import { MemoryError } from "../backend/errors.js"
import { addNote, type NewNote, type WrittenNote } from "../backend/notes.js"
import { JOBS } from "../constants.js"
import { errorMessage, type Diagnostics } from "../diagnostics.js"
import type { HostRegistrations } from "../host.js"
import type { MemoryOptions } from "../options.js"
import type { Catalog } from "../pipeline/catalog.js"
import type { SessionVersions } from "../pipeline/session-versions.js"
import type { VersionPipeline } from "../pipeline/version-pipeline.js"
import type { CitationSink } from "../read/citation-usage.js"
import { redact } from "../redact/redact.js"
import type { CitedRange, MemoryMode } from "../store/memory-store.js"
import type { MemoryPaths, MemoryVersion } from "../util/paths.js"
import type { RateLimitBreaker } from "../write/helpers/breaker.js"
import { reasonOfMode, type ForgetReport, type Forgetting } from "./forgetting.js"
import { renderInspect, type InspectSnapshot, type Recovery } from "./inspect.js"
import { resetAllVersions } from "./reset.js"
import { listSessions, waitingToGoIdle, type SessionListing } from "./session-list.js"

export interface ControlsDeps {
  options: MemoryOptions
  /** The selected version's paths (the home shown by inspect). */
  paths: MemoryPaths
  catalog: Catalog
  pipelines: ReadonlyMap<MemoryVersion, VersionPipeline>
  versions: SessionVersions
  breaker: RateLimitBreaker
  diagnostics: Diagnostics
  warnings: readonly string[]
  now: () => number
  disposed: () => boolean
  /** Keys of the user's own helper-agent blocks that were dropped (learned in the config hook). */
  ignoredAgentKeys: () => Readonly<Record<string, readonly string[]>>
  /** The run-time switches (Memory.switches). */
  switches: Readonly<{ useMemories: boolean; generateMemories: boolean }>
  /** How the host finds sessions now, when the host can say (OpenCode 2). */
  hostStatus?: () => string
  /** What the host adapter registered, and what the host refused. */
  hostRegistrations?: () => HostRegistrations
  /** Why background learning waits, if it does (Memory.learningHold). */
  hold?: () => string | undefined
  /** What a failed open or write left to try again, if anything (Memory.recovery). */
  recovery?: () => Recovery | undefined
  /** The one path by which a session leaves memory. */
  forgetting: Forgetting
  /**
   * Whether the host has a session memory knows nothing of (a mode or a forget is refused for an
   * id neither knows). Throws when the host cannot be asked.
   */
  sessionExists?: (sessionId: string) => Promise<boolean>
}

export class MemoryControls implements MemoryToolPorts, CitationSink {
  readonly memoryRoots: readonly string[]

  constructor(private readonly deps: ControlsDeps) {
    this.memoryRoots = [...deps.pipelines.values()].map((p) => p.paths.memoryRoot)
  }

  /** The pipeline of the version `sessionId` reads; a call here is a real use, and stamps it. */
  private own(sessionId: string | undefined): VersionPipeline {
    return this.deps.pipelines.get(this.deps.versions.resolve(sessionId, { stamp: true }))!
  }

  backendFor(sessionId: string): LocalMemoryBackend {
    return this.own(sessionId).backend
  }

  /**
   * A note is a workspace input: the next consolidation folds it in, with no new session needed.
   * It goes to the session's version, and with dual-write to every version that learns, so both
   * keep what the user asked for. The path returned is the one in the session's version.
   */
  addNote(input: NewNote): WrittenNote {
    const own = this.own(input.sessionId)
    const others = this.deps.options.dual_write ? [...this.deps.pipelines.values()].filter((p) => p !== own && p.writes) : []
    let written: WrittenNote | undefined
    for (const pipeline of [own, ...others]) {
      const note = addNote({ root: pipeline.paths.memoryRoot, now: () => new Date(this.deps.now()), redact }, input)
      written ??= note
      pipeline.backend.invalidate()
      pipeline.phase2?.wake()
    }
    return written!
  }

  /**
   * Sets a session's mode. Kept out (disabled, polluted) means nothing kept: what memory learned
   * from it is forgotten now (a consolidation removes it from the folder within minutes), and a
   * disabled session's checkpoint goes too. `checked` says the caller knows the session exists
   * (the tool's own session); otherwise an id that neither memory nor the host knows is refused.
   */
  async setMode(sessionId: string, mode: MemoryMode, options: { checked?: boolean } = {}): Promise<{ previous: MemoryMode; forgotten: ForgetReport | undefined }> {
    const catalog = this.deps.catalog.require()
    if (!options.checked) await this.requireSession(sessionId)
    const previous = catalog.setMode(sessionId, mode)
    const reason = reasonOfMode(mode)
    const forgotten = reason ? this.deps.forgetting.forget(sessionId, reason) : undefined
    // Back in: a session with no record left is simply learned again; one still holding records
    // (a version that does not forget, say) is looked at again.
    if (!reason && previous !== "enabled" && !this.deps.disposed()) for (const pipeline of this.deps.pipelines.values()) pipeline.inputsMoved(sessionId)
    return { previous, forgotten }
  }

  /**
   * Forgets what memory learned from a session that goes on existing: its records, jobs,
   * checkpoint and audit rows, and everything it said so far, which phase 1 will not learn again
   * (only what is said after now). The session's mode is unchanged.
   */
  async forget(sessionId: string): Promise<ForgetReport> {
    const catalog = this.deps.catalog.require()
    await this.requireSession(sessionId)
    catalog.forgetBefore(sessionId, this.deps.now())
    return this.deps.forgetting.forget(sessionId, "forgotten")
  }

  /** The sessions kept out of memory, newest change first. */
  keptOut(): Array<{ sessionId: string; mode: MemoryMode; since: number }> {
    return this.deps.catalog.require().keptOut()
  }

  /** An id memory holds nothing of must be one the host has; anything else is a typo to refuse. */
  private async requireSession(sessionId: string): Promise<void> {
    const known = this.deps.catalog.store?.knows(sessionId) || [...this.deps.pipelines.values()].some((p) => p.heldOf(new Set([sessionId])).length > 0)
    if (known) return
    let exists: boolean
    try {
      if (!this.deps.sessionExists) throw new Error("no OpenCode to ask")
      exists = await this.deps.sessionExists(sessionId)
    } catch (error) {
      throw new MemoryError("unknown_session", `Memory holds nothing of session ${sessionId}, and OpenCode could not be asked whether it exists (${errorMessage(error)}); check the id and try again.`)
    }
    if (!exists) throw new MemoryError("unknown_session", `No session ${sessionId} exists, in memory or in OpenCode; check the id (OpenCode's ids start with "ses_").`)
  }

  /** The catalog counts each part once; the cited sessions' usage goes to the citing session's version. */
  recordCitation(partId: string, citingSession: string | undefined, sessionIds: readonly string[], files: readonly CitedRange[]): boolean {
    if (!this.deps.catalog.require().recordCitation(partId, citingSession, files)) return false
    this.own(citingSession).store()?.bumpUsage(sessionIds)
    return true
  }

  /** Erases what every version learned, both folders and every checkpoint; modes and stamps stay (reset.ts). */
  async reset(): Promise<ResetReport> {
    const { catalog } = this.deps
    const report = resetAllVersions(
      { store: catalog.require(), checkpoints: catalog.checkpoints, reviews: catalog.reviews, settings: catalog.settings, sessions: catalog.sessions },
      [...this.deps.pipelines.values()],
      this.deps.now(),
    )
    if (report.type === "reset") this.deps.diagnostics.report("info", "reset", `memory erased: ${report.outputs} outputs, ${report.jobs} jobs, ${report.checkpoints} checkpoints, ${report.files} folder entries; only what is said from now on is learned`)
    return report
  }

  /**
   * Every session memory knows (listed by the host, or holding something in `version`), with its
   * state in that version and when it becomes eligible. Reads only.
   */
  sessions(version: MemoryVersion): SessionListing[] {
    const { catalog, options } = this.deps
    const store = catalog.store
    if (!store) return []
    return listSessions({
      catalog: catalog.sessions?.all() ?? [],
      traces: this.deps.pipelines.get(version)?.store()?.sessionTraces() ?? new Map(),
      modes: new Map(store.keptOut().map((entry) => [entry.sessionId, entry.mode])),
      forgottenBefore: store.forgottenBefore(),
      resetEpoch: catalog.settings?.resetEpoch(),
      now: this.deps.now(),
      minIdleHours: options.min_rollout_idle_hours,
      maxAgeDays: options.max_rollout_age_days,
    })
  }

  /** Reads only: a status read never stamps a session. */
  inspect(): InspectReport {
    const { catalog, pipelines, paths } = this.deps
    const now = this.deps.now()
    const sessions = catalog.store ? this.sessions(this.deps.options.version) : []
    const waiting = waitingToGoIdle(sessions, now)
    const snapshot: InspectSnapshot = {
      now,
      home: { path: paths.home, source: paths.homeSource },
      catalog: { file: catalog.file, state: catalog.state(), counts: catalog.store?.counts() },
      versions: [...pipelines.values()].map((pipeline) => pipeline.snapshot()),
      jobErrors: [...pipelines.values()].flatMap((p) => (p.store()?.recentJobErrors(5) ?? []).map((job) => ({ ...job, version: p.version }))),
      options: this.deps.options,
      warnings: this.deps.warnings,
      diagnostics: this.deps.diagnostics.recent(),
      cooldownMs: JOBS.PHASE2_COOLDOWN_MS,
      forgetIntervalMs: JOBS.FORGET_INTERVAL_MS,
      redactions: catalog.store?.redactionTotals(),
      breakers: this.deps.breaker.list(),
      ignoredAgentKeys: this.deps.ignoredAgentKeys(),
      ...(catalog.checkpoints ? { checkpoints: catalog.checkpoints.counts() } : {}),
      ...optional("hold", this.deps.hold?.()),
      ...optional("recovery", this.deps.recovery?.()),
      ...optional("spend", catalog.ledger?.report()),
      ...optional("lastReview", catalog.reviews?.list(1)[0]),
      ...optional("keptOut", catalog.store?.keptOut()),
      ...optional("resetEpoch", catalog.settings?.resetEpoch()),
      ...(catalog.store ? { idleWaiting: { count: waiting.length, next: waiting.slice(0, 3).map((s) => ({ sessionId: s.sessionId, title: s.title, eligibleAt: s.eligibleAt! })) } } : {}),
      ...(catalog.store ? { projects: projectSummary(sessions, pipelines.get(this.deps.options.version)?.store()?.projectCounts() ?? []) } : {}),
      ...(this.deps.hostStatus
        ? { host: { sessions: this.deps.hostStatus(), switches: { ...this.deps.switches }, ...optional("registrations", this.deps.hostRegistrations?.()) } }
        : {}),
    }
    const { options, ...rest } = snapshot
    return { text: renderInspect(snapshot), data: { ...rest, options: { ...options } } }
  }
}

/** Sessions and records per project, the most of both first. */
function projectSummary(sessions: readonly SessionListing[], records: ReadonlyArray<{ key: string; name: string; records: number }>): Array<{ key: string; name: string; sessions: number; records: number }> {
  const projects = new Map<string, { key: string; name: string; sessions: number; records: number }>()
  for (const s of sessions) {
    if (!s.project) continue
    const entry = projects.get(s.project.key) ?? { ...s.project, sessions: 0, records: 0 }
    entry.sessions++
    projects.set(s.project.key, entry)
  }
  for (const r of records) projects.set(r.key, { ...(projects.get(r.key) ?? { key: r.key, name: r.name, sessions: 0 }), records: r.records })
  return [...projects.values()].sort((a, b) => b.sessions + b.records - (a.sessions + a.records) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** `{ [key]: value }` when there is a value, else nothing (the snapshot's optional fields). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}
