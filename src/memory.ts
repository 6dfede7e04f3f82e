// One memory instance per plugin instance. It owns every piece of state (options, paths, caches,
// the database handle, diagnostics), so two instances in one process never see each other's.
import fs from "node:fs"
import path from "node:path"
import type { InspectReport, MemoryToolPorts, ResetReport } from "../tools/ports.js"
import { createMemoryTools } from "../tools/index.js"
import type { ToolSpec } from "../tools/spec.js"
import { LocalMemoryBackend } from "./backend/local-backend.js"
import { addNote, type NewNote, type WrittenNote } from "./backend/notes.js"
import { JOBS, READ_PATH } from "./constants.js"
import { clearFolder } from "./control/clear-folder.js"
import { renderInspect, type InspectSnapshot } from "./control/inspect.js"
import { Diagnostics, errorMessage } from "./diagnostics.js"
import type { Host } from "./host.js"
import { parseOptions, type MemoryOptions } from "./options.js"
import { CitationUsage } from "./read/citation-usage.js"
import { ReadPath, type SystemCall } from "./read/read-path.js"
import { loadReadPathTemplates } from "./read/render.js"
import { redact } from "./redact/redact.js"
import { openDatabase } from "./store/database.js"
import { MemoryStore, type MemoryMode } from "./store/memory-store.js"
import { Stage1Jobs } from "./store/stage1-jobs.js"
import type { ModelRef } from "./host.js"
import { loadExtractionTemplates } from "./write/extract.js"
import { describeIgnoredAgentKeys } from "./write/helper-agents.js"
import { deleteLeftoverHelpers } from "./write/helper-sessions.js"
import { Phase1 } from "./write/phase1.js"
import { Phase2Jobs } from "./store/phase2-jobs.js"
import { loadConsolidationTemplates } from "./write/consolidate-prompt.js"
import { Phase2 } from "./write/phase2.js"
import { RateLimitBreaker } from "./write/breaker.js"
import { ExternalContext } from "./write/external-context.js"
import { markPolluted } from "./store/pollution.js"
import { packageRoot } from "./util/package-root.js"
import { ENV_TEST_ROOT, memoryPaths, resolveHome, type MemoryPaths } from "./util/paths.js"
import { estimateTokens } from "./util/tokens.js"

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
  readonly paths: MemoryPaths
  readonly diagnostics: Diagnostics
  readonly packageDir: string
  /** Hook names that fail on purpose; read from the environment only under a test root. */
  readonly faults: ReadonlySet<string>
  /** Whether the helper agents carry their own prompt; turned off only under a test root. */
  readonly helperPrompts: boolean
  /** Sessions this instance started itself; they never get memory injected nor get extracted. */
  readonly helperSessions = new Set<string>()
  readonly backend: LocalMemoryBackend
  readonly citations: CitationUsage
  readonly phase1: Phase1
  readonly phase2: Phase2
  /** Models that hit a rate limit or quota, paused for an hour (both phases share it). */
  readonly breaker: RateLimitBreaker
  private readonly externalContext: ExternalContext
  /**
   * True when this instance serves the memory folder itself: OpenCode starts one for the helper
   * sessions (their directory is the memory root). It adds the helper agents and nothing else.
   */
  readonly servesHelpers: boolean
  /** OpenCode's configured models, learned in the config hook. */
  private hostModels: { model?: string; small_model?: string } = {}
  /** Keys of the user's own helper-agent blocks that were dropped, per agent (config hook). */
  private helperAgentOverrides: Record<string, string[]> = {}
  private readonly jobs: { stage1?: Stage1Jobs; phase2?: Phase2Jobs } = {}
  private readonly workerId = `pid:${process.pid}:${Math.random().toString(36).slice(2, 10)}`
  private readonly readPath: ReadPath
  private memoryStore: MemoryStore | undefined
  private readonly now: () => number
  private storeState: StoreState = { status: "closed" }
  private disposed = false

  constructor(rawOptions: unknown, private readonly deps: MemoryDeps) {
    const parsed = parseOptions(rawOptions)
    this.options = parsed.options
    this.warnings = [...parsed.warnings, ...unsupportedWarnings(parsed.options)]
    const home = resolveHome(this.options.home, deps.env, deps.homedir)
    // Memory V2 is not implemented yet, so every instance reads and writes the V1 layout.
    this.paths = memoryPaths(home.home, home.source, "v1")
    const offset = deps.env[ENV_TEST_ROOT] ? Number(deps.env[ENV_TEST_CLOCK_OFFSET] ?? 0) || 0 : 0
    const clock = deps.now ?? Date.now
    this.now = offset ? () => clock() + offset : clock
    this.diagnostics = new Diagnostics(deps.host, this.now)
    this.packageDir = deps.packageDir ?? packageRoot()
    this.faults = deps.env[ENV_TEST_ROOT] ? parseList(deps.env[ENV_TEST_FAULTS]) : new Set()
    this.helperPrompts = !(deps.env[ENV_TEST_ROOT] && deps.env[ENV_TEST_DEFAULT_HELPER_PROMPT] === "1")
    this.readPath = new ReadPath({
      memoryRoot: this.paths.memoryRoot,
      summaryFile: this.paths.summary,
      dedicatedTools: this.options.dedicated_tools,
      templates: loadReadPathTemplates(path.join(this.packageDir, "templates")),
      isHelperSession: (id) => this.helperSessions.has(id),
      onRefuse: (reason) => this.diagnostics.report("warn", "read-path", reason),
    })
    this.backend = new LocalMemoryBackend({ root: this.paths.memoryRoot })
    this.citations = new CitationUsage({
      store: () => this.memoryStore,
      onError: (error) => this.diagnostics.error("citations", error),
    })
    this.breaker = new RateLimitBreaker(this.now)
    this.externalContext = new ExternalContext(deps.host, this.now)
    this.servesHelpers = deps.directory !== undefined && path.resolve(deps.directory) === path.resolve(this.paths.memoryRoot)
    this.phase1 = new Phase1({
      host: deps.host,
      options: this.options,
      now: this.now,
      diagnostics: this.diagnostics,
      templates: loadExtractionTemplates(path.join(this.packageDir, "templates")),
      memoryRoot: this.paths.memoryRoot,
      jobs: () => this.jobs.stage1,
      excludedSessions: () => this.memoryStore?.sessionsNotEnabled() ?? new Set(),
      helperSessions: this.helperSessions,
      extractionModel: () => parseModel(this.options.extract_model ?? this.hostModels.small_model),
      workerId: this.workerId,
      afterPass: () => this.afterExtraction(),
      breaker: this.breaker,
      recordRedactions: (sessionId, counts, stage) => this.memoryStore?.recordRedactions(sessionId, counts, stage),
    })
    const templatesDir = path.join(this.packageDir, "templates")
    this.phase2 = new Phase2({
      host: deps.host,
      options: this.options,
      now: this.now,
      diagnostics: this.diagnostics,
      templates: loadConsolidationTemplates(templatesDir),
      templatesDir,
      memoryRoot: this.paths.memoryRoot,
      jobs: () => this.jobs.phase2,
      helperSessions: this.helperSessions,
      consolidationModel: () => parseModel(this.options.consolidation_model ?? this.hostModels.model),
      onConsolidated: () => this.invalidateReadPath(),
      breaker: this.breaker,
      workerId: this.workerId,
    })
  }

  /** After each phase-1 pass: retention pruning, then a consolidation if one is due. */
  private afterExtraction(): void {
    if (this.disposed) return
    const pruned = this.jobs.phase2?.pruneUnused(this.options.max_unused_days) ?? 0
    if (pruned) this.diagnostics.report("info", "retention", `pruned ${pruned} memory record(s) unused for ${this.options.max_unused_days} days`)
    this.phase2.trigger()
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
        const store = this.memoryStore
        if (!external || !store) return
        const marked = markPolluted(store.db, sessionId, this.now())
        if (marked.changed) this.diagnostics.report("info", "external-context", `session ${sessionId} used ${tool}; it will not be learned from`)
        if (marked.queued) this.phase2.trigger()
      })
      .catch((error) => this.diagnostics.error("external-context", error))
  }

  /** OpenCode deleted a session: forget what was learned from it. */
  onSessionDeleted(sessionId: string): void {
    if (this.disposed || !this.options.generate_memories) return
    const forgotten = this.jobs.phase2?.forgetSession(sessionId)
    if (!forgotten?.deleted) return
    this.diagnostics.report("info", "forgetting", `forgot session ${sessionId}${forgotten.queued ? "; consolidation queued" : ""}`)
    if (forgotten.queued) this.phase2.trigger()
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
    this.phase1.onChatMessage(sessionId)
  }

  /** A session of this instance went idle. */
  onSessionIdle(sessionId: string): void {
    if (this.servesHelpers || this.disposed || this.helperSessions.has(sessionId)) return
    this.phase1.onIdle(sessionId)
  }

  get memoryRoot(): string {
    return this.paths.memoryRoot
  }

  /** The tools this instance offers, as host-neutral specs. */
  tools(): ToolSpec[] {
    return createMemoryTools(this, {
      memoryTools: this.options.use_memories && this.options.dedicated_tools,
      templatesDir: path.join(this.packageDir, "templates"),
    })
  }

  /** Start-up work, run after the host has finished loading plugins. Never throws. */
  async start(): Promise<void> {
    for (const warning of this.warnings) this.diagnostics.report("warn", "options", warning)
    try {
      this.prepareRoot()
      this.openStore()
    } catch (error) {
      this.diagnostics.error("startup", error)
      return
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
    return this.readPath.blockFor(call)
  }

  /** Drop cached bytes after the plugin itself changed the memory folder. */
  invalidateReadPath(): void {
    this.readPath.invalidate()
    this.backend.invalidate()
  }

  store(): MemoryStore | undefined {
    return this.memoryStore
  }

  /** A note is a workspace input: the next consolidation folds it in, with no new session needed. */
  addNote(input: NewNote): WrittenNote {
    const written = addNote({ root: this.paths.memoryRoot, now: () => new Date(this.now()), redact }, input)
    this.backend.invalidate()
    this.phase2.wake()
    return written
  }

  /** The store queues phase 2 when the change moves a record in or out of the inputs. */
  setMode(sessionId: string, mode: MemoryMode): { previous: MemoryMode } {
    const previous = this.requireStore().setMode(sessionId, mode)
    if (previous !== mode && !this.disposed) this.phase2.trigger()
    return { previous }
  }

  async reset(): Promise<ResetReport> {
    const outcome = this.requireStore().reset()
    if (outcome.type === "refused_consolidation_running") {
      const until = new Date(outcome.leaseUntil).toISOString()
      return { type: "refused", reason: `a consolidation is running (its lease lasts until ${until}); try again after it finishes. Nothing was changed.` }
    }
    const files = clearFolder(this.paths.memoryRoot)
    this.invalidateReadPath()
    this.diagnostics.report("info", "reset", `memory erased: ${outcome.outputs} outputs, ${outcome.jobs} jobs, ${files} folder entries`)
    return { type: "reset", outputs: outcome.outputs, jobs: outcome.jobs, files }
  }

  inspect(): InspectReport {
    const store = this.memoryStore
    const snapshot: InspectSnapshot = {
      now: this.now(),
      paths: this.paths,
      store: this.storeStatus(),
      counts: store?.counts(),
      phase2: store?.phase2Job(),
      jobErrors: store?.recentJobErrors(5) ?? [],
      summary: this.summaryStats(),
      options: this.options,
      warnings: this.warnings,
      diagnostics: this.diagnostics.recent(),
      cooldownMs: JOBS.PHASE2_COOLDOWN_MS,
      redactions: store?.redactionTotals(),
      breakers: this.breaker.list(),
      ignoredAgentKeys: this.helperAgentOverrides,
    }
    const { options, ...rest } = snapshot
    return { text: renderInspect(snapshot), data: { ...rest, options: { ...options } } }
  }

  private summaryStats(): InspectSnapshot["summary"] {
    const stat = fs.lstatSync(this.paths.summary, { throwIfNoEntry: false })
    if (!stat?.isFile()) return undefined
    // A huge summary is not read whole just to report its size.
    if (stat.size > 1024 * 1024) return { bytes: stat.size, estimatedTokens: Math.ceil(stat.size / READ_PATH.BYTES_PER_TOKEN), injected: this.options.use_memories, capped: true }
    const text = fs.readFileSync(this.paths.summary, "utf8").trim()
    if (!text) return undefined
    const estimatedTokens = estimateTokens(text)
    return { bytes: stat.size, estimatedTokens, injected: this.options.use_memories, capped: estimatedTokens > READ_PATH.SUMMARY_TOKEN_LIMIT }
  }

  private requireStore(): MemoryStore {
    if (this.memoryStore) return this.memoryStore
    const state = this.storeState
    throw new Error(state.status === "failed" ? `the memory database could not be opened: ${state.error}` : "the memory database is still opening; try again in a moment")
  }

  storeStatus(): StoreState {
    return { ...this.storeState }
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await Promise.all([this.phase1.dispose(), this.phase2.dispose()])
    this.memoryStore?.db.close()
    this.memoryStore = undefined
    this.jobs.stage1 = undefined
    this.jobs.phase2 = undefined
    this.storeState = { status: "closed" }
    this.helperSessions.clear()
  }

  private prepareRoot(): void {
    const root = this.paths.memoryRoot
    const stat = fs.lstatSync(root, { throwIfNoEntry: false })
    if (stat?.isSymbolicLink()) throw new Error(`memory folder ${root} is a symlink; refusing to use it`)
    if (!stat) fs.mkdirSync(root, { recursive: true })
  }

  private openStore(): void {
    if (this.disposed) return
    this.storeState = { status: "opening" }
    try {
      const { db, migrated, recovered } = openDatabase(this.paths.db)
      if (this.disposed) return db.close()
      this.memoryStore = new MemoryStore(db, this.now)
      this.jobs.stage1 = new Stage1Jobs(db, this.now)
      this.jobs.phase2 = new Phase2Jobs(db, this.now)
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
  if (options.version === "v2") warnings.push('option "version": Memory V2 is not available in this release yet; using v1')
  if (options.dual_write) warnings.push('option "dual_write": needs Memory V2, which is not available in this release yet; ignored')
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
