// What the memory tools and the citation loop reach in a plugin instance, each call routed to the
// memory version of the session it comes from: the folder its tools see, where its notes go,
// which version's usage its citations count in, and the controls (modes, reset, inspect) that
// span every version. The composition root (src/memory.ts) builds one and hands it to the tools.
import type { InspectReport, MemoryToolPorts, ResetReport } from "../../tools/ports.js"
import type { LocalMemoryBackend } from "../backend/local-backend.js"
import { addNote, type NewNote, type WrittenNote } from "../backend/notes.js"
import { JOBS } from "../constants.js"
import type { Diagnostics } from "../diagnostics.js"
import type { MemoryOptions } from "../options.js"
import type { Catalog } from "../pipeline/catalog.js"
import type { SessionVersions } from "../pipeline/session-versions.js"
import type { VersionPipeline } from "../pipeline/version-pipeline.js"
import type { CitationSink } from "../read/citation-usage.js"
import { redact } from "../redact/redact.js"
import type { CitedRange, MemoryMode } from "../store/memory-store.js"
import type { MemoryPaths, MemoryVersion } from "../util/paths.js"
import type { RateLimitBreaker } from "../write/breaker.js"
import { renderInspect, type InspectSnapshot } from "./inspect.js"
import { resetAllVersions } from "./reset.js"

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
  /** Why background learning waits, if it does (Memory.learningHold). */
  hold?: () => string | undefined
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

  /** A mode change that moves a session in or out of the inputs queues each version's phase 2. */
  setMode(sessionId: string, mode: MemoryMode): { previous: MemoryMode } {
    const previous = this.deps.catalog.require().setMode(sessionId, mode)
    const moved = (previous === "enabled") !== (mode === "enabled")
    if (moved && !this.deps.disposed()) for (const pipeline of this.deps.pipelines.values()) pipeline.inputsMoved(sessionId)
    return { previous }
  }

  /** The catalog counts each part once; the cited sessions' usage goes to the citing session's version. */
  recordCitation(partId: string, citingSession: string | undefined, sessionIds: readonly string[], files: readonly CitedRange[]): boolean {
    if (!this.deps.catalog.require().recordCitation(partId, citingSession, files)) return false
    this.own(citingSession).store()?.bumpUsage(sessionIds)
    return true
  }

  /** Erases what every version learned and both folders; modes and stamps stay (reset.ts). */
  async reset(): Promise<ResetReport> {
    const report = resetAllVersions(this.deps.catalog.require(), [...this.deps.pipelines.values()])
    if (report.type === "reset") this.deps.diagnostics.report("info", "reset", `memory erased: ${report.outputs} outputs, ${report.jobs} jobs, ${report.files} folder entries`)
    return report
  }

  /** Reads only: a status read never stamps a session. */
  inspect(): InspectReport {
    const { catalog, pipelines, paths } = this.deps
    const snapshot: InspectSnapshot = {
      now: this.deps.now(),
      home: { path: paths.home, source: paths.homeSource },
      catalog: { file: catalog.file, state: catalog.state(), counts: catalog.store?.counts() },
      versions: [...pipelines.values()].map((pipeline) => pipeline.snapshot()),
      jobErrors: [...pipelines.values()].flatMap((p) => (p.store()?.recentJobErrors(5) ?? []).map((job) => ({ ...job, version: p.version }))),
      options: this.deps.options,
      warnings: this.deps.warnings,
      diagnostics: this.deps.diagnostics.recent(),
      cooldownMs: JOBS.PHASE2_COOLDOWN_MS,
      redactions: catalog.store?.redactionTotals(),
      breakers: this.deps.breaker.list(),
      ignoredAgentKeys: this.deps.ignoredAgentKeys(),
      ...(catalog.checkpoints ? { checkpoints: catalog.checkpoints.counts() } : {}),
      ...optional("hold", this.deps.hold?.()),
      ...optional("spend", catalog.ledger?.report()),
      ...optional("lastReview", catalog.reviews?.list(1)[0]),
      ...(this.deps.hostStatus ? { host: { sessions: this.deps.hostStatus(), switches: { ...this.deps.switches } } } : {}),
    }
    const { options, ...rest } = snapshot
    return { text: renderInspect(snapshot), data: { ...rest, options: { ...options } } }
  }
}

/** `{ [key]: value }` when there is a value, else nothing (the snapshot's optional fields). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}
