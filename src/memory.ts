// The composition root: one Memory per plugin instance. It parses the options, builds the
// catalog (memory.db), one pipeline per memory version (src/pipeline) and the controls the tools
// reach (src/control/controls.ts), then routes each host event and model call to the pipelines it
// concerns. Every piece of state is owned here or by what it builds, so two instances in one
// process never see each other's.
import { randomUUID } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { createMemoryTools } from "../tools/index.js"
import type { ToolSpec } from "../tools/spec.js"
import { MemoryControls } from "./control/controls.js"
import { Forgetting, Reconciler, type ReconcileReport } from "./control/forgetting.js"
import { Diagnostics, errorMessage } from "./diagnostics.js"
import type { Host, HostRegistrations, SessionListing } from "./host.js"
import { planInterop } from "./interop/interop.js"
import { parseModel, parseOptions, type MemoryOptions } from "./options.js"
import { Catalog } from "./pipeline/catalog.js"
import { ReopenSchedule } from "./pipeline/reopen-schedule.js"
import type { Recovery } from "./control/inspect.js"
import type { DatabaseCheck } from "./store/database.js"
import { loadDriver, NoSqliteDriverError, type SqlDatabase } from "./store/sqlite.js"
import { SessionVersions } from "./pipeline/session-versions.js"
import { VersionPipeline } from "./pipeline/version-pipeline.js"
import { VERSIONS, versionSpec } from "./pipeline/versions.js"
import { SessionCheckpoints } from "./checkpoint/session-checkpoints.js"
import type { ToolResult } from "./checkpoint/observe.js"
import { CitationUsage } from "./read/citation-usage.js"
import { isConversationCall, type SystemCall } from "./read/read-path.js"
import type { MemoryStore } from "./store/memory-store.js"
import { redactText } from "./redact/redact.js"
import { markPolluted } from "./store/pollution.js"
import { packageRoot } from "./util/package-root.js"
import { memoryPaths, resolveHome, type MemoryPaths, type MemoryVersion } from "./util/paths.js"
import { prepareRoot } from "./util/prepare-root.js"
import { loadTemplate } from "./util/templates.js"
import { fileOffset, testSwitches } from "./util/test-switches.js"
import { RateLimitBreaker } from "./write/helpers/breaker.js"
import { ExternalContext } from "./write/phase1/external-context.js"
import { describeIgnoredAgentKeys } from "./write/helpers/helper-agents.js"
import { deleteLeftoverHelpers, isHelperSession } from "./write/helpers/helper-sessions.js"
import { sanitizeSession } from "./write/phase1/session-input.js"
import { ProjectResolver, projectRules } from "./write/phase1/project-identity.js"
import type { CurrentProject } from "./store/record-projects.js"

/** One look-up of a session the tools or the CLI were given. */
const SESSION_LOOKUP_TIMEOUT_MS = 10_000

export interface MemoryDeps {
  host: Host
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  now?: () => number
  /** The folder of the host instance this plugin instance serves. */
  directory?: string
  /** Folder holding `templates/` and `opencode.json`; found from the module's location by default. */
  packageDir?: string
  /** How the host finds sessions, in words, when that can change at run time (OpenCode 2's service). */
  hostStatus?: () => string
  /** What the host adapter registered and what the host refused (OpenCode 2: each registration stands alone). */
  hostRegistrations?: () => HostRegistrations
  /** Runs no background phase: changes only queue work for the OpenCode instances (the CLI). */
  passive?: boolean
  /**
   * Whether a session memory knows nothing of exists, for hosts whose Host cannot tell (the CLI asks
   * OpenCode's own command line). Default: the host's sessionExists.
   */
  sessionExists?: (sessionId: string) => Promise<boolean>
  /** Opens a database file with a driver; tests wrap it to inject faults (a full disk). */
  connect?: (file: string) => SqlDatabase
  /** What opening memory.db and each version's file checks (store/database.ts): every page by default. */
  databaseCheck?: DatabaseCheck
  /** Finds the runtime's SQLite driver (store/sqlite.ts); tests make it find none. */
  loadDriver?: () => unknown
}

