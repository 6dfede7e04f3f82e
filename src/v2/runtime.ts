// The OpenCode 2 side of one plugin definition. OpenCode 2 sets a plugin up once per location
// (each project folder it serves), several at a time in one process; memory is global, so the
// locations share one Memory (one pipeline, one database handle), built at the first setup and
// shut down at the last cleanup. Locations are reference-counted: the host adapter always works
// through the oldest live location, so a disposed location re-points it to a survivor. The
// panel's switches are process-wide, persisted in the plugin's storage, and outlive any setup.
import os from "node:os"
import { LOG_SERVICE } from "../constants.js"
import { errorMessage } from "../diagnostics.js"
import { createGuard, type Guard } from "../guard.js"
import { Memory } from "../memory.js"
import { parseOptions } from "../options.js"
import { VERSIONS } from "../pipeline/versions.js"
import { packageRoot } from "../util/package-root.js"
import { ENV_PROBE, memoryDisabled, memoryPaths, resolveHome } from "../util/paths.js"
import { testSwitches } from "../util/test-switches.js"
import { bundledAgents } from "../write/helpers/bundled-agents.js"
import { memoryRootForms } from "../write/helpers/helper-sandbox.js"
import { installV2Agents } from "./agents.js"
import { isFullContext, type V2Cleanup, type V2Context, type V2Registration, type V2RegistrationContext } from "./api.js"
import { createV2Host, ObservedSessions } from "./host.js"
import { registerLocation, type LocationRuntime, type RegistrationReport } from "./location.js"
import type { MemoryStatus, SwitchName } from "./rpc.js"
import { discoverService, type DiscoveryDeps, type ServiceState } from "../util/opencode-service.js"

export interface V2RuntimeDeps {
  env: Readonly<Record<string, string | undefined>>
  homedir?: string
  /** Folder holding templates/ and opencode.json (tests point it at the checkout). */
  packageDir?: string
  now?: () => number
  /** Replaces service discovery's file reads and HTTP (tests). */
  discovery?: Partial<Pick<DiscoveryDeps, "fetch" | "readFile" | "pid">>
  log?: (line: string) => void
}

interface Live {
  ctx: V2Context
  registrations: V2Registration[]
  report?: RegistrationReport
  abort: AbortController
}

/** How long a discovery answer is trusted before the service is looked for again. */
const SERVICE_RECHECK_MS = 30_000
const SWITCHES_KEY = "switches"
const EVENT_IDS_KEPT = 2_000

export class V2Runtime implements LocationRuntime {
  readonly confined = new Map<string, string>()
  readonly helperSystem = new Map<string, string>()
  private readonly observed = new ObservedSessions()
  private readonly live: Live[] = []
  private readonly eventIds = new Set<string>()
  private memory: Memory | undefined
  private guard: Guard | undefined
  private service: { state: ServiceState; at: number } | undefined
  private discovering: Promise<ServiceState> | undefined
  private readonly host: ReturnType<typeof createV2Host>

  constructor(private readonly deps: V2RuntimeDeps) {
    this.host = createV2Host({
      ctx: () => this.requireActive(),
      service: (signal) => this.discover(signal),
      lastService: () => this.service?.state,
      observed: this.observed,
      confined: this.confined,
      helperSystem: this.helperSystem,
      log: (line) => this.write(line),
    })
  }

