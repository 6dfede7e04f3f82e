// A fake OpenCode 2 host, in process, that behaves as the released 2.1.2 does for what a plugin
// can see (and, with `release: "2.0.16"`, as that older release did where the adapter keeps a
// fallback): it records what a plugin does, runs an agent loop against the scripted model
// (test/e2e/support/fake-llm.ts) with real file tools, and serves a registered local service over
// HTTP on 127.0.0.1. It is not a mock of our adapter, and it refuses what the release refuses
// (test/v2/fake-conformance.test.ts proves each refusal).
//
// The real 2.1.2 runs in the end-to-end suite (test/e2e/support/opencode2.ts); this fake stays for
// what a test cannot make the real host do: faults and timing inside one process (a registration
// that throws, a location disposed while a consolidator runs, listings of hundreds of sessions
// across pages, a service whose PID is stale), unit-speed permutations of the adapter, and the
// 2.0.16 fallbacks. Each fact, with where it comes from ("ran" is a run of the 2.1.2 binary, "code"
// its embedded JavaScript; "2.0.16 d.ts" the published @opencode/plugin@2.0.16 declarations):
//   - The loader takes a default `{ id, setup }` or `{ id, effect }`; one setup per location, the
//     cleanup on release (ran).
//   - The context: app, location {directory, project {id, directory, canonical}}, options,
//     session, tool, agent, event, generate, model, permission, storage, rpc, and more the adapter
//     does not use; no log and no toast (ran: a probe plugin listed its keys).
//   - Session hooks: `context` for agent-loop requests, `compaction`, `title`, `generate` their
//     own, with system, messages, options and tools read back and never a `result`: the model is
//     always asked (code: the model-request service). The compaction's end carries the summary.
//   - The session domain: list (every project's sessions, newest first, cursor paging; ran),
//     create/get/prompt/wait/context/interrupt/remove; get of a missing session throws
//     Session.NotFoundError (ran); `context` is the messages since the last compaction.
//     2.0.16 had no list, remove or model domain (2.0.16 d.ts).
//   - The model domain lists each configured model with `limit` and `variants`, answering
//     {location, data}; a model's `id` is its key in the config, the name OpenCode takes (generate.text,
//     `opencode models`), and `modelID` the name sent to the provider, another only when the config
//     sets `modelID` (ran).
//   - Tools: editor get/add/update; plugin tools stay off the native list unless `codemode: false`;
//     a metadata holding a null leaves the call running and the model is told "Tool result
//     missing"; a built-in tool's result without its declared output is an error "Tool did not
//     return its declared output"; a thrown error's message reaches the model; a plugin tool's
//     `permission` option is not evaluated, `permission.assert` asks instead (ran, each).
//   - `rpc.register` throws without an `events` field (ran: "Object.entries requires that input
//     parameter not be null or undefined").
//   - Agents: `update` creates a missing agent; `list()` leaves out agents declared in the user's
//     config (measured by a third party on 2.0.3), hence `configAgents`.
//   - Permissions: the agent's rules, then the session's, last match wins, no match asks; write,
//     edit and patch ask `edit`; a file inside the location is named by its relative path, one
//     outside by its absolute path after an `external_directory` ask for `<its folder>/*` (code:
//     the file tools' assert calls; ran: an appended deny refused write, edit and shell).
//   - Events carry their payload under `data`; every location's stream gets every event (ran).
//   - The service: service.json in $XDG_STATE_HOME/opencode, readiness at GET /api/info, session
//     and message lists paged with a cursor (limit at most 200), DELETE /api/session/:id, text
//     generation at POST /api/experimental/generate (ran).
// docs/decisions/16-one-module-two-hosts.md has the table of 1.x capabilities and their 2.1.2 form.
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import type {
  V2AgentEditor,
  V2AgentInfo,
  V2Cleanup,
  V2Context,
  V2Event,
  V2Plugin,
  V2Registration,
  V2Rule,
  V2SessionInfo,
  V2StoredMessage,
  V2ToolEditor,
  V2ToolInfo,
} from "../../src/v2/api.js"
import { isError, ScriptedModel, type ChatMessage, type ChatRequest, type FakeReply } from "../e2e/support/fake-llm.js"

export const V2_LOAD_ERROR = "Plugin must export a default definition with an id and an effect or setup function."
const MAX_STEPS = 25
const BUILTIN_TOOLS = ["read", "write", "edit", "glob", "grep", "shell", "webfetch"] as const
const DEFAULT_AGENT: V2AgentInfo = {
  mode: "primary",
  hidden: false,
  system: "You are the fake OpenCode 2 build agent.",
  permissions: [
    { action: "*", resource: "*", effect: "allow" },
    { action: "external_directory", resource: "*", effect: "ask" },
  ],
}

function holdsNull(value: unknown): boolean {
  if (value === null) return true
  if (typeof value !== "object" || value === undefined) return false
  return Object.values(value as Record<string, unknown>).some(holdsNull)
}

type HookName = "context" | "prompt" | "compaction" | "title" | "generate"
type Callback = (event: never) => unknown

interface Session {
  info: V2SessionInfo & { agent?: string; metadata?: Record<string, unknown> }
  permissions: V2Rule[]
  messages: V2StoredMessage[]
  running?: Promise<void>
  interrupted: boolean
}

interface Location {
  directory: string
  /** Unset for a location with no plugin set up. */
  pluginId: string | undefined
  ctx: V2Context
  cleanup?: V2Cleanup | void
  toolTransforms: Array<(editor: V2ToolEditor) => void>
  agentTransforms: Array<(editor: V2AgentEditor) => void>
  tools: Map<string, V2ToolInfo>
  agents: Map<string, V2AgentInfo>
  hooks: Map<string, Callback[]>
  toolHooks: Array<{ name: string; callback: Callback }>
  rpc: Map<string, Record<string, (input: unknown) => Promise<unknown>>>
  streams: Set<EventStream>
  disposed: boolean
}