export class Memory {
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
  readonly catalog: Catalog
  /** One pipeline per version: each reads always, and writes when selected or dual-writing. */
  readonly pipelines: ReadonlyMap<MemoryVersion, VersionPipeline>
  /** What the tools and citations reach, routed to the session's version. */
  readonly controls: MemoryControls
  readonly citations: CitationUsage
  /** Session checkpoints (src/checkpoint), when the checkpoint option is on. */
  readonly checkpoints: SessionCheckpoints | undefined
  /**
   * True when this instance serves a memory folder itself: OpenCode starts one for the helper
   * sessions (their directory is a memory root). It adds the helper agents and nothing else.
   */
  readonly servesHelpers: boolean
  /** The folder of the host instance this plugin instance serves (OpenCode 1.x), if one. */
  readonly directory: string | undefined
  /**
   * What a host's own controls switch at run time (OpenCode 2's panel): whether memory is shown to
   * conversations and whether new sessions are learned from. They start from the options.
   */
  readonly switches: { useMemories: boolean; generateMemories: boolean }
  private readonly versions: SessionVersions
  /** Which project a session's folder belongs to, remembered per folder for a few minutes. */
  private readonly projects: ProjectResolver
  private readonly externalContext: ExternalContext
  /** OpenCode's configured models, learned in the config hook. */
  private hostModels: { model?: string; small_model?: string } = {}
  /** Keys of the user's own helper-agent blocks that were dropped, per agent (config hook). */
  private helperAgentOverrides: Record<string, string[]> = {}
  /** The one path by which a session leaves memory (control/forgetting.ts). */
  readonly forgetting: Forgetting
  private readonly reconciler: Reconciler
  /** OpenCode 2: the folder each session runs in, as the location whose hook saw it says (bounded). */
  private readonly sessionFolders = new Map<string, string>()
  /** This instance's row among the home's plugin instances (store/instances.ts). */
  private readonly instanceId = `${process.pid}:${randomUUID()}`
  private registered = false
  /** Whether start-up has prepared the memory folders (a full disk can fail that too). */
  private rootsReady = false
  /** When a database that could not be opened is tried again (pipeline/reopen-schedule.ts). */
  private readonly reopen: ReopenSchedule
  private readonly now: () => number
  private disposed = false
  /** Why memory is off for good in this process: no SQLite driver loads. */
  private noDriver: string | undefined

