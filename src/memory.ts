// The composition root: one Memory per plugin instance. It parses the options, opens the catalog
// (memory.db), builds one pipeline per memory version (src/pipeline) and routes each host event,
// tool call and model call to the pipeline it belongs to. Every piece of state is owned here or
// by a pipeline, so two instances in one process never see each other's.
import path from "node:path"
import type { InspectReport, MemoryToolPorts, ResetReport } from "../tools/ports.js"
import { createMemoryTools } from "../tools/index.js"
import type { ToolSpec } from "../tools/spec.js"
import type { LocalMemoryBackend } from "./backend/local-backend.js"
import { addNote, type NewNote, type WrittenNote } from "./backend/notes.js"
import { JOBS } from "./constants.js"
import { renderInspect, type InspectSnapshot } from "./control/inspect.js"
import { resetAllVersions } from "./control/reset.js"
import { Diagnostics, errorMessage } from "./diagnostics.js"
import type { Host, ModelRef } from "./host.js"
import { parseOptions, type MemoryOptions } from "./options.js"
import { VersionPipeline } from "./pipeline/version-pipeline.js"
import { SessionVersions } from "./pipeline/session-versions.js"
import { VERSIONS, versionSpec } from "./pipeline/versions.js"
import { CitationUsage } from "./read/citation-usage.js"
import { isConversationCall, type SystemCall } from "./read/read-path.js"
import { redact } from "./redact/redact.js"
import { openDatabase } from "./store/database.js"
import { MemoryStore, type CitedRange, type MemoryMode } from "./store/memory-store.js"
import { markPolluted } from "./store/pollution.js"
import { packageRoot } from "./util/package-root.js"
import { ENV_TEST_ROOT, memoryPaths, resolveHome, type MemoryPaths, type MemoryVersion } from "./util/paths.js"
import { prepareRoot } from "./util/prepare-root.js"
import { RateLimitBreaker } from "./write/breaker.js"
import { ExternalContext } from "./write/external-context.js"
import { describeIgnoredAgentKeys } from "./write/helper-agents.js"
import { deleteLeftoverHelpers } from "./write/helper-sessions.js"

export const ENV_TEST_FAULTS = "OPENCODE_CODEX_MEMORY_TEST_FAULTS"
/** Shifts the plugin's clock (milliseconds), so tests can make sessions old without waiting. */
export const ENV_TEST_CLOCK_OFFSET = "OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS"
/** "1" gives the helper agents OpenCode's default prompt instead of their own (the benchmark's "before"). */
export const ENV_TEST_DEFAULT_HELPER_PROMPT = "OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT"

export interface MemoryDeps {
  host: Host
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  now?: () => number
  /** The folder of the host instance this plugin instance serves. */
  directory?: string
  /** Folder holding `templates/` and `opencode.json`; found from the module's location by default. */
  packageDir?: string
}

export interface StoreState {
  status: "closed" | "opening" | "open" | "failed"
  driver?: string
  schemaVersion?: number
  error?: string
}

export class Memory implements MemoryToolPorts {
  readonly options: MemoryOptions
  readonly warnings: readonly string[]
  /** The selected version's paths: where new sessions read, and the home's catalog database. */
  readonly paths: MemoryPaths
  readonly diagnostics: Diagnostics
  readonly packageDir: string
  /** Hook names that fail on purpose; read from the environment only under a test root. */
  readonly faults: ReadonlySet<string>
  /** Whether the helper agents carry their own prompt; turned off only under a test root. */
  readonly helperPrompts: boolean
  /** Sessions this instance started itself; they never get memory injected nor get extracted. */
  readonly helperSessions = new Set<string>()
  readonly citations: CitationUsage
  /** Models that hit a rate limit or quota, paused for an hour (every phase of every version shares it). */
  readonly breaker: RateLimitBreaker
  /** One pipeline per version: each reads always, and writes when selected or dual-writing. */
  readonly pipelines: ReadonlyMap<MemoryVersion, VersionPipeline>
  /**
   * True when this instance serves a memory folder itself: OpenCode starts one for the helper
   * sessions (their directory is a memory root). It adds the helper agents and nothing else.
   */
  readonly servesHelpers: boolean
  private readonly externalContext: ExternalContext
  /** OpenCode's configured models, learned in the config hook. */
  private hostModels: { model?: string; small_model?: string } = {}
  /** Keys of the user's own helper-agent blocks that were dropped, per agent (config hook). */
  private helperAgentOverrides: Record<string, string[]> = {}
  private readonly versions: SessionVersions
  private readonly catalogDb: string
  private catalog: MemoryStore | undefined
  private readonly now: () => number
  private storeState: StoreState = { status: "closed" }
  private disposed = false