export interface FakeVariant {
  /**
   * The release the fake behaves as: "2.1.2" (default) has session.remove, session.list of every
   * project's sessions and the model domain; "2.0.16" has none of them (2.0.16 d.ts).
   */
  release?: "2.0.16" | "2.1.2"
  /** The model's declared window (2.1.2's model domain); 100,000 by default. */
  contextLimit?: number
  /**
   * More models of the fake's provider, listed after the default one as 2.1.2 lists configured
   * models: `id` is the config's key, `modelID` the name sent to the provider (the config's
   * `modelID`, else the key), `limit` as declared.
   */
  models?: ReadonlyArray<{ id: string; modelID?: string; limit: { context: number; input?: number; output: number } }>
  /** The plugin session domain has `remove` (later 2.0.x and 2.1.2; 2.0.16 has none). */
  sessionRemove?: boolean
  /** Agents the user's config declares: they run, but an agent transform's list() leaves them out. */
  configAgents?: readonly string[]
  /**
   * The project id a session in a folder gets (packages/core project.ts: a repository's remote hash
   * or root commit, shared by its subfolders and worktrees). Default "global", what releases before
   * per-folder ids gave a folder outside any repository.
   */
  projectIdOf?: (directory: string) => string
}

/** What the fake recorded about one request it sent the model. */
export interface FakeRequestRecord {
  sessionID: string
  kind: "primary" | "title" | "compaction" | "generate"
  agent?: string
  system: string[]
  tools: string[]
  request: ChatRequest
}

export class FakeOpenCode2 {
  readonly model: ScriptedModel
  /** Every request a session made of the model, with the context the hooks left. */
  readonly requests: FakeRequestRecord[] = []
  /** Every event emitted, oldest first. */
  readonly events: V2Event[] = []
  /** Answers permission asks (`ask` rules); rejects by default, as a user away from the keyboard would. */
  onAsk: (action: string, resource: string, sessionID: string) => boolean = () => false
  private readonly sessions = new Map<string, Session>()
  private readonly locations = new Map<string, Location>()
  private readonly storage = new Map<string, Map<string, unknown>>()
  private counter = 0
  private service: { server: http.Server; file: string } | undefined

  /** Variants of the 2.0.x line the fake can play (see the header). */
  private readonly variant: FakeVariant

  constructor(options: { model?: ScriptedModel } & FakeVariant = {}) {
    this.model = options.model ?? new ScriptedModel()
    const modern = (options.release ?? "2.1.2") !== "2.0.16"
    this.variant = {
      release: modern ? "2.1.2" : "2.0.16",
      sessionRemove: options.sessionRemove ?? modern,
      ...(options.contextLimit ? { contextLimit: options.contextLimit } : {}),
      ...(options.models ? { models: options.models } : {}),
      configAgents: options.configAgents ?? [],
      projectIdOf: options.projectIdOf ?? (() => "global"),
    }
  }

  /** OpenCode 2's loader: only a default `{ id, setup | effect }` is a plugin. */
  static load(module: unknown): V2Plugin {
    const definition = (module as { default?: unknown } | undefined)?.default as Partial<V2Plugin> & { effect?: unknown } | undefined
    const ok = typeof definition === "object" && definition !== null && typeof definition.id === "string" && (typeof definition.setup === "function" || typeof definition.effect === "function")
    if (!ok) throw new Error(V2_LOAD_ERROR)
    if (typeof definition.setup !== "function") throw new Error("this fake runs promise plugins (setup) only")
    return definition as V2Plugin
  }

  // ---------------------------------------------------------------------------------------------
  // Locations

  /** Sets the plugin up for a location (a project folder), as OpenCode 2 does on first use of it. */
  async setup(plugin: V2Plugin, directory: string, options: Record<string, unknown> = {}): Promise<void> {
    if (this.locations.get(directory)?.pluginId) throw new Error(`location ${directory} is already set up`)
    const location = this.newLocation(plugin.id, directory, options)
    this.locations.set(directory, location)
    location.cleanup = await plugin.setup(location.ctx)
  }

  /** A location OpenCode serves with no plugin set up there (yet): its sessions run, unhooked. */
  private ensureLocation(directory: string): Location {
    const existing = this.locations.get(directory)
    if (existing) return existing
    const bare = this.newLocation(undefined, directory, {})
    this.locations.set(directory, bare)
    return bare
  }

  /** Releases a location: the plugin's cleanup runs, then every registration it made goes. */
  async dispose(directory: string): Promise<void> {
    const location = this.requireLocation(directory)
    this.locations.delete(directory)
    await location.cleanup?.()
    location.disposed = true
    location.toolTransforms.length = 0
    location.agentTransforms.length = 0
    location.hooks.clear()
    location.toolHooks.length = 0
    location.rpc.clear()
    for (const stream of location.streams) stream.close()
  }

  async disposeAll(): Promise<void> {
    for (const [directory, location] of [...this.locations]) {
      if (location.pluginId) await this.dispose(directory)
      else this.locations.delete(directory)
    }
    await this.stopService()
  }

  /** Locations with a plugin set up. */
  locationCount(): number {
    return [...this.locations.values()].filter((location) => location.pluginId).length
  }

  /** The tools a model in this location is offered: built-ins, and plugin tools with codemode off. */
  nativeTools(directory: string): string[] {
    const location = this.requireLocation(directory)
    const native = [...location.tools.values()].filter((tool) => tool.options?.codemode === false || (BUILTIN_TOOLS as readonly string[]).includes(tool.name)).map((tool) => tool.name)
    const hidden = [...location.tools.values()].some((tool) => tool.options?.codemode !== false && !(BUILTIN_TOOLS as readonly string[]).includes(tool.name))
    // Code Mode tools are reachable only through `execute`.
    return hidden ? [...native, "execute"] : native
  }