  constructor(rawOptions: unknown, private readonly deps: MemoryDeps) {
    const parsed = parseOptions(rawOptions)
    const options = (this.options = parsed.options)
    this.switches = { useMemories: options.use_memories, generateMemories: options.generate_memories }
    const test = testSwitches(deps.env)
    const clock = deps.now ?? Date.now
    const moved = test.clockFile ? fileOffset(test.clockFile) : undefined
    const now = (this.now = moved ? () => clock() + test.clockOffsetMs + moved() : test.clockOffsetMs ? () => clock() + test.clockOffsetMs : clock)
    this.faults = test.faults
    this.helperPrompts = test.helperPrompts
    const home = resolveHome(options.home, deps.env, deps.homedir)
    this.paths = memoryPaths(home.home, home.source, options.version)
    const diagnostics = (this.diagnostics = new Diagnostics(deps.host, now))
    this.packageDir = deps.packageDir ?? packageRoot()
    this.reopen = new ReopenSchedule(now)
    const connect = deps.connect ? { connect: deps.connect } : {}
    this.catalog = new Catalog(memoryPaths(home.home, home.source, "v1").db, { now, diagnostics, host: deps.host.kind, ...connect, ...(deps.databaseCheck ? { check: deps.databaseCheck } : {}), reopen: () => this.healStores() })
    const breaker = new RateLimitBreaker(now, (open) => this.catalog.settings?.recordBreaker({ ...open, reason: redactText(open.reason) }))
    this.externalContext = new ExternalContext(deps.host, now)

    const templatesDir = path.join(this.packageDir, "templates")
    const workerId = `pid:${process.pid}:${Math.random().toString(36).slice(2, 10)}`
    const interop = planInterop({ options, env: deps.env, homedir: deps.homedir, templatesDir, memoryRoots: VERSIONS.map((version) => memoryPaths(home.home, home.source, version).memoryRoot) })
    // replace needs a host that lets a plugin supply the compaction's result; OpenCode 1.x does not.
    // Neither line lets a plugin's summary stand in for the compaction model's: 1.x runs its own
    // model, and 2.1.2's compaction hook reads back system, messages and tools, never a result.
    const replaceUnsupported = options.checkpoint.enabled && options.checkpoint.mode === "replace"
    this.warnings = [
      ...parsed.warnings,
      ...interop.warnings,
      ...(replaceUnsupported ? [`option "checkpoint.mode" = "replace": OpenCode ${deps.host.kind === "opencode2" ? "2 (2.1.2 reads no result from its compaction hook)" : "1.x"} always runs its own compaction model; the checkpoint view joins it instead (as "augment")`] : []),
    ]
    const dual = options.generate_memories && options.dual_write
    // The home and every memory folder and database in it: a tool call that reads one is memory's own text.
    const ownFiles = {
      paths: [home.home, ...VERSIONS.flatMap((version) => [memoryPaths(home.home, home.source, version).memoryRoot, memoryPaths(home.home, home.source, version).db])],
      homedir: deps.homedir,
      ...(deps.env.XDG_DATA_HOME ? { dataHome: deps.env.XDG_DATA_HOME } : {}),
    }
    const memoryDirs = [home.home, ...VERSIONS.map((version) => memoryPaths(home.home, home.source, version).memoryRoot)]
    this.projects = new ProjectResolver(projectRules({ homedir: deps.homedir, env: deps.env, memoryDirs, mappings: options.project_names }), now)
    const pipelines = new Map<MemoryVersion, VersionPipeline>()
    for (const version of VERSIONS) {
      const pipeline = new VersionPipeline({
        spec: versionSpec(version, home, templatesDir),
        writes: options.generate_memories && (version === options.version || options.dual_write),
        host: deps.host,
        options,
        now,
        // Two writers log the same steps: each line then says whose it is.
        diagnostics: dual ? diagnostics.scoped(version) : diagnostics,
        templatesDir,
        helperSessions: this.helperSessions,
        breaker,
        workerId,
        extractionModel: () => parseModel(options.extract_model ?? this.hostModels.small_model),
        consolidationModel: () => parseModel(options.consolidation_model ?? this.hostModels.model),
        excludedSessions: () => this.catalog.store?.sessionsNotEnabled() ?? new Set(),
        recordRedactions: (sessionId, counts, stage) => this.catalog.store?.recordRedactions(sessionId, counts, stage),
        recordUsage: (phase, usage) => this.catalog.ledger?.record(phase, usage),
        hold: () => this.learningHold(),
        recordReview: (version, summary, diff) => this.catalog.reviews?.add(version, summary, diff),
        ...(deps.passive ? { passive: true } : {}),
        extensions: interop.forVersion(version),
        learningWindow: () => this.learningWindow(),
        ownFiles,
        projectOf: (session) => this.projects.of(session.directory, session.project),
        onDiscovered: (listing, signal) => {
          if (this.disposed) return
          this.rememberListing(listing)
          this.reconciler.soon(listing, signal)
        },
        onSessionGone: (sessionId) => {
          if (!this.disposed) this.sessionGone(sessionId)
        },
        beforeSelect: async (signal) => {
          if (!this.disposed) await this.reconciler.fresh(signal)
        },
        ...connect,
        ...(deps.databaseCheck ? { databaseCheck: deps.databaseCheck } : {}),
        beforePass: () => this.healStores(),
      })
      pipelines.set(version, pipeline)
    }
    this.pipelines = pipelines
    this.versions = new SessionVersions({ catalog: () => this.catalog.store, selected: options.version, onError: (error) => diagnostics.error("version-stamp", error) })
    this.forgetting = new Forgetting({
      catalog: this.catalog,
      pipelines,
      diagnostics,
      dropCheckpoint: (sessionId) => this.checkpoints?.forget(sessionId),
    })
    this.reconciler = new Reconciler({
      host: deps.host,
      forgetting: this.forgetting,
      known: () => this.knownSessions(),
      diagnostics,
      now,
      afterPass: () => {
        if (this.registered) this.catalog.instances?.touch(this.instanceId)
      },
    })
    const host = deps.host
    this.controls = new MemoryControls({
      forgetting: this.forgetting,
      sessionExists: deps.sessionExists ?? ((sessionId) => host.sessionExists(sessionId, AbortSignal.timeout(SESSION_LOOKUP_TIMEOUT_MS))),
      options,
      paths: this.paths,
      catalog: this.catalog,
      pipelines,
      versions: this.versions,
      breaker,
      diagnostics,
      warnings: this.warnings,
      now,
      disposed: () => this.disposed,
      ignoredAgentKeys: () => this.helperAgentOverrides,
      switches: this.switches,
      hold: () => this.learningHold(),
      recovery: () => this.recovery(),
      ...(deps.hostStatus ? { hostStatus: deps.hostStatus } : {}),
      ...(deps.hostRegistrations ? { hostRegistrations: deps.hostRegistrations } : {}),
    })
    this.citations = new CitationUsage({
      sink: () => (this.catalog.store ? this.controls : undefined),
      onError: (error) => diagnostics.error("citations", error),
    })
    this.checkpoints = options.checkpoint.enabled
      ? new SessionCheckpoints({
          store: () => this.catalog.checkpoints,
          directory: (sessionId) => deps.directory ?? this.sessionFolders.get(sessionId),
          diagnostics,
          // Disabled means nothing kept: no checkpoint is recorded for such a session.
          keeps: (sessionId) => this.catalog.store?.mode(sessionId) !== "disabled",
          preface: loadTemplate(path.join(templatesDir, "checkpoint"), "preface.md").text.trim(),
          now,
        })
      : undefined
    this.directory = deps.directory
    this.servesHelpers = deps.directory !== undefined && this.controls.memoryRoots.some((root) => path.resolve(deps.directory!) === path.resolve(root))
  }