  constructor(rawOptions: unknown, private readonly deps: MemoryDeps) {
    const parsed = parseOptions(rawOptions)
    this.options = parsed.options
    this.warnings = [...parsed.warnings, ...unsupportedWarnings(parsed.options)]
    const home = resolveHome(this.options.home, deps.env, deps.homedir)
    this.paths = memoryPaths(home.home, home.source, this.options.version)
    this.catalogDb = memoryPaths(home.home, home.source, "v1").db
    const offset = deps.env[ENV_TEST_ROOT] ? Number(deps.env[ENV_TEST_CLOCK_OFFSET] ?? 0) || 0 : 0
    const clock = deps.now ?? Date.now
    this.now = offset ? () => clock() + offset : clock
    this.diagnostics = new Diagnostics(deps.host, this.now)
    this.packageDir = deps.packageDir ?? packageRoot()
    this.faults = deps.env[ENV_TEST_ROOT] ? parseList(deps.env[ENV_TEST_FAULTS]) : new Set()
    this.helperPrompts = !(deps.env[ENV_TEST_ROOT] && deps.env[ENV_TEST_DEFAULT_HELPER_PROMPT] === "1")
    this.breaker = new RateLimitBreaker(this.now)
    this.externalContext = new ExternalContext(deps.host, this.now)
    this.citations = new CitationUsage({
      sink: () => (this.catalog ? this : undefined),
      onError: (error) => this.diagnostics.error("citations", error),
    })
    const templatesDir = path.join(this.packageDir, "templates")
    const workerId = `pid:${process.pid}:${Math.random().toString(36).slice(2, 10)}`
    const pipelines = new Map<MemoryVersion, VersionPipeline>()
    for (const version of VERSIONS) {
      pipelines.set(
        version,
        new VersionPipeline({
          spec: versionSpec(version, home, templatesDir),
          writes: this.options.generate_memories && (version === this.options.version || this.options.dual_write),
          host: deps.host,
          options: this.options,
          now: this.now,
          diagnostics: this.diagnostics,
          templatesDir,
          helperSessions: this.helperSessions,
          breaker: this.breaker,
          workerId,
          extractionModel: () => parseModel(this.options.extract_model ?? this.hostModels.small_model),
          consolidationModel: () => parseModel(this.options.consolidation_model ?? this.hostModels.model),
          excludedSessions: () => this.catalog?.sessionsNotEnabled() ?? new Set(),
          recordRedactions: (sessionId, counts, stage) => this.catalog?.recordRedactions(sessionId, counts, stage),
          onFolderChanged: () => undefined,
        }),
      )
    }
    this.pipelines = pipelines
    this.versions = new SessionVersions({ catalog: () => this.catalog, selected: this.options.version, onError: (error) => this.diagnostics.error("version-stamp", error) })
    this.servesHelpers =
      deps.directory !== undefined && [...pipelines.values()].some((p) => path.resolve(deps.directory!) === path.resolve(p.paths.memoryRoot))
  }

  /** The selected version's memory root (the agents' grant, the reset's approval pattern). */
  get memoryRoot(): string {
    return this.paths.memoryRoot
  }

