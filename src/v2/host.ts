// The Host port over OpenCode 2: a location's plugin context for what belongs to this process
// (helper sessions, completions, tools), and the registered local service (service.ts) for what
// spans every project (the session list, other sessions' messages). Without a service, phase 1
// sees only the conversations this process observed (ObservedSessions), and says so.
//
// The context is whichever live location the runtime points at (locations.ts), read at every
// call, so a disposed location hands its work to a survivor.
import type { GenerateInput, GenerateReply, Host, HelperReply, HostSession, LogLevel, ModelRef } from "../host.js"
import { LOG_SERVICE } from "../constants.js"
import { memoryRootForms } from "../write/helpers/helper-sandbox.js"
import type { V2Context, V2ModelInfo, V2StoredMessage } from "./api.js"
import { toTranscriptMessages } from "./messages.js"
import { v2HelperRules } from "./sandbox.js"
import type { ServiceState } from "../util/opencode-service.js"

/** How phase 1 finds sessions here, for memory_inspect and the status RPC. */
export interface V2HostStatus {
  /** host: OpenCode's own session domain (2.1.2); service: the background service's HTTP API; observed: what this process saw. */
  sessions: "host" | "service" | "observed"
  detail: string
}

/** Sessions this process saw (a prompt, a turn ending, a creation): the fallback without a service. */
export class ObservedSessions {
  private readonly seen = new Map<string, number>()

  constructor(private readonly limit = 1_000) {}

  touch(sessionId: string, at: number): void {
    this.seen.delete(sessionId)
    this.seen.set(sessionId, at)
    if (this.seen.size > this.limit) this.seen.delete(this.seen.keys().next().value!)
  }

  forget(sessionId: string): void {
    this.seen.delete(sessionId)
  }

  ids(): string[] {
    return [...this.seen.keys()].reverse()
  }
}

export interface V2HostDeps {
  /** The live location's context. */
  ctx: () => V2Context
  /** The service, discovered at most once per interval (the runtime caches it). */
  service: (signal: AbortSignal) => Promise<ServiceState>
  /** The last discovery's answer, without discovering. */
  lastService: () => ServiceState | undefined
  observed: ObservedSessions
  /** Consolidation helpers: their session id -> the one memory root they may touch. */
  confined: Map<string, string>
  /** Each helper session's own instructions, for the context hook to add (V2 prompts take no system text). */
  helperSystem: Map<string, string>
  /** OpenCode 2 gives plugins no log API: the runtime writes to the server's stderr. */
  log: (line: string) => void
}

const HELPER_AGENTS = { extract: "memorize-extract", consolidate: "memorize" } as const