  pipeline(version: MemoryVersion): VersionPipeline {
    return this.pipelines.get(version)!
  }

  /** The pipelines that learn: the selected version, and the other one too with dual_write. */
  writers(): VersionPipeline[] {
    return [...this.pipelines.values()].filter((p) => p.writes)
  }

  /** The catalog's tables (modes, stamps, citations, the redaction audit), once open. */
  store(): MemoryStore | undefined {
    return this.catalog.store
  }

  /** Start-up work, run after the host has finished loading plugins. Never throws. */
  async start(): Promise<void> {
    for (const warning of this.warnings) this.diagnostics.report("warn", "options", warning)
    if (this.disposed) return
    // Without a driver, trying again cannot help: memory stays off in this process.
    if (!this.openAll() && !this.noDriver) this.reopen.failed()
    if (!this.catalog.store) return
    this.register()
    if (!this.servesHelpers && this.options.generate_memories) await this.cleanUpHelpers()
  }

  /**
   * Prepares the memory folders and opens the databases: false when any of it failed (a full disk
   * fails the first mkdir or `PRAGMA journal_mode = WAL`), and healStores tries again later.
   */
  private openAll(): boolean {
    if (!this.rootsReady) {
      try {
        for (const pipeline of this.writers()) prepareRoot(pipeline.paths.memoryRoot)
        this.rootsReady = true
      } catch (error) {
        this.diagnostics.error("startup", error)
        return false
      }
    }
    return this.openStores() && this.catalog.state().status === "open" && ![...this.pipelines.values()].some((pipeline) => pipeline.storeState().status === "failed")
  }

  /**
   * Tries start-up's folders and databases again when they failed and a try is due: before each
   * phase-1 pass and when a tool needs memory.db. Learning resumes in this process once space
   * returns, without restarting OpenCode. Never throws.
   */
  private healStores(): void {
    if (this.disposed || this.deps.passive || this.reopen.failures === 0 || !this.reopen.due()) return
    const tries = this.reopen.failures
    if (!this.openAll()) return this.reopen.failed()
    this.reopen.succeeded()
    this.diagnostics.report("info", "store", `memory opened on try ${tries + 1}; learning resumes`)
    if (!this.registered) this.register()
  }

  /** What a failed open or write left to try again, for memory_inspect; undefined when nothing. */
  private recovery(): Recovery | undefined {
    const unsettled = this.writers().reduce((sum, pipeline) => sum + (pipeline.phase1?.unsettledCount() ?? 0) + (pipeline.phase2?.unsettledCount() ?? 0), 0)
    const openFailures = this.reopen.failures
    if (this.noDriver) return { openFailures, nextOpenAt: this.reopen.nextAt, unsettled, noDriver: this.noDriver }
    return openFailures || unsettled ? { openFailures, nextOpenAt: this.reopen.nextAt, unsettled } : undefined
  }