  agent(directory: string, id: string): V2AgentInfo | undefined {
    return this.requireLocation(directory).agents.get(id)
  }

  /** Calls a plugin's RPC method as the TUI would. */
  async callRpc(directory: string, id: string, method: string, input: unknown = {}): Promise<unknown> {
    const handlers = this.requireLocation(directory).rpc.get(id)
    if (!handlers?.[method]) throw new Error(`no RPC ${id}.${method} in ${directory}`)
    return handlers[method]!(input)
  }

  // ---------------------------------------------------------------------------------------------
  // Driving it as a user would

  async createSession(directory: string, title = "New session"): Promise<string> {
    return (await this.create(this.ensureLocation(directory), { title })).id
  }

  /** A user's message: prompt hooks, then the agent loop to its end. */
  async prompt(sessionId: string, text: string): Promise<void> {
    const session = this.requireSession(sessionId)
    const location = this.ensureLocation(session.info.location!.directory)
    const event = { sessionID: sessionId, messageID: this.id("msg"), prompt: { text } }
    await this.runHooks(location, "prompt", event)
    this.admit(session, event.prompt.text)
    await session.running
  }

  /** A title request: the `title` hooks run (never `context`), then the model is asked. */
  async generateTitle(sessionId: string): Promise<string> {
    const session = this.requireSession(sessionId)
    const location = this.ensureLocation(session.info.location!.directory)
    const event: { sessionID: string; model: { id: string; providerID: string }; system: Array<{ type: "text"; text: string }>; messages: unknown[]; options: Record<string, unknown>; result?: string } = {
      sessionID: sessionId,
      model: { id: "fake-model", providerID: "fake" },
      system: [{ type: "text", text: "You are a title generator." }],
      messages: modelMessages(session.messages),
      options: {},
    }
    await this.runHooks(location, "title", event)
    const title = (await this.send(session, "title", event.system, event.messages as never, [])).text ?? ""
    session.info.title = title
    return title
  }