export function createV2Host(deps: V2HostDeps): Host & { status(): V2HostStatus } {
  const ready = async (signal: AbortSignal) => {
    const state = await deps.service(signal)
    return state.state === "ready" ? state.client : undefined
  }

  return {
    kind: "opencode2",

    async log(level: LogLevel, message: string) {
      if (level !== "debug") deps.log(`${LOG_SERVICE}: ${level}: ${message}`)
    },

    async listRootSessions({ signal, search }) {
      const filter = (sessions: HostSession[]) => (search ? sessions.filter((session) => session.title.includes(search)) : sessions)
      const ctx = deps.ctx()
      // 2.1.2's session domain lists every project's sessions from OpenCode's own database.
      if (typeof ctx.session.list === "function") return { sessions: filter((await listAll(ctx, signal)).flatMap((raw) => toHostSession(raw))), complete: !search }
      const client = await ready(signal)
      if (client) return { sessions: filter((await client.rootSessions(signal)).flatMap((raw) => toHostSession(raw))), complete: !search }
      const sessions: HostSession[] = []
      for (const id of deps.observed.ids()) {
        const info = await ctx.session.get({ sessionID: id }).catch(() => undefined)
        if (!info) {
          deps.observed.forget(id)
          continue
        }
        sessions.push(...toHostSession(info))
      }
      // Only what this process saw: never a reason to forget anything.
      return { sessions: filter(sessions), complete: false }
    },

    async sessionExists(sessionId, signal) {
      const ctx = deps.ctx()
      // 2.1.2 answers for any project's session, and names a missing one Session.NotFoundError.
      if (typeof ctx.session.list === "function") {
        try {
          await ctx.session.get({ sessionID: sessionId })
          return true
        } catch (error) {
          if (isNotFound(error)) return false
          throw error
        }
      }
      // Before 2.1, only the service answers for every project; without it, a missing session
      // cannot be told from a session this location cannot see, so nothing is called gone.
      const client = await ready(signal)
      if (!client) throw new Error("the OpenCode service is unavailable, so whether the session still exists cannot be told")
      return client.sessionExists(sessionId, signal)
    },

    async loadMessages(sessionId, signal) {
      const client = await ready(signal)
      // The service has the whole history; this process's context only what follows the last compaction.
      const raw = client ? await client.messages(sessionId, signal) : await deps.ctx().session.context({ sessionID: sessionId })
      return toTranscriptMessages(raw as readonly V2StoredMessage[])
    },

    async createSession(input) {
      const ctx = deps.ctx()
      // V2 agents belong to a location: the helper runs in this plugin's location, and its own
      // rules name the memory root it may touch.
      const session = await ctx.session.create({
        title: input.title,
        agent: HELPER_AGENTS[input.role],
        location: { directory: ctx.location.directory },
        metadata: input.metadata,
        permissions: v2HelperRules(input.role, memoryRootForms(input.directory)),
      })
      if (input.role === "consolidate") deps.confined.set(session.id, input.directory)
      return { id: session.id }
    },

    async prompt(sessionId, input, signal): Promise<HelperReply> {
      if (input.schema) return { text: "", error: { name: "UnsupportedError", message: "OpenCode 2 sessions take no JSON schema; extraction uses generate.text" } }
      const ctx = deps.ctx()
      deps.helperSystem.set(sessionId, input.system)
      try {
        const text = typeof input.text === "string" ? input.text : input.text.join("\n\n")
        await ctx.session.prompt({ sessionID: sessionId, text, delivery: "queue" })
        // wait() cannot be cancelled: an abort interrupts the session, which ends the wait.
        const aborted = new Promise<"aborted">((resolve) => {
          if (signal.aborted) resolve("aborted")
          signal.addEventListener("abort", () => resolve("aborted"), { once: true })
        })
        if ((await Promise.race([ctx.session.wait({ sessionID: sessionId }).then(() => "done" as const), aborted])) === "aborted") {
          await ctx.session.interrupt({ sessionID: sessionId }).catch(() => undefined)
          return { text: "", error: { name: "AbortError", message: "the helper session was aborted" } }
        }
        return lastReply(await ctx.session.context({ sessionID: sessionId }))
      } finally {
        deps.helperSystem.delete(sessionId)
      }
    },

    async abortSession(sessionId) {
      await deps.ctx().session.interrupt({ sessionID: sessionId })
    },

    async deleteSession(sessionId) {
      const ctx = deps.ctx()
      try {
        // 2.0.16's plugin session domain has no remove (later 2.0.x adds it); the service's
        // DELETE /api/session/:id is in every 2.0.x.
        if (typeof ctx.session.remove === "function") await ctx.session.remove({ sessionID: sessionId })
        else {
          const signal = AbortSignal.timeout(10_000)
          const client = await ready(signal)
          if (!client) throw new Error("this OpenCode 2 has no session.remove and its service is unavailable")
          await client.deleteSession(sessionId, signal)
        }
        return true
      } catch {
        // Already gone counts as deleted.
        return await ctx.session.get({ sessionID: sessionId }).then(() => false, () => true)
      } finally {
        deps.confined.delete(sessionId)
      }
    },

    async contextLimit(model, signal) {
      // The input limit, when the model declares one, is what a prompt may fill; else the whole window.
      const info = await describeModel(liveCtx(deps), model, signal)
      return positive(info?.limit?.input) ?? positive(info?.limit?.context)
    },

    async modelVariants(model, signal) {
      const info = await describeModel(liveCtx(deps), model, signal)
      return (info?.variants ?? []).flatMap((variant) => (typeof variant.id === "string" ? [variant.id] : []))
    },

    async modelIds() {
      const models = deps.ctx().model
      if (!models) return undefined
      return unwrapList(await models.list()).flatMap((info) => (info.providerID && modelKey(info) ? [`${info.providerID}/${modelKey(info)}`] : []))
    },

    async mcpServers() {
      const listed = await deps.ctx().mcp?.list()
      const data = (listed as { data?: unknown } | undefined)?.data ?? listed
      return Array.isArray(data) ? data.flatMap((entry) => (typeof (entry as { name?: unknown }).name === "string" ? [(entry as { name: string }).name] : [])) : []
    },

    async generateText(input: GenerateInput, signal: AbortSignal): Promise<GenerateReply> {
      const model = input.model ? toV2Model(input.model, input.variant) : undefined
      try {
        // The service resolves models against the global config, like memory, which is global too.
        const client = await ready(signal)
        if (client) return { text: await client.generateText({ prompt: input.prompt, ...(model ? { model } : {}) }, signal) }
        const generate = deps.ctx().generate
        if (!generate) return { text: "", error: { name: "UnsupportedError", message: "this OpenCode 2 offers no generate.text" } }
        return { text: (await generate.text({ prompt: input.prompt, ...(model ? { model } : {}) })).text }
      } catch (error) {
        // The service's HTTP error has `status`; a provider's error thrown through the plugin
        // context (the AI SDK's APICallError) has `statusCode` and `responseBody`.
        const { status, statusCode, responseBody } = error as { status?: unknown; statusCode?: unknown; responseBody?: unknown }
        const code = typeof status === "number" ? status : typeof statusCode === "number" ? statusCode : undefined
        const body = typeof responseBody === "string" && responseBody ? { body: responseBody.slice(0, 4_000) } : {}
        return { text: "", error: { name: (error as Error).name || "Error", message: (error as Error).message ?? String(error), ...(code !== undefined ? { status: code } : {}), ...body } }
      }
    },

    status(): V2HostStatus {
      const state = deps.lastService()
      const listed = typeof liveCtx(deps)?.session.list === "function"
      if (state?.state === "ready") {
        const where = `the OpenCode service at ${new URL(state.registration.url).origin} (${state.route})`
        return listed
          ? { sessions: "host", detail: `sessions of every project, through OpenCode's session domain; their whole history through ${where}` }
          : { sessions: "service", detail: `sessions of every project, through ${where}` }
      }
      const why = state ? state.reason : "the OpenCode service has not been looked for yet"
      if (listed) return { sessions: "host", detail: `sessions of every project, through OpenCode's session domain; each one's messages since its last compaction (the OpenCode service, which has the whole history, is not in use: ${why})` }
      return { sessions: "observed", detail: `the OpenCode service is unavailable (${why}); only conversations this process observed are learned from` }
    },
  }
}