  get memoryRoots(): string[] {
    return [...this.pipelines.values()].map((p) => p.paths.memoryRoot)
  }

  pipeline(version: MemoryVersion): VersionPipeline {
    return this.pipelines.get(version)!
  }

  /** The pipelines that learn: the selected version, and the other one too with dual_write. */
  writers(): VersionPipeline[] {
    return [...this.pipelines.values()].filter((p) => p.writes)
  }

  /** The version a session reads; `stamp` freezes it at a real use, a status read only peeks. */
  sessionVersion(sessionId: string | undefined, options: { stamp: boolean }): MemoryVersion {
    return this.versions.resolve(sessionId, options)
  }

  /**
   * A tool is about to run. With disable_on_external_context, web and MCP tools mark the session
   * polluted. Runs in the background: the tool call never waits for the MCP server list.
   */
  onToolUse(sessionId: string, tool: string): void {
    if (!this.options.disable_on_external_context || this.servesHelpers || this.disposed || this.helperSessions.has(sessionId)) return
    void this.externalContext
      .isExternal(tool)
      .then((external) => {
        const catalog = this.catalog
        if (!external || !catalog || this.disposed) return
        if (!markPolluted(catalog.db, sessionId, this.now()).changed) return
        this.diagnostics.report("info", "external-context", `session ${sessionId} used ${tool}; it will not be learned from`)
        // Only a version whose last consolidation used the session has something to forget.
        for (const pipeline of this.pipelines.values()) pipeline.inputsMoved(sessionId, { selectedOnly: true })
      })
      .catch((error) => this.diagnostics.error("external-context", error))
  }

  /** OpenCode deleted a session: every version forgets what it learned from it. */
  onSessionDeleted(sessionId: string): void {
    if (this.disposed || !this.options.generate_memories) return
    for (const pipeline of this.pipelines.values()) {
      const forgotten = pipeline.forgetSession(sessionId)
      if (!forgotten.deleted) continue
      this.diagnostics.report("info", "forgetting", `${pipeline.version}: forgot session ${sessionId}${forgotten.queued ? "; consolidation queued" : ""}`)
    }
  }

  /** Remembers the models OpenCode is configured with (extraction falls back to small_model). */
  learnHostConfig(config: { model?: unknown; small_model?: unknown }): void {
    this.hostModels = {
      ...(typeof config.model === "string" ? { model: config.model } : {}),
      ...(typeof config.small_model === "string" ? { small_model: config.small_model } : {}),
    }
  }

  /**
   * Records which keys of the user's own `memorize` / `memorize-extract` blocks were dropped, for
   * `memory_inspect`, and says so in the log.
   */
  noteHelperAgentOverrides(ignored: Readonly<Record<string, readonly string[]>>): void {
    this.helperAgentOverrides = Object.fromEntries(Object.entries(ignored).filter(([, keys]) => keys.length).map(([agent, keys]) => [agent, [...keys]]))
    for (const sentence of describeIgnoredAgentKeys(this.helperAgentOverrides)) this.diagnostics.report("warn", "config", sentence)
  }

  /** A user's message in a session of this instance. */
  onChatMessage(sessionId: string): void {
    if (this.servesHelpers || this.disposed || this.helperSessions.has(sessionId)) return
    for (const pipeline of this.writers()) pipeline.phase1?.onChatMessage(sessionId)
  }

  /** A session of this instance went idle. */
  onSessionIdle(sessionId: string): void {
    if (this.servesHelpers || this.disposed || this.helperSessions.has(sessionId)) return
    for (const pipeline of this.writers()) pipeline.phase1?.onIdle(sessionId)
  }

  /** The tools this instance offers, as host-neutral specs. */
  tools(): ToolSpec[] {
    return createMemoryTools(this, {
      memoryTools: this.options.use_memories && this.options.dedicated_tools,
      templatesDir: path.join(this.packageDir, "templates"),
    })
  }