  /**
   * The plugin definition's `setup(ctx)`. Never throws: a failure leaves this location without
   * memory. A registration-only context (OpenCode 1.18's own V2 loader, which sets this module up
   * beside its V1 `server`) gets the helper agents and nothing else: memory runs through `server`.
   */
  async setup(ctx: V2Context | V2RegistrationContext): Promise<V2Cleanup> {
    if (memoryDisabled(this.deps.env)) return () => undefined
    if (!isFullContext(ctx)) return this.registerAgentsOnly(ctx)
    const entry: Live = { ctx, registrations: [], abort: new AbortController() }
    this.live.push(entry)
    const first = !this.memory
    let memory: Memory
    try {
      memory = this.memory ??= this.createMemory(ctx.options ?? {})
    } catch (error) {
      // Nothing to run (a broken install): OpenCode goes on as if the plugin were absent.
      this.live.splice(this.live.indexOf(entry), 1)
      this.write(`${LOG_SERVICE}: error: opencode-codex-memory disabled: ${(error as Error).message}`)
      return () => undefined
    }
    const guard = (this.guard ??= createGuard({ diagnostics: memory.diagnostics, faults: memory.faults }))
    try {
      const registered = await registerLocation(ctx, memory, this, guard, entry.abort.signal)
      entry.registrations = registered.registrations
      entry.report = registered.report
    } catch (error) {
      memory.diagnostics.error("setup", error)
      entry.report = { registered: [], failed: [{ name: "setup", message: errorMessage(error) }] }
    }
    if (first) {
      await this.loadSwitches(ctx, memory)
      // Start-up work (databases, leftover helpers) runs after setup has returned; so does the
      // first look for the service, so the status says how sessions are read before any pass.
      const timer = setTimeout(() => {
        void memory.start()
        void this.discover(AbortSignal.timeout(10_000))
      }, 0)
      timer.unref?.()
    }
    return () => this.release(entry)
  }

  private async registerAgentsOnly(ctx: V2RegistrationContext): Promise<V2Cleanup> {
    const agent = ctx.agent
    if (!agent) return () => undefined
    try {
      const { options } = parseOptions(ctx.options ?? {})
      if (!options.generate_memories) return () => undefined
      const homedir = this.deps.homedir ?? os.homedir()
      const home = resolveHome(options.home, this.deps.env, homedir)
      const roots = VERSIONS.flatMap((version) => memoryRootForms(memoryPaths(home.home, home.source, version).memoryRoot))
      const packageDir = this.deps.packageDir ?? packageRoot()
      const agents = bundledAgents(packageDir, memoryPaths(home.home, home.source, options.version).memoryRoot, { prompts: testSwitches(this.deps.env).helperPrompts })
      const registration = await agent.transform((editor) => installV2Agents(editor, agents, roots))
      // 1.18 applies a transform made during setup only after a reload.
      await agent.reload?.()
      return () => registration.dispose()
    } catch (error) {
      // No memory runs in this context, so no diagnostics: the host's stderr is the log.
      this.write(`${LOG_SERVICE}: warn: could not register the helper agents: ${(error as Error).message}`)
      return () => undefined
    }
  }

  /** The number of live locations (for tests and the status). */
  get locations(): number {
    return this.live.length
  }

  observe(sessionId: string): void {
    this.observed.touch(sessionId, Date.now())
  }

  forget(sessionId: string): void {
    this.observed.forget(sessionId)
  }

  firstSight(eventId: string | undefined): boolean {
    if (!eventId) return true
    if (this.eventIds.has(eventId)) return false
    this.eventIds.add(eventId)
    if (this.eventIds.size > EVENT_IDS_KEPT) this.eventIds.delete(this.eventIds.values().next().value!)
    return true
  }

  status(): MemoryStatus {
    const memory = this.requireMemory()
    const host = this.host.status()
    const inspect = memory.controls.inspect()
    return {
      switches: { use_memories: memory.switches.useMemories, generate_memories: memory.switches.generateMemories },
      sessions: { source: host.sessions, detail: host.detail },
      registrations: this.registrations(),
      versions: [...memory.pipelines.values()].map((pipeline) => {
        const snapshot = pipeline.snapshot()
        return {
          version: snapshot.version,
          selected: snapshot.selected,
          writes: snapshot.writes,
          ...(snapshot.phase2?.last_success_at ? { lastSuccess: snapshot.phase2.last_success_at } : {}),
          ...(snapshot.readiness
            ? { ready: snapshot.readiness.ready, readiness: `${snapshot.readiness.consolidatedSessions} of ${snapshot.readiness.threshold} sessions in one consolidation` }
            : {}),
        }
      }),
      text: inspect.text,
    }
  }