/** Every page of ctx.session.list: the root sessions of every project. */
async function listAll(ctx: V2Context, signal: AbortSignal, maxPages = 500): Promise<unknown[]> {
  const items: unknown[] = []
  let cursor: string | undefined
  for (let page = 0; page < maxPages; page++) {
    if (signal.aborted) throw signal.reason
    const answer = await ctx.session.list!({ parentID: null, limit: 200, ...(cursor ? { cursor } : {}) })
    const data = Array.isArray(answer?.data) ? answer.data : []
    items.push(...data)
    const next = answer?.cursor?.next
    if (data.length === 0 || typeof next !== "string" || !next) return items
    cursor = next
  }
  // A list cut short would look like sessions gone: fail instead (the pass is skipped).
  throw new Error(`ctx.session.list: more than ${maxPages} pages`)
}

function isNotFound(error: unknown): boolean {
  const named = error as { name?: unknown; _tag?: unknown; message?: unknown } | undefined
  return [named?.name, named?._tag].some((tag) => typeof tag === "string" && /NotFound/.test(tag)) || (typeof named?.message === "string" && /^Session not found/i.test(named.message))
}

/**
 * A model's facts from 2.1.2's model domain (undefined: the default model); undefined when the host
 * has no such domain, does not list the model, or fails: a window or variant not known is no error.
 */