  /** A compaction: the compaction hooks run, then the model is asked; its summary is stored and the end emitted. */
  async compact(sessionId: string): Promise<{ summary: string }> {
    const session = this.requireSession(sessionId)
    const location = this.ensureLocation(session.info.location!.directory)
    const agentId = session.info.agent ?? "build"
    const event: {
      sessionID: string
      agent: string
      model: { id: string; providerID: string }
      system: Array<{ type: "text"; text: string }>
      messages: unknown[]
      options: Record<string, unknown>
      tools: Record<string, unknown>
    } = {
      sessionID: sessionId,
      agent: agentId,
      model: { id: "fake-model", providerID: "fake" },
      system: [{ type: "text", text: "You summarize the conversation so far for the next turns." }],
      messages: modelMessages(session.messages),
      options: {},
      tools: {},
    }
    await this.runHooks(location, "compaction", event)
    const summary = (await this.send(session, "compaction", event.system, event.messages as never, [])).text ?? ""
    session.messages.push({ id: this.id("msg"), type: "compaction", status: "completed", reason: "manual", summary, recent: "", time: { created: Date.now() } })
    this.emit({ type: "session.compaction.ended", data: { sessionID: sessionId, reason: "manual", text: summary, recent: "" } } as Omit<V2Event, "id">)
    return { summary }
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId)
    this.emit({ type: "session.deleted", data: { sessionID: sessionId } })
  }

  /** Ages a session: its last activity becomes `at` (the plugin sees hours-old sessions). */
  touchSession(sessionId: string, at: number): void {
    const info = this.requireSession(sessionId).info
    info.time = { ...info.time, updated: at }
  }

  session(sessionId: string): { info: V2SessionInfo; messages: readonly V2StoredMessage[]; permissions: readonly V2Rule[] } | undefined {
    const session = this.sessions.get(sessionId)
    return session && { info: session.info, messages: session.messages, permissions: session.permissions }
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()]
  }

  /** Stores an assistant reply as OpenCode 2 keeps it (citation markup included), without a model call. */
  storeReply(sessionId: string, text: string): void {
    const session = this.requireSession(sessionId)
    session.messages.push({ id: this.id("msg"), type: "assistant", agent: session.info.agent ?? "build", content: [{ type: "text", text }], time: { created: Date.now(), completed: Date.now() } })
  }

  // ---------------------------------------------------------------------------------------------
  // The registered local service

  /**
   * Serves this fake's sessions over HTTP on 127.0.0.1 and registers it in `stateDir`: the routes
   * memory discovery uses. `readiness` picks which readiness route answers (older releases).
   */
  async startService(stateDir: string, options: { readiness?: "info" | "status" | "health"; pid?: number; password?: string } = {}): Promise<string> {
    const password = options.password ?? "fake-password"
    const readiness = `/api/${options.readiness ?? "info"}`
    const server = http.createServer((req, res) => void this.serve(req, res, readiness, password, options.pid ?? process.pid))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const file = path.join(stateDir, "opencode", "service.json")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify({ id: "fake", version: "2.0.24-fake", url, pid: options.pid ?? process.pid, password }), { mode: 0o600 })
    this.service = { server, file }
    return url
  }

  async stopService(): Promise<void> {
    if (!this.service) return
    const { server, file } = this.service
    this.service = undefined
    fs.rmSync(file, { force: true })
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse, readiness: string, password: string, pid: number): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    try {
      if (req.headers.authorization !== `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`) return send(401, { error: "unauthorized" })
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      if (req.method === "GET" && url.pathname === readiness) return send(200, { version: "2.0.24-fake", pid, urls: [] })
      if (req.method === "GET" && url.pathname === "/api/session") {
        const page = this.page(url, 50)
        if ("error" in page) return send(400, page)
        const roots = page.query.parentID === "null"
        const list = [...this.sessions.values()].map((s) => s.info).filter((info) => !roots || !info.parentID)
        list.sort((a, b) => (b.time?.updated ?? 0) - (a.time?.updated ?? 0))
        return send(200, page.slice(list))
      }
      // packages/protocol session.get: `{ data: Session }`, or 404 SessionNotFoundError.
      const one = /^\/api\/session\/([^/]+)$/.exec(url.pathname)
      if ((req.method === "GET" || req.method === "DELETE") && one) {
        const id = decodeURIComponent(one[1]!)
        const session = this.sessions.get(id)
        if (!session) return send(404, { _tag: "SessionNotFoundError", sessionID: id, message: `Session not found: ${id}` })
        if (req.method === "GET") return send(200, { data: session.info })
        await this.deleteSession(id)
        return send(200, { data: true })
      }
      const messages = /^\/api\/session\/([^/]+)\/message$/.exec(url.pathname)
      if (req.method === "GET" && messages) {
        // packages/protocol message.ts: limit 1..200, and a cursor is not combined with order.
        if (url.searchParams.has("cursor") && url.searchParams.has("order")) return send(400, { _tag: "BadRequest", message: "cursor cannot be combined with order" })
        const page = this.page(url, 50)
        if ("error" in page) return send(400, page)
        const session = this.sessions.get(decodeURIComponent(messages[1]!))
        return session ? send(200, page.slice(session.messages)) : send(404, { error: "not found" })
      }
      if (req.method === "POST" && url.pathname === "/api/experimental/generate") {
        const body = JSON.parse(await readBody(req)) as { prompt: string }
        return send(200, { data: { text: this.complete(body.prompt) } })
      }
      send(404, { error: `no route ${req.method} ${url.pathname}` })
    } catch (error) {
      send(500, { error: String(error) })
    }
  }

  /**
   * One page of a list route: `limit` (at most 200) items after the cursor. The cursor carries the
   * query it continues, so a later page needs nothing else.
   */
  private page(url: URL, fallback: number): { error: string } | { query: Record<string, string>; slice<T>(items: readonly T[]): { data: T[]; cursor: { next?: string } } } {
    const limit = Number(url.searchParams.get("limit") ?? fallback)
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) return { error: `limit must be 1..200, got ${url.searchParams.get("limit")}` }
    const cursor = url.searchParams.get("cursor")
    const state = cursor ? (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { query: Record<string, string>; offset: number }) : { query: Object.fromEntries(url.searchParams), offset: 0 }
    return {
      query: state.query,
      slice: (items) => {
        const data = items.slice(state.offset, state.offset + limit)
        const offset = state.offset + data.length
        return { data, cursor: offset < items.length ? { next: Buffer.from(JSON.stringify({ query: state.query, offset })).toString("base64url") } : {} }
      },
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The plugin context

  private newLocation(pluginId: string | undefined, directory: string, options: Record<string, unknown>): Location {
    const location: Location = {
      directory,
      pluginId,
      ctx: undefined as never,
      toolTransforms: [],
      agentTransforms: [],
      tools: new Map(),
      agents: new Map(),
      hooks: new Map(),
      toolHooks: [],
      rpc: new Map(),
      streams: new Set(),
      disposed: false,
    }
    this.rebuildTools(location)
    this.rebuildAgents(location)
    const store = this.storage.get(pluginId ?? "") ?? new Map<string, unknown>()
    this.storage.set(pluginId ?? "", store)
    const registration = (release: () => void): V2Registration => ({ dispose: async () => release() })
    const live = () => {
      if (location.disposed) throw new Error(`location ${directory} was disposed`)
    }
    location.ctx = {
      app: { name: "opencode", version: "2.0.24-fake", channel: "latest" },
      location: { directory, project: { id: "prj_fake", directory, canonical: `local:${directory}` } },
      options,
      session: {
        hook: async (name, callback) => {
          live()
          const list = location.hooks.get(name) ?? []
          list.push(callback as Callback)
          location.hooks.set(name, list)
          return registration(() => location.hooks.set(name, (location.hooks.get(name) ?? []).filter((cb) => cb !== callback)))
        },
        create: async (input) => this.create(location, input),
        get: async ({ sessionID }) => structuredClone(this.requireSession(sessionID).info),
        prompt: async ({ sessionID, text }) => {
          const session = this.requireSession(sessionID)
          this.admit(session, text)
          return { id: this.id("adm"), sessionID, type: "user", data: { text } }
        },
        wait: async ({ sessionID }) => {
          await this.sessions.get(sessionID)?.running
        },
        context: async ({ sessionID }) => structuredClone(this.requireSession(sessionID).messages),
        interrupt: async ({ sessionID }) => {
          const session = this.sessions.get(sessionID)
          if (session) session.interrupted = true
          return { interrupted: Boolean(session) }
        },
        ...(this.variant.release === "2.1.2"
          ? {
              // Every project's root sessions, newest first, paged by an opaque cursor (2.1.2).
              list: async (input: { parentID?: null; limit?: number; cursor?: string } = {}) => {
                const all = [...this.sessions.values()].filter((s) => input.parentID !== null || !s.info.parentID).sort((a, b) => (b.info.time?.updated ?? 0) - (a.info.time?.updated ?? 0))
                const start = input.cursor ? Number(Buffer.from(input.cursor, "base64url").toString("utf8")) : 0
                const page = all.slice(start, start + (input.limit ?? 50))
                return { data: page.map((s) => structuredClone(s.info)), cursor: { next: page.length ? Buffer.from(String(start + page.length)).toString("base64url") : null, previous: null } }
              },
            }
          : {}),
        ...(this.variant.sessionRemove
          ? {
              remove: async ({ sessionID }: { sessionID: string }) => {
                this.requireSession(sessionID)
                await this.deleteSession(sessionID)
              },
            }
          : {}),
      },
      tool: {
        transform: async (callback) => {
          live()
          location.toolTransforms.push(callback)
          this.rebuildTools(location)
          return registration(() => {
            location.toolTransforms.splice(location.toolTransforms.indexOf(callback), 1)
            this.rebuildTools(location)
          })
        },
        hook: async (name, callback) => {
          live()
          const entry = { name, callback: callback as Callback }
          location.toolHooks.push(entry)
          return registration(() => location.toolHooks.splice(location.toolHooks.indexOf(entry), 1))
        },
      },
      agent: {
        transform: async (callback) => {
          live()
          location.agentTransforms.push(callback)
          this.rebuildAgents(location)
          return registration(() => {
            location.agentTransforms.splice(location.agentTransforms.indexOf(callback), 1)
            this.rebuildAgents(location)
          })
        },
      },
      event: {
        subscribe: ({ signal } = {}) => {
          live()
          const stream = new EventStream(signal, () => location.streams.delete(stream))
          location.streams.add(stream)
          return stream
        },
      },
      generate: { text: async ({ prompt }) => ({ text: this.complete(prompt) }) },
      ...(this.variant.release === "2.1.2"
        ? {
            // The models the fake's provider offers, with their limits (ctx.model of 2.1.2).
            model: {
              list: async () => ({ location: { directory }, data: [this.modelInfo(), ...this.configuredModels()] }),
              default: async () => ({ location: { directory }, data: this.modelInfo() }),
            },
          }
        : {}),
      mcp: { list: async () => ({ location: { directory }, data: [] }) },
      storage: {
        get: async (key) => structuredClone(store.get(key)),
        set: async (key, value) => void store.set(key, structuredClone(value)),
        remove: async (key) => void store.delete(key),
      },
      // The agent's rules then the session's, last match wins; "ask" goes to onAsk (the user).
      permission: {
        assert: async (input) => {
          const session = this.requireSession(input.sessionID)
          for (const resource of input.resources.length ? input.resources : ["*"]) {
            const effect = this.allowed(location, session, input.action, resource)
            if (effect === "deny") throw new Error(`Permission denied: ${input.action}`)
            if (effect === "ask" && !this.onAsk(input.action, resource, input.sessionID)) throw new Error(`Permission rejected: ${input.action}`)
          }
          return undefined
        },
      },
      rpc: {
        register: async (definition, handlers) => {
          live()
          // 2.1.2 indexes the definition's events first, and throws without them.
          if (!(definition as { events?: unknown }).events) throw new TypeError("Object.entries requires that input parameter not be null or undefined")
          const id = (definition as { id: string }).id
          location.rpc.set(id, handlers)
          return registration(() => location.rpc.delete(id))
        },
      },
    }
    return location
  }

  private rebuildTools(location: Location): void {
    location.tools = new Map(BUILTIN_TOOLS.map((name) => [name, this.builtin(location, name)]))
    const editor: V2ToolEditor = {
      get: (id) => location.tools.get(id),
      add: (tool) => {
        if (!tool.name || typeof tool.execute !== "function" || typeof tool.input !== "object") throw new Error(`invalid tool ${tool.name}`)
        if (tool.name === "execute" && tool.options?.codemode === false) throw new Error('the tool name "execute" is reserved for CodeMode')
        location.tools.set(tool.name, { ...tool })
      },
      update: (id, edit) => {
        const tool = location.tools.get(id)
        if (!tool) return
        const copy = { ...tool }
        edit(copy)
        location.tools.set(id, copy)
      },
    }
    for (const transform of location.toolTransforms) transform(editor)
  }

  private rebuildAgents(location: Location): void {
    location.agents = new Map([["build", structuredClone(DEFAULT_AGENT)], ...this.variant.configAgents!.map((id): [string, V2AgentInfo] => [id, structuredClone(DEFAULT_AGENT)])])
    const editor: V2AgentEditor = {
      // Built-in agents and those transforms made; the user's config agents are not listed.
      list: () => [...location.agents.keys()].filter((id) => !this.variant.configAgents!.includes(id)).map((id) => ({ id })),
      update: (id, edit) => {
        const agent = location.agents.get(id) ?? { mode: "all", hidden: false, permissions: structuredClone(DEFAULT_AGENT.permissions) }
        edit(agent)
        location.agents.set(id, agent)
      },
    }
    for (const transform of location.agentTransforms) transform(editor)
  }

  private async create(location: Location, input: { title?: string; agent?: string; location?: { directory: string }; metadata?: Record<string, unknown>; permissions?: V2Rule[] }): Promise<V2SessionInfo> {
    const directory = input.location?.directory ?? location.directory
    const now = Date.now()
    const info = {
      id: this.id("ses"),
      title: input.title ?? "New session",
      location: { directory },
      projectID: this.variant.projectIdOf!(directory),
      time: { created: now, updated: now },
      ...(input.agent ? { agent: input.agent } : {}),
      ...(input.metadata ? { metadata: input.metadata } : {}),
    }
    this.sessions.set(info.id, { info, permissions: [...(input.permissions ?? [])], messages: [], interrupted: false })
    this.emit({ type: "session.created", data: { sessionID: info.id, location: { directory } } })
    return structuredClone(info)
  }

  private admit(session: Session, text: string): void {
    session.messages.push({ id: this.id("msg"), type: "user", text, time: { created: Date.now() } })
    session.info.time = { ...session.info.time, updated: Date.now() }
    const previous = session.running ?? Promise.resolve()
    session.running = previous.then(() => this.loop(session))
  }

  /** The agent loop: ask the model, run its tool calls, until it answers with text alone. */
  private async loop(session: Session): Promise<void> {
    const id = session.info.id
    session.interrupted = false
    this.emit({ type: "session.execution.started", data: { sessionID: id } })
    try {
      for (let step = 0; step < MAX_STEPS; step++) {
        if (session.interrupted) {
          this.emit({ type: "session.execution.interrupted", data: { sessionID: id, reason: "user" } })
          return
        }
        const reply = await this.request(session)
        // A slow model: the session can still be interrupted while it waits.
        for (let waited = 0; waited < (reply.delayMs ?? 0) && !session.interrupted; waited += 50) await sleep(50)
        if (session.interrupted) continue
        if (isError(reply)) {
          const error = { name: "APIError", message: reply.error ?? "scripted error", ...(reply.status ? { status: reply.status } : {}) }
          session.messages.push({ id: this.id("msg"), type: "assistant", content: [], error, time: { created: Date.now() } })
          this.emit({ type: "session.execution.failed", data: { sessionID: id, error } })
          return
        }
        const content: unknown[] = reply.text ? [{ type: "text", text: reply.text }] : []
        const message: V2StoredMessage = { id: this.id("msg"), type: "assistant", agent: session.info.agent ?? "build", content, time: { created: Date.now() } }
        session.messages.push(message)
        if (reply.text) this.emit({ type: "session.text.ended", data: { sessionID: id, assistantMessageID: message.id, ordinal: 0, text: reply.text } })
        if (!reply.toolCalls?.length) break
        for (const call of reply.toolCalls) content.push(await this.runTool(session, call))
      }
      session.info.time = { ...session.info.time, updated: Date.now() }
      this.emit({ type: "session.execution.succeeded", data: { sessionID: id } })
    } catch (error) {
      session.messages.push({ id: this.id("msg"), type: "assistant", content: [], error: { name: "PluginDefect", message: String(error) }, time: { created: Date.now() } })
      this.emit({ type: "session.execution.failed", data: { sessionID: id, error: String(error) } })
    }
  }

  /** One agent-loop request: the `context` hooks edit it, the scripted model answers it. */
  private async request(session: Session): Promise<FakeReply> {
    const location = this.ensureLocation(session.info.location!.directory)
    const agentId = session.info.agent ?? "build"
    const agent = location.agents.get(agentId) ?? DEFAULT_AGENT
    const native = this.nativeTools(location.directory)
    const event = {
      sessionID: session.info.id,
      model: { id: "fake-model", providerID: "fake" },
      agent: agentId,
      system: [{ type: "text" as const, text: agent.system ?? DEFAULT_AGENT.system! }],
      messages: modelMessages(session.messages),
      options: {},
      tools: Object.fromEntries(native.filter((name) => this.offered(location, session, name)).map((name) => [name, { description: location.tools.get(name)?.description ?? name, input: location.tools.get(name)?.input ?? {} }])),
    }
    // A hook that throws fails the request, as in OpenCode 2.
    await this.runHooks(location, "context", event)
    return this.send(session, "primary", event.system, event.messages, Object.keys(event.tools))
  }

  /** Sends a request the hooks have shaped to the scripted model, and records it. */
  private async send(session: Session, kind: FakeRequestRecord["kind"], system: ReadonlyArray<{ text: string }>, messages: ReadonlyArray<{ role: string; content: unknown }>, tools: readonly string[]): Promise<FakeReply> {
    const request: ChatRequest = {
      model: "fake-model",
      messages: [...system.map((part) => ({ role: "system", content: part.text })), ...toChatMessages(messages)],
      tools: tools.map((name) => ({ type: "function", function: { name } })),
    }
    this.requests.push({ sessionID: session.info.id, kind, agent: session.info.agent ?? "build", system: system.map((part) => part.text), tools: [...tools], request })
    return this.model.answer(request, kind === "title" ? "title" : "agent")
  }

  private async runHooks(location: Location, name: HookName, event: unknown): Promise<void> {
    for (const callback of [...(location.hooks.get(name) ?? [])]) await callback(event as never)
  }

  private async runTool(session: Session, call: { name: string; arguments?: unknown; id?: string }): Promise<unknown> {
    const location = this.ensureLocation(session.info.location!.directory)
    const callId = call.id ?? this.id("call")
    const input = typeof call.arguments === "string" ? JSON.parse(call.arguments) : (call.arguments ?? {})
    const finish = (status: "completed" | "error", text: string) => ({ type: "tool", id: callId, name: call.name, state: { status, input: JSON.stringify(input), content: [{ type: "text", text }] } })
    const before = { tool: call.name, sessionID: session.info.id, input }
    for (const hook of location.toolHooks.filter((h) => h.name === "execute.before")) await hook.callback(before as never)
    const after = async (status: "completed" | "error", metadata?: Record<string, unknown>) => {
      const event = { tool: call.name, sessionID: session.info.id, id: callId, input: before.input, status, ...(status === "completed" ? { result: { metadata: metadata ?? {} } } : {}) }
      for (const hook of location.toolHooks.filter((h) => h.name === "execute.after")) await hook.callback(event as never)
    }
    if (!this.nativeTools(location.directory).includes(call.name)) return finish("error", `unknown tool ${call.name}`)
    const tool = location.tools.get(call.name)!
    if (!this.offered(location, session, call.name)) return finish("error", `permission denied: ${call.name}`)
    // 2.1.2 does not evaluate a plugin tool's `permission` option: a tool asks through ctx.permission.assert.
    try {
      const result = await tool.execute(before.input, { sessionID: session.info.id, agent: session.info.agent ?? "build", messageID: "", id: callId, signal: new AbortController().signal })
      // 2.1.2 never completes a call whose metadata holds a null: the part stays running and the model is told the result is missing.
      if (holdsNull(result.metadata)) return { type: "tool", id: callId, name: call.name, state: { status: "running", input: JSON.stringify(input), content: [{ type: "text", text: "Tool result missing" }] } }
      // A built-in tool declares an output: a result without one is an error to the model.
      if ((BUILTIN_TOOLS as readonly string[]).includes(call.name) && !("output" in result)) throw new Error("Tool did not return its declared output")
      await after("completed", result.metadata)
      return finish("completed", typeof result.content === "string" ? result.content : JSON.stringify(result.content ?? ""))
    } catch (error) {
      await after("error")
      return finish("error", (error as Error).message)
    }
  }

  /**
   * Whether a tool is offered at all: not when the last rule naming it for every resource (`*`)
   * denies it and no later rule allows it for some resource.
   */
  private offered(location: Location, session: Session, tool: string): boolean {
    const agent = location.agents.get(session.info.agent ?? "build") ?? DEFAULT_AGENT
    const rules = [...agent.permissions, ...session.permissions].filter((rule) => wildcard(rule.action, tool))
    const last = rules.map((rule) => rule.resource === "*").lastIndexOf(true)
    if (last < 0 || rules[last]!.effect !== "deny") return true
    return rules.slice(last + 1).some((rule) => rule.effect !== "deny")
  }

  /** The effect of the agent's rules, then the session's, for one action on one resource (last match wins). */
  private allowed(location: Location, session: Session, action: string, resource: string): "allow" | "deny" | "ask" {
    const agent = location.agents.get(session.info.agent ?? "build") ?? DEFAULT_AGENT
    const rules = [...agent.permissions, ...session.permissions]
    const match = [...rules].reverse().find((rule) => wildcard(rule.action, action) && wildcard(rule.resource, resource))
    return match?.effect ?? "ask"
  }

  /**
   * A file tool's permission checks: outside the location, `external_directory` for the file's
   * folder (`<folder>/*`), then the action on the absolute path; inside, the action on the path
   * relative to the location.
   */
  private check(location: Location, session: Session, action: string, target: string): string | undefined {
    const absolute = path.resolve(location.directory, target)
    const ask = (act: string, res: string) => {
      const effect = this.allowed(location, session, act, res)
      return effect === "allow" || (effect === "ask" && this.onAsk(act, res, session.info.id))
    }
    const outside = !inside(location.directory, absolute)
    if (outside && !ask("external_directory", `${path.dirname(absolute)}/*`)) return `permission denied: external_directory ${path.dirname(absolute)}/*`
    const resource = outside ? absolute : path.relative(location.directory, absolute)
    if (!ask(action, resource)) return `permission denied: ${action} ${resource}`
    return undefined
  }

  private builtin(location: Location, name: (typeof BUILTIN_TOOLS)[number]): V2ToolInfo {
    const fail = (message: string): never => {
      throw new Error(message)
    }
    const sessionOf = (id: string) => this.requireSession(id)
    // OpenCode 2's file tools name their file `path` (1.18.33's V2 engine refuses `filePath`).
    const file = async (action: string, input: Record<string, unknown>, sessionID: string) => {
      const target = typeof input.path === "string" ? input.path : fail('Invalid tool input: Missing key at ["path"]')
      const denied = this.check(location, sessionOf(sessionID), action, target)
      if (denied) fail(denied)
      return path.resolve(location.directory, target)
    }
    const execute: Record<string, V2ToolInfo["execute"]> = {
      read: async (input, call) => {
        const target = await file("read", input as Record<string, unknown>, call.sessionID)
        const lines = fs.readFileSync(target, "utf8").split("\n")
        return { content: lines.map((line, i) => `${i + 1}: ${line}`).join("\n") }
      },
      write: async (input, call) => {
        // The write tool asks `edit`, as patch does.
        const target = await file("edit", input as Record<string, unknown>, call.sessionID)
        fs.mkdirSync(path.dirname(target), { recursive: true })
        fs.writeFileSync(target, String((input as { content?: unknown }).content ?? ""))
        return { content: `wrote ${target}` }
      },
      edit: async (input, call) => {
        const fields = input as { oldString?: string; newString?: string }
        const target = await file("edit", input as Record<string, unknown>, call.sessionID)
        const text = fs.readFileSync(target, "utf8")
        if (!fields.oldString || !text.includes(fields.oldString)) fail("oldString not found")
        fs.writeFileSync(target, text.replace(fields.oldString!, fields.newString ?? ""))
        return { content: `edited ${target}` }
      },
      glob: async (input, call) => {
        const fields = input as { pattern?: string; path?: string }
        const pattern = fields.pattern ?? "*"
        if (this.allowed(location, sessionOf(call.sessionID), "glob", pattern) === "deny") fail(`permission denied: glob ${pattern}`)
        const base = path.resolve(location.directory, fields.path ?? ".")
        const matcher = globRegex(pattern)
        return { content: walk(base).filter((f) => matcher.test(path.relative(base, f))).join("\n") }
      },
      grep: async (input, call) => {
        const fields = input as { pattern?: string; path?: string }
        const pattern = fields.pattern ?? ""
        if (this.allowed(location, sessionOf(call.sessionID), "grep", pattern) === "deny") fail(`permission denied: grep ${pattern}`)
        const base = path.resolve(location.directory, fields.path ?? ".")
        const regex = new RegExp(pattern)
        const hits = walk(base).flatMap((f) => fs.readFileSync(f, "utf8").split("\n").flatMap((line, i) => (regex.test(line) ? [`${f}:${i + 1}: ${line}`] : [])))
        return { content: hits.join("\n") }
      },
      shell: async () => ({ content: "shell is not simulated by this fake" }),
      webfetch: async () => ({ content: "webfetch is not simulated by this fake" }),
    }
    // Built-in tools declare an output schema and return an output beside their content (2.1.2).
    return { name, description: `built-in ${name}`, input: { type: "object" }, execute: async (input, call) => ({ ...(await execute[name]!(input, call)), output: {} }) }
  }

  /** generate.text: one prompt, no tools, no system; the scripted model answers it as it answers a structured request. */
  private complete(prompt: string): string {
    const reply = this.model.answer({ model: "fake-model", messages: [{ role: "user", content: prompt }] }, "structured")
    if (isError(reply)) throw Object.assign(new Error(reply.error ?? "scripted error"), { status: reply.status ?? 400 })
    if (reply.structured) return JSON.stringify(reply.structured)
    return reply.text ?? ""
  }

  private emit(event: Omit<V2Event, "id">): void {
    const full: V2Event = { id: this.id("evt"), ...event }
    this.events.push(full)
    for (const location of this.locations.values()) for (const stream of location.streams) stream.push(full)
  }

  private requireLocation(directory: string): Location {
    const location = this.locations.get(directory)
    if (!location) throw new Error(`no live location ${directory}`)
    return location
  }

  /** The scripted model as 2.1.2's model domain describes a configured model. */
  modelInfo(): { id: string; modelID: string; providerID: string; limit: { context: number; output: number }; variants: Array<{ id: string }> } {
    return { id: "fake-model", modelID: "fake-model", providerID: "fake", limit: { context: this.variant.contextLimit ?? 100_000, output: 4096 }, variants: [{ id: "low" }, { id: "medium" }, { id: "high" }] }
  }

  /** The variant's further models as 2.1.2's model domain lists them (ran: a config key with its own `modelID`). */
  private configuredModels(): Array<{ id: string; modelID: string; providerID: string; limit: { context: number; input?: number; output: number }; variants: Array<{ id: string }> }> {
    return (this.variant.models ?? []).map((model) => ({ id: model.id, modelID: model.modelID ?? model.id, providerID: "fake", limit: { ...model.limit }, variants: [{ id: "low" }, { id: "medium" }, { id: "high" }] }))
  }

  private requireSession(sessionId: string): Session {
    const session = this.sessions.get(sessionId)
    // 2.1.2 names it so (its message is empty there).
    if (!session) throw Object.assign(new Error(`session ${sessionId} not found`), { status: 404, name: "Session.NotFoundError" })
    return session
  }

  private id(prefix: string): string {
    this.counter += 1
    return `${prefix}_fake${String(this.counter).padStart(6, "0")}`
  }
}