  async setSwitch(name: SwitchName, value: boolean): Promise<void> {
    const memory = this.requireMemory()
    if (name === "use_memories") memory.switches.useMemories = value
    else memory.switches.generateMemories = value
    memory.diagnostics.report("info", "panel", `${name} switched ${value ? "on" : "off"}`)
    await this.active()?.storage?.set(SWITCHES_KEY, { ...memory.switches }).catch((error: unknown) => memory.diagnostics.error("panel", error))
  }

  private createMemory(options: Readonly<Record<string, unknown>>): Memory {
    const homedir = this.deps.homedir ?? os.homedir()
    return new Memory(options, {
      host: this.host,
      env: this.deps.env,
      homedir,
      ...(this.deps.now ? { now: this.deps.now } : {}),
      ...(this.deps.packageDir ? { packageDir: this.deps.packageDir } : {}),
      ...(this.deps.env[ENV_PROBE] === "1" ? { passive: true } : {}),
      hostStatus: () => this.host.status().detail,
      hostRegistrations: () => this.registrations(),
    })
  }

  /** What every live location registered, and what the host refused, each once. */
  registrations(): RegistrationReport {
    const registered = new Set<string>()
    const failed = new Map<string, string>()
    for (const entry of this.live) {
      for (const name of entry.report?.registered ?? []) registered.add(name)
      for (const failure of entry.report?.failed ?? []) failed.set(failure.name, failure.message)
    }
    return { registered: [...registered], failed: [...failed].map(([name, message]) => ({ name, message })) }
  }

  /** The oldest live location: the one the host adapter works through. */
  private active(): V2Context | undefined {
    return this.live[0]?.ctx
  }

  /** Where the runtime writes when no memory (and so no diagnostics) exists: the host's stderr. */
  private write(line: string): void {
    ;(this.deps.log ?? ((text: string) => console.error(text)))(line)
  }

  private requireActive(): V2Context {
    const ctx = this.active()
    if (!ctx) throw new Error("no OpenCode 2 location is live in this process")
    return ctx
  }

  private requireMemory(): Memory {
    if (!this.memory) throw new Error("memory is not running in this process")
    return this.memory
  }

  private async loadSwitches(ctx: V2Context, memory: Memory): Promise<void> {
    try {
      const saved = (await ctx.storage?.get(SWITCHES_KEY)) as { useMemories?: unknown; generateMemories?: unknown } | undefined
      if (typeof saved?.useMemories === "boolean") memory.switches.useMemories = saved.useMemories
      if (typeof saved?.generateMemories === "boolean") memory.switches.generateMemories = saved.generateMemories
    } catch (error) {
      memory.diagnostics.error("panel", error)
    }
  }

  /** Looks for the service at most once per interval, one look at a time. */
  private discover(signal: AbortSignal): Promise<ServiceState> {
    const cached = this.service
    if (cached && Date.now() - cached.at < SERVICE_RECHECK_MS) return Promise.resolve(cached.state)
    const channel = this.active()?.app?.channel
    this.discovering ??= discoverService(
      { env: this.deps.env, homedir: this.deps.homedir ?? os.homedir(), pid: process.pid, ...(channel ? { channel } : {}), ...this.deps.discovery },
      signal,
    )
      .catch((error: Error): ServiceState => ({ state: "unavailable", reason: `looking for the service failed: ${error.message}` }))
      .then((state) => {
        const changed = this.service?.state.state !== state.state
        this.service = { state, at: Date.now() }
        if (changed) this.memory?.diagnostics.report(state.state === "ready" ? "info" : "warn", "service", this.host.status().detail)
        return state
      })
      .finally(() => {
        this.discovering = undefined
      })
    return this.discovering
  }

  private async release(entry: Live): Promise<void> {
    // The last location: memory shuts down first, while this location can still interrupt and
    // delete its helper sessions (a consolidator it cannot confirm gone keeps its lease for an
    // hour). A later setup starts memory again.
    if (this.live.length === 1 && this.live[0] === entry) {
      const memory = this.memory
      this.memory = undefined
      this.guard = undefined
      await memory?.dispose()
    }
    entry.abort.abort()
    await Promise.all(entry.registrations.map((registration) => registration.dispose().catch(() => undefined)))
    const index = this.live.indexOf(entry)
    if (index >= 0) this.live.splice(index, 1)
  }

}