async function describeModel(ctx: V2Context | undefined, model: ModelRef | undefined, signal: AbortSignal): Promise<V2ModelInfo | undefined> {
  const models = ctx?.model
  if (!models || signal.aborted) return undefined
  try {
    if (!model) return models.default ? unwrapOne(await models.default()) : undefined
    return unwrapList(await models.list()).find((info) => info.providerID === model.providerID && modelKey(info) === model.modelID)
  } catch {
    return undefined
  }
}

/**
 * The name 2.1.2 knows a model by: its `id`, the key under providers.<id>.models in the config, which
 * `opencode models`, generate.text and sessions take. `modelID` is what is sent to the provider: the
 * same unless the config's `modelID` names another (ran: generate.text of that other name answers
 * "Model unavailable").
 */
function modelKey(info: V2ModelInfo): string | undefined {
  return info.id ?? info.modelID
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined
}

function unwrapList(answer: { data?: V2ModelInfo[] } | V2ModelInfo[]): V2ModelInfo[] {
  const list = Array.isArray(answer) ? answer : answer?.data
  return Array.isArray(list) ? list : []
}

/** 2.1.2 answers {location, data}, data the model or null when there is none. */
function unwrapOne(answer: { data?: V2ModelInfo | null } | V2ModelInfo): V2ModelInfo | undefined {
  const one = typeof answer === "object" && answer !== null && "data" in answer ? answer.data : answer
  return typeof one === "object" && one !== null ? (one as V2ModelInfo) : undefined
}

/** The live context, or none (the last location gone). */
function liveCtx(deps: V2HostDeps): V2Context | undefined {
  try {
    return deps.ctx()
  } catch {
    return undefined
  }
}

function toV2Model(model: ModelRef, variant: string | undefined) {
  return { id: model.modelID, providerID: model.providerID, ...(variant ? { variant } : {}) }
}

function toHostSession(raw: unknown): HostSession[] {
  const session = raw as { id?: unknown; parentID?: unknown; title?: unknown; location?: { directory?: unknown }; projectID?: unknown; time?: { created?: unknown; updated?: unknown } }
  if (typeof session?.id !== "string" || (typeof session.parentID === "string" && session.parentID)) return []
  const created = typeof session.time?.created === "number" ? session.time.created : 0
  return [
    {
      id: session.id,
      title: typeof session.title === "string" ? session.title : "",
      directory: typeof session.location?.directory === "string" ? session.location.directory : "",
      createdAt: created,
      updatedAt: typeof session.time?.updated === "number" ? session.time.updated : created,
      ...(typeof session.projectID === "string" && session.projectID ? { project: { key: session.projectID } } : {}),
    },
  ]
}

/** The text of the session's last assistant message, and its error if it ended in one. */
function lastReply(messages: readonly V2StoredMessage[]): HelperReply {
  const last = [...messages].reverse().find((message) => message.type === "assistant")
  if (!last) return { text: "", error: { name: "NoReplyError", message: "the helper session ended without a reply" } }
  const text = (Array.isArray(last.content) ? last.content : [])
    .flatMap((part) => ((part as { type?: unknown }).type === "text" && typeof (part as { text?: unknown }).text === "string" ? [(part as { text: string }).text] : []))
    .join("\n")
  const error = last.error as { name?: unknown; type?: unknown; message?: unknown; status?: unknown } | undefined
  if (!error) return { text }
  return {
    text,
    error: {
      name: typeof error.name === "string" ? error.name : typeof error.type === "string" ? error.type : "Error",
      message: typeof error.message === "string" ? error.message : "",
      ...(typeof error.status === "number" ? { status: error.status } : {}),
    },
  }
}