  /** The memory folder a session's tools see: its version's. A tool call is a real use and stamps. */
  backendFor(sessionId: string): LocalMemoryBackend {
    return this.pipeline(this.sessionVersion(sessionId, { stamp: true })).backend
  }

  /** Start-up work, run after the host has finished loading plugins. Never throws. */
  async start(): Promise<void> {
    for (const warning of this.warnings) this.diagnostics.report("warn", "options", warning)
    try {
      for (const pipeline of this.writers()) prepareRoot(pipeline.paths.memoryRoot)
      this.openCatalog()
    } catch (error) {
      this.diagnostics.error("startup", error)
      return
    }
    for (const pipeline of this.pipelines.values()) {
      try {
        pipeline.open(this.catalog?.db)
      } catch (error) {
        // One version's database failing leaves the other version working.
        this.diagnostics.error("startup", error)
      }
    }
    if (!this.servesHelpers && this.options.generate_memories) await this.cleanUpHelpers()
  }

  /** Helper sessions left by a process that died mid-extraction; bounded, and failures only logged. */
  private async cleanUpHelpers(): Promise<void> {
    try {
      const deleted = await deleteLeftoverHelpers(this.deps.host, this.now(), AbortSignal.timeout(30_000))
      if (deleted) this.diagnostics.report("info", "startup", `deleted ${deleted} leftover helper session(s)`)
    } catch (error) {
      this.diagnostics.report("warn", "startup", `could not look for leftover helper sessions: ${errorMessage(error)}`)
    }
  }

  /** The memory block for one model call, or undefined when nothing is to be injected. */
  systemBlock(call: SystemCall): string | undefined {
    if (!this.options.use_memories || this.disposed || this.servesHelpers) return undefined
    if (!isConversationCall(call, (id) => this.helperSessions.has(id))) return undefined
    return this.pipeline(this.sessionVersion(call.sessionID, { stamp: true })).readPath.blockFor(call)
  }

  /** Drop cached bytes after the plugin itself changed the memory folders. */
  invalidateReadPath(): void {
    for (const pipeline of this.pipelines.values()) pipeline.invalidate()
  }

  /** The catalog (memory.db): modes, stamps, citations, the redaction audit. */
  store(): MemoryStore | undefined {
    return this.catalog
  }

  /**
   * A note is a workspace input: the next consolidation folds it in, with no new session needed.
   * It goes to the session's version, and with dual-write to every version that learns, so both
   * keep what the user asked for. The path returned is the one in the session's version.
   */
  addNote(input: NewNote): WrittenNote {
    const own = this.pipeline(this.sessionVersion(input.sessionId, { stamp: true }))
    const targets = [own, ...this.writers().filter((p) => p !== own && this.options.dual_write)]
    let written: WrittenNote | undefined
    for (const pipeline of targets) {
      const note = addNote({ root: pipeline.paths.memoryRoot, now: () => new Date(this.now()), redact }, input)
      written ??= note
      pipeline.backend.invalidate()
      pipeline.phase2?.wake()
    }
    return written!
  }

  /** A mode change that moves a session in or out of the inputs queues each version's phase 2. */
  setMode(sessionId: string, mode: MemoryMode): { previous: MemoryMode } {
    const previous = this.requireCatalog().setMode(sessionId, mode)
    const moved = (previous === "enabled") !== (mode === "enabled")
    if (moved && !this.disposed) for (const pipeline of this.pipelines.values()) pipeline.inputsMoved(sessionId)
    return { previous }
  }

  /** CitationSink: the catalog counts each part once; the cited sessions' usage goes to the citing session's version. */
  recordCitation(partId: string, citingSession: string | undefined, sessionIds: readonly string[], files: readonly CitedRange[]): boolean {
    const catalog = this.requireCatalog()
    if (!catalog.recordCitation(partId, citingSession, files)) return false
    this.pipeline(this.sessionVersion(citingSession, { stamp: true })).store()?.bumpUsage(sessionIds)
    return true
  }