/** An event subscription: an async iterator fed by the fake, closed by its signal or its location. */
class EventStream implements AsyncIterable<V2Event> {
  private readonly queue: V2Event[] = []
  private wake: (() => void) | undefined
  private closed = false

  constructor(
    signal: AbortSignal | undefined,
    private readonly onClose: () => void,
  ) {
    signal?.addEventListener("abort", () => this.close(), { once: true })
  }

  push(event: V2Event): void {
    if (this.closed) return
    this.queue.push(structuredClone(event))
    this.wake?.()
  }

  close(): void {
    this.closed = true
    this.onClose()
    this.wake?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<V2Event> {
    while (!this.closed) {
      const next = this.queue.shift()
      if (next) {
        yield next
        continue
      }
      await new Promise<void>((resolve) => (this.wake = resolve))
      this.wake = undefined
    }
  }
}

/** Stored messages -> the model-facing messages a `context` hook sees (content parts). */
function modelMessages(messages: readonly V2StoredMessage[]): Array<{ id: string; role: string; content: unknown[] }> {
  const out: Array<{ id: string; role: string; content: unknown[] }> = []
  for (const message of messages) {
    if (message.type === "user") out.push({ id: message.id, role: "user", content: [{ type: "text", text: message.text ?? "" }] })
    if (message.type !== "assistant") continue
    const parts = (message.content ?? []) as Array<Record<string, unknown>>
    out.push({
      id: message.id,
      role: "assistant",
      content: parts.map((part) => (part.type === "tool" ? { type: "tool-call", id: part.id, name: part.name, input: JSON.parse(String((part.state as { input?: string }).input ?? "{}")) } : { ...part })),
    })
    const results = parts.filter((part) => part.type === "tool")
    if (results.length) {
      out.push({
        id: `${message.id}_results`,
        role: "tool",
        content: results.map((part) => ({ type: "tool-result", id: part.id, name: part.name, result: { type: "text", value: ((part.state as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("\n") } })),
      })
    }
  }
  return out
}

/** Model-facing messages -> the chat-completions shape the scripted model reads. */
function toChatMessages(messages: ReadonlyArray<{ role: string; content: unknown }>): ChatMessage[] {
  const out: ChatMessage[] = []
  for (const message of messages) {
    const parts = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [{ type: "text", text: String(message.content ?? "") }]
    if (message.role === "tool") {
      for (const part of parts) out.push({ role: "tool", tool_call_id: String(part.id), content: String((part.result as { value?: unknown } | undefined)?.value ?? "") })
      continue
    }
    const text = parts.filter((part) => part.type === "text").map((part) => String(part.text ?? "")).join("")
    const calls = parts.filter((part) => part.type === "tool-call").map((part) => ({ id: String(part.id), type: "function", function: { name: String(part.name), arguments: JSON.stringify(part.input ?? {}) } }))
    out.push({ role: message.role, content: text, ...(calls.length ? { tool_calls: calls } : {}) })
  }
  return out
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function wildcard(pattern: string, value: string): boolean {
  const regex = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "s")
  return regex.test(value)
}

function globRegex(pattern: string): RegExp {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*\*\/?/g, "\u0000")
    .replace(/\*/g, "[^/]*")
    .replace(/\?/g, "[^/]")
    .replace(/\u0000/g, ".*")
  return new RegExp(`^${source}$`)
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === ".git") return []
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? walk(full) : entry.isFile() ? [full] : []
  })
}

function inside(root: string, target: string): boolean {
  const relative = path.relative(root, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (body += chunk))
    req.on("end", () => resolve(body))
    req.on("error", reject)
  })
}