  /** Registers this instance among those that have the home open (an import refuses while one does). */
  private register(): void {
    if (this.deps.passive || this.disposed) return
    try {
      this.catalog.instances?.register(this.instanceId)
      this.registered = true
    } catch (error) {
      this.diagnostics.report("warn", "startup", `could not register this OpenCode process with the memory home: ${errorMessage(error)}`)
    }
  }

  /**
   * Opens memory.db and each version's database, and nothing else: no folder is prepared and the
   * host is not called (the command-line tool opens a home this way). False when the catalog
   * could not be opened; one version failing leaves the other working.
   */
  openStores(): boolean {
    if (this.disposed || this.noDriver) return false
    try {
      (this.deps.loadDriver ?? loadDriver)()
    } catch (error) {
      if (!(error instanceof NoSqliteDriverError)) throw error
      // One line, once: the desktop app's Node without node:sqlite, say, and no better-sqlite3.
      this.noDriver = `opencode-codex-memory is off in this process: ${error.message}`
      this.diagnostics.report("error", "startup", this.noDriver)
      this.catalog.unavailable(error.message)
      return false
    }
    try {
      this.catalog.open()
    } catch (error) {
      this.diagnostics.error("startup", error)
      return false
    }
    for (const pipeline of this.pipelines.values()) {
      try {
        pipeline.open(this.catalog.store?.db)
      } catch (error) {
        this.diagnostics.error("startup", error)
      }
    }
    return true
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

  /** The tools this instance offers, as host-neutral specs. */
  tools(): ToolSpec[] {
    return createMemoryTools(this.controls, {
      memoryTools: this.options.use_memories && this.options.dedicated_tools,
      templatesDir: path.join(this.packageDir, "templates"),
      ...(this.checkpoints ? { checkpoints: { applyCheckpoint: (sessionId: string, update: unknown) => this.checkpoints!.apply(sessionId, update) } } : {}),
    })
  }

  /** The memory block for one model call, or undefined when nothing is to be injected. */
  systemBlock(call: SystemCall): string | undefined {
    if (!this.switches.useMemories || this.disposed || this.servesHelpers || this.noDriver) return undefined
    if (!isConversationCall(call, (id) => this.helperSessions.has(id))) return undefined
    // An injected turn is a real use: it stamps the session's version.
    return this.pipeline(this.versions.resolve(call.sessionID, { stamp: true })).readPath.blockFor(call)
  }

  /**
   * The frozen checkpoint view of the session's last compaction, for every conversation call until
   * the next: its own system entry after the memory block, so each keeps its bytes.
   */
  checkpointBlock(call: SystemCall): string | undefined {
    if (!this.checkpoints || this.disposed || this.servesHelpers) return undefined
    if (!isConversationCall(call, (id) => this.helperSessions.has(id))) return undefined
    return this.checkpoints.frozenView(call.sessionID)
  }

  /**
   * The folder a session runs in, from a host whose one memory serves many folders (OpenCode 2's
   * locations): the checkpoint names the session's files relative to it.
   */
  sessionFolder(sessionId: string, directory: string): void {
    if (this.sessionFolders.get(sessionId) === directory) return
    this.sessionFolders.delete(sessionId)
    this.sessionFolders.set(sessionId, directory)
    if (this.sessionFolders.size > 1_000) this.sessionFolders.delete(this.sessionFolders.keys().next().value!)
  }

  /** A user's message with its text parts: the checkpoint's task pointer. */
  onUserMessage(sessionId: string, messageId: string, texts: readonly string[]): void {
    if (this.ignores(sessionId)) return
    this.checkpoints?.onUserMessage(sessionId, messageId, texts)
  }

  /** A tool call finished: what it read, wrote or ran joins the session's checkpoint. */
  onToolResult(sessionId: string, result: ToolResult): void {
    if (this.ignores(sessionId)) return
    this.checkpoints?.onToolResult(sessionId, result)
  }

  /** A compaction starts: the checkpoint view for its context, or undefined without checkpoints. */
  onCompacting(sessionId: string): string | undefined {
    if (this.ignores(sessionId) || !this.checkpoints) return undefined
    return this.checkpoints.compactionContext(sessionId)
  }

  /** A compaction ended: its view is frozen, and the segment it closed is learned from now. */
  onCompacted(sessionId: string): void {
    if (this.ignores(sessionId)) return
    try {
      this.checkpoints?.onCompacted(sessionId)
    } finally {
      if (this.switches.generateMemories) for (const pipeline of this.writers()) pipeline.phase1?.onCompacted(sessionId)
    }
  }

  /**
   * Why background learning waits, if it does: paused from the command line (read from memory.db
   * at every pass, so every process sharing the home honours it), or today's spend reached
   * daily_token_budget (until the next UTC day).
   */
  learningHold(): string | undefined {
    const since = this.catalog.settings?.pausedSince()
    if (since !== undefined) return `paused since ${new Date(since).toISOString()} (run \`opencode-codex-memory resume\` to go on)`
    const budget = this.options.daily_token_budget
    if (budget > 0) {
      const spent = this.catalog.ledger?.tokensToday() ?? 0
      if (spent >= budget) return `today's background spend (${spent} tokens) reached daily_token_budget (${budget}); learning resumes at the next UTC day`
    }
    return undefined
  }

  /** Remembers the models OpenCode is configured with (extraction falls back to small_model). */
  learnHostConfig(config: { model?: unknown; small_model?: unknown }): void {
    this.hostModels = {
      ...(typeof config.model === "string" ? { model: config.model } : {}),
      ...(typeof config.small_model === "string" ? { small_model: config.small_model } : {}),
    }
  }

  /** Records which keys of the user's own `memorize` / `memorize-extract` blocks were dropped, and says so in the log. */
  noteHelperAgentOverrides(ignored: Readonly<Record<string, readonly string[]>>): void {
    this.helperAgentOverrides = Object.fromEntries(Object.entries(ignored).filter(([, keys]) => keys.length).map(([agent, keys]) => [agent, [...keys]]))
    for (const sentence of describeIgnoredAgentKeys(this.helperAgentOverrides)) this.diagnostics.report("warn", "config", sentence)
  }

  /** A user's message in a session of this instance. */
  onChatMessage(sessionId: string): void {
    if (this.ignores(sessionId) || !this.switches.generateMemories) return
    for (const pipeline of this.writers()) pipeline.phase1?.onChatMessage(sessionId)
  }

  /** A session of this instance went idle. */
  onSessionIdle(sessionId: string): void {
    if (this.ignores(sessionId) || !this.switches.generateMemories) return
    for (const pipeline of this.writers()) pipeline.phase1?.onIdle(sessionId)
  }

  /**
   * A tool is about to run. With disable_on_external_context, web and MCP tools mark the session
   * polluted. Runs in the background: the tool call never waits for the MCP server list.
   */
  onToolUse(sessionId: string, tool: string): void {
    if (!this.options.disable_on_external_context || this.ignores(sessionId)) return
    void this.externalContext
      .isExternal(tool)
      .then((external) => {
        const catalog = this.catalog.store
        if (!external || !catalog || this.disposed) return
        if (!markPolluted(catalog.db, sessionId, this.now()).changed) return
        this.diagnostics.report("info", "external-context", `session ${sessionId} used ${tool}; it will not be learned from`)
        this.forgetting.forget(sessionId, "polluted")
      })
      .catch((error) => this.diagnostics.error("external-context", error))
  }

  /**
   * OpenCode deleted a session: every version forgets what it learned from it. The event may be the
   * only thing a short-lived process does (`opencode session delete`, or a DELETE request that
   * boots an instance): its start-up has not opened the databases yet, so they are opened here, at
   * once, and the forgetting is recorded before the process can exit. A home that does not exist
   * holds nothing to forget.
   */
  onSessionDeleted(sessionId: string): void {
    if (this.disposed || this.servesHelpers) return
    if (!this.catalog.store && fs.existsSync(this.catalog.file) && !this.openStores()) return
    if (!this.catalog.store) return
    this.sessionGone(sessionId)
  }

  /** OpenCode no longer has the session: forgotten, and no cached listing offers it to phase 1 again. */
  private sessionGone(sessionId: string): void {
    for (const pipeline of this.pipelines.values()) pipeline.phase1?.sessionDeleted(sessionId)
    this.forgetting.forget(sessionId, "deleted")
  }

  /**
   * Every session memory holds something of, from this host: records of every version and
   * checkpoints. What reconciliation looks for in the host's listing.
   */
  private knownSessions(): Set<string> {
    const known = new Set<string>()
    for (const pipeline of this.pipelines.values()) for (const id of pipeline.knownSessions()) known.add(id)
    for (const id of this.catalog.checkpoints?.sessionIds() ?? []) known.add(id)
    for (const id of this.catalog.sessions?.ids() ?? []) known.add(id)
    return known
  }

  /**
   * One reconciliation pass on `listing` (a host listing of root sessions): what phase 1's listings
   * and every consolidation claim run (control/forgetting.ts); exposed for tests and the benchmark.
   */
  reconcile(listing: SessionListing, signal: AbortSignal): Promise<ReconcileReport> {
    return this.reconciler.reconcile(listing, signal)
  }

  /** Before when nothing of a session is learned: the last reset, or the session's own forget. */
  /**
   * Records the listed root sessions in the session catalog (the `sessions` command, the waiting
   * list). A title and folder are kept, cleaned, only for a session that may be learned from.
   */
  private rememberListing(listing: SessionListing): void {
    const sessions = this.catalog.sessions
    if (!sessions) return
    try {
      const oldest = this.now() - this.options.max_rollout_age_days * 86_400_000
      const out = this.catalog.store?.sessionsNotEnabled() ?? new Set<string>()
      const learnFrom = this.learningWindow()
      // An old session stays listed once it is in the catalog; most listings never need the ids.
      let known: Set<string> | undefined
      const isKnown = (id: string) => (known ??= new Set(sessions.ids())).has(id)
      // Each shown session's project now (null: its folder is no project), for its records to follow.
      const current = new Map<string, CurrentProject>()
      const entries = listing.sessions
        .filter((session) => !session.parentId && !isHelperSession(session) && (session.updatedAt >= oldest || isKnown(session.id)))
        .map((session) => {
          const shown = !out.has(session.id) && !session.archived && session.updatedAt > (learnFrom(session.id) ?? Number.NEGATIVE_INFINITY)
          const input = shown ? sanitizeSession(session, []) : undefined
          const found = input ? this.projects.of(session.directory, session.project) : undefined
          const project = input && found ? { key: input.clean(found.key), name: input.clean(found.name) } : undefined
          if (input) current.set(session.id, project ?? null)
          return { id: session.id, title: input?.session.title, directory: input?.session.directory, project, createdAt: session.createdAt, updatedAt: session.updatedAt }
        })
      // The catalog changed (always on an instance's first listing): records made under an older
      // project rule, or before their repository had an id, move with their sessions (D26).
      if (sessions.remember(entries) > 0) {
        for (const pipeline of this.pipelines.values()) {
          const moved = pipeline.followProjects(current)
          if (moved) this.diagnostics.report("info", "projects", `${pipeline.version}: ${moved} record(s) moved to their session's project`)
        }
      }
    } catch (error) {
      this.diagnostics.error("session-catalog", error)
    }
  }

  private learningWindow(): (sessionId: string) => number | undefined {
    const epoch = this.catalog.settings?.resetEpoch()
    const forgotten = this.catalog.store?.forgottenBefore() ?? new Map<string, number>()
    return (sessionId) => {
      const own = forgotten.get(sessionId)
      if (own === undefined) return epoch
      return epoch === undefined ? own : Math.max(own, epoch)
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await Promise.all([...this.pipelines.values()].map((pipeline) => pipeline.dispose()))
    await this.reconciler.settled()
    if (this.registered) {
      try {
        this.catalog.instances?.unregister(this.instanceId)
      } catch (error) {
        this.diagnostics.report("warn", "dispose", `could not unregister from the memory home: ${errorMessage(error)}`)
      }
    }
    this.catalog.close()
    this.helperSessions.clear()
    this.versions.clear()
  }

  /** Events of a helper-serving instance, of its own helper sessions, or after dispose change nothing. */
  private ignores(sessionId: string): boolean {
    return this.servesHelpers || this.disposed || this.helperSessions.has(sessionId)
  }
}