  /** Erases what every version learned and both folders; modes and stamps stay (control/reset.ts). */
  async reset(): Promise<ResetReport> {
    const report = resetAllVersions(this.requireCatalog(), [...this.pipelines.values()])
    if (report.type === "reset") this.diagnostics.report("info", "reset", `memory erased: ${report.outputs} outputs, ${report.jobs} jobs, ${report.files} folder entries`)
    return report
  }

  inspect(): InspectReport {
    const catalog = this.catalog
    const snapshot: InspectSnapshot = {
      now: this.now(),
      home: { path: this.paths.home, source: this.paths.homeSource },
      catalog: { file: this.catalogDb, state: this.storeStatus(), counts: catalog?.counts() },
      versions: [...this.pipelines.values()].map((pipeline) => pipeline.snapshot()),
      jobErrors: [...this.pipelines.values()].flatMap((p) => (p.store()?.recentJobErrors(5) ?? []).map((job) => ({ ...job, version: p.version }))),
      options: this.options,
      warnings: this.warnings,
      diagnostics: this.diagnostics.recent(),
      cooldownMs: JOBS.PHASE2_COOLDOWN_MS,
      redactions: catalog?.redactionTotals(),
      breakers: this.breaker.list(),
      ignoredAgentKeys: this.helperAgentOverrides,
    }
    const { options, ...rest } = snapshot
    return { text: renderInspect(snapshot), data: { ...rest, options: { ...options } } }
  }

  private requireCatalog(): MemoryStore {
    if (this.catalog) return this.catalog
    const state = this.storeState
    throw new Error(state.status === "failed" ? `the memory database could not be opened: ${state.error}` : "the memory database is still opening; try again in a moment")
  }

  storeStatus(): StoreState {
    return { ...this.storeState }
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await Promise.all([...this.pipelines.values()].map((pipeline) => pipeline.dispose()))
    this.catalog?.db.close()
    this.catalog = undefined
    this.storeState = { status: "closed" }
    this.helperSessions.clear()
    this.versions.clear()
  }

  private openCatalog(): void {
    if (this.disposed) return
    this.storeState = { status: "opening" }
    try {
      const { db, migrated, recovered } = openDatabase(this.catalogDb, { now: this.now })
      if (this.disposed) return db.close()
      this.catalog = new MemoryStore(db, this.now)
      this.storeState = { status: "open", driver: db.driver, schemaVersion: migrated.to }
      if (recovered) {
        this.diagnostics.report("warn", "store", `memory.db could not be read (${recovered.reason}); it was moved to ${recovered.movedTo} and a new one was created`)
      }
      if (migrated.from !== migrated.to) {
        this.diagnostics.report("info", "store", `memory.db migrated from schema ${migrated.from} to ${migrated.to} (${db.driver})`)
      }
    } catch (error) {
      this.storeState = { status: "failed", error: errorMessage(error) }
      throw error
    }
  }
}

function unsupportedWarnings(options: MemoryOptions): string[] {
  const warnings: string[] = []
  if (options.codex_interop.import || options.codex_interop.export) {
    warnings.push('option "codex_interop": Codex import and export are not available in this release yet; ignored')
  }
  return warnings
}

/** "provider/model" -> its parts; the model id may itself contain slashes. */
export function parseModel(value: string | undefined): ModelRef | undefined {
  const slash = value?.indexOf("/") ?? -1
  if (!value || slash <= 0 || slash === value.length - 1) return undefined
  return { providerID: value.slice(0, slash), modelID: value.slice(slash + 1) }
}

function parseList(value: string | undefined): ReadonlySet<string> {
  return new Set((value ?? "").split(",").map((item) => item.trim()).filter(Boolean))
}
