// The Host port over OpenCode 1.x's SDK client (the plugin input's `client`). Under `opencode run`
// that client calls the server in process; under `opencode serve` it calls the real URL. Every
// call carries an abort signal and a time bound, and a failed call throws so the caller can skip.
import type { PluginInput } from "@opencode-ai/plugin"
import { LOG_SERVICE } from "../constants.js"
import type { Host, HelperReply, HostSession, ModelRef } from "../host.js"
import { helperUsage } from "../write/helpers/helper-usage.js"

type Client = PluginInput["client"]

/** The SDK's typings lag the server (no `format`, `metadata`, experimental routes): calls go through this loose view. */
interface LooseClient {
  _client: { get(options: Record<string, unknown>): Promise<{ data?: unknown; error?: unknown; response?: Response }> }
  session: Record<string, (options: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response?: Response }>>
  config: { providers(options: Record<string, unknown>): Promise<{ data?: unknown; error?: unknown }> }
  mcp: { status(options: Record<string, unknown>): Promise<{ data?: unknown; error?: unknown; response?: Response }> }
}

const LIST_PAGE = 200
/** A provider's error body is kept this far: enough for its error code and message. */
const BODY_MAX_CHARS = 4_000
const LIST_MAX_PAGES = 500

export function createV1Host(client: Client): Host {
  const loose = client as unknown as LooseClient
  // What OpenCode says about each model, fetched once per instance: limits and effort variants.
  const models = new Map<string, { context?: number; variants: string[] }>()
  let offered: string[] | undefined
  const listProviders = async (signal: AbortSignal) => {
    const result = await loose.config.providers({ signal })
    const providers = ((ok(result, "list providers") as { providers?: RawProvider[] }).providers ?? []) as RawProvider[]
    offered = []
    for (const provider of providers) {
      for (const [id, info] of Object.entries(provider.models ?? {})) {
        offered.push(`${provider.id}/${id}`)
        // The input limit, when the model declares one, is what a prompt may fill (1.18.33's own
        // compaction counts from it too); else the whole context.
        const window = positive(info.limit?.input) ?? positive(info.limit?.context)
        models.set(`${provider.id}/${id}`, { ...(window ? { context: window } : {}), variants: Object.keys(info.variants ?? {}) })
      }
    }
  }
  const describe = async (model: ModelRef, signal: AbortSignal) => {
    const key = `${model.providerID}/${model.modelID}`
    if (!models.has(key)) {
      await listProviders(signal)
      if (!models.has(key)) models.set(key, { variants: [] })
    }
    return models.get(key)!
  }

  return {
    kind: "opencode1",

    async log(level, message, extra) {
      // OpenCode 1.18.33 writes the message but not the service into its log, so the message carries
      // the name too: `grep codex-memory:` finds every line.
      await client.app.log({ body: { service: LOG_SERVICE, level, message: `${LOG_SERVICE}: ${message}`, ...(extra ? { extra } : {}) } })
    },

    async listRootSessions({ signal, search }) {
      const sessions: HostSession[] = []
      let cursor: string | undefined
      for (let page = 0; page < LIST_MAX_PAGES; page++) {
        // `directory: ""` asks for every project; the SDK would otherwise scope GETs to this one.
        // Archived sessions are listed too (OpenCode leaves them out by default): they still exist.
        const query: Record<string, unknown> = { roots: true, archived: true, directory: "", limit: LIST_PAGE }
        if (cursor) query.cursor = cursor
        if (search) query.search = search
        const result = await loose._client.get({ url: "/experimental/session", query, signal })
        const data = ok(result, "list sessions") as RawSession[]
        for (const raw of data) sessions.push(toHostSession(raw))
        cursor = result.response?.headers.get("x-next-cursor") ?? undefined
        // OpenCode pages by `time.updated < cursor`, so a session sharing the boundary's time can be
        // missed: "complete" is what the pages say, and reconciliation confirms every absence.
        if (!cursor || data.length === 0) return { sessions, complete: true }
      }
      throw new Error(`list sessions: more than ${LIST_MAX_PAGES} pages`)
    },

    async sessionExists(sessionId, signal) {
      const result = await loose.session.get!({ path: { id: sessionId }, signal })
      if (!result.error && result.data !== undefined) return true
      if (result.response?.status === 404) return false
      ok(result, `look up session ${sessionId}`)
      return true
    },

    async loadMessages(sessionId, signal) {
      const result = await loose.session.messages!({ path: { id: sessionId }, signal })
      return ok(result, `messages of ${sessionId}`) as unknown[]
    },

    async createSession(input, signal) {
      const result = await loose.session.create!({
        query: { directory: input.directory },
        // OpenCode 1.18 stores the ruleset on the session and appends it after the agent's rules
        // whenever it offers tools or checks a call (last match wins), so these rules decide.
        body: { title: input.title, metadata: input.metadata, permission: input.permission },
        signal,
      })
      const data = ok(result, "create helper session") as { id: string }
      return { id: data.id }
    },

    async prompt(sessionId, input, signal) {
      const body: Record<string, unknown> = {
        agent: input.agent,
        system: input.system,
        parts: textParts(input.text),
      }
      if (input.model) body.model = input.model
      if (input.variant) body.variant = input.variant
      if (input.schema) body.format = { type: "json_schema", schema: input.schema }
      const result = await loose.session.prompt!({ path: { id: sessionId }, query: { directory: input.directory }, body, signal })
      return toHelperReply(ok(result, "prompt helper session") as RawReply)
    },

    async abortSession(sessionId, directory) {
      await loose.session.abort!({ path: { id: sessionId }, query: { directory } })
    },

    async deleteSession(sessionId, directory) {
      const result = await loose.session.delete!({ path: { id: sessionId }, query: { directory } })
      if (!result.error) return true
      // Already gone counts as deleted.
      return result.response?.status === 404
    },

    async contextLimit(model: ModelRef | undefined, signal) {
      // Which model a helper session without one gets is the agent's business: not known here.
      if (!model) return undefined
      return (await describe(model, signal)).context
    },

    async modelVariants(model: ModelRef, signal) {
      return (await describe(model, signal)).variants
    },

    async modelIds(signal) {
      if (!offered) await listProviders(signal)
      return offered
    },

    async mcpServers(signal) {
      const result = await loose.mcp.status({ signal })
      return Object.keys((ok(result, "MCP status") as Record<string, unknown>) ?? {})
    },
  }
}

interface RawSession {
  id: string
  title?: string
  directory?: string
  parentID?: string
  /** OpenCode's project id for the session's folder (`global` outside a repository). */
  projectID?: string
  metadata?: Record<string, unknown>
  time?: { created?: number; updated?: number; archived?: number }
}

interface RawProvider {
  id: string
  models?: Record<string, { limit?: { context?: number; input?: number }; variants?: Record<string, unknown> }>
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined
}

interface RawReply {
  info?: { role?: string; structured?: unknown; error?: { name?: string; data?: { message?: string; statusCode?: number; responseBody?: string } }; tokens?: unknown; cost?: unknown }
  parts?: Array<{ type?: string; text?: string; synthetic?: boolean }>
}

function toHostSession(raw: RawSession): HostSession {
  return {
    id: raw.id,
    title: raw.title ?? "",
    directory: raw.directory ?? "",
    ...(raw.parentID ? { parentId: raw.parentID } : {}),
    createdAt: raw.time?.created ?? 0,
    updatedAt: raw.time?.updated ?? raw.time?.created ?? 0,
    ...(raw.time?.archived ? { archived: true } : {}),
    ...(raw.metadata ? { metadata: raw.metadata } : {}),
    // The same id OpenCode 2 gives (both lines compute it alike), so both key a repository one way.
    ...(typeof raw.projectID === "string" && raw.projectID ? { project: { key: raw.projectID } } : {}),
  }
}

function toHelperReply(raw: RawReply): HelperReply {
  const text = (raw.parts ?? [])
    .filter((part) => part.type === "text" && !part.synthetic && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n")
  const error = raw.info?.error
  return {
    text,
    // The reply's own message: what a single-step helper cost (the ledger's fallback).
    ...(raw.info ? { usage: helperUsage([{ info: { ...raw.info, role: "assistant" } }]) } : {}),
    ...(raw.info?.structured !== undefined ? { structured: raw.info.structured } : {}),
    ...(error
      ? {
          error: {
            name: error.name ?? "Error",
            message: error.data?.message ?? "",
            ...(error.data?.statusCode !== undefined ? { status: error.data.statusCode } : {}),
            // APIError and ContextOverflowError keep the provider's body: its error code
            // (context_length_exceeded) may be nowhere in the message (write/helpers/overflow.ts).
            ...(typeof error.data?.responseBody === "string" && error.data.responseBody ? { body: error.data.responseBody.slice(0, BODY_MAX_CHARS) } : {}),
          },
        }
      : {}),
  }
}

/** Each string its own text part, in order. */
export function textParts(text: string | readonly string[]): Array<{ type: "text"; text: string }> {
  return (typeof text === "string" ? [text] : text).map((part) => ({ type: "text", text: part }))
}

/** The data of an SDK result, or an error naming the call and the server's answer. */
function ok(result: { data?: unknown; error?: unknown; response?: Response }, what: string): unknown {
  if (result.error !== undefined || result.data === undefined) {
    const status = result.response?.status
    const detail = typeof result.error === "object" ? JSON.stringify(result.error).slice(0, 300) : String(result.error ?? "no data")
    throw new Error(`${what} failed${status ? ` (HTTP ${status})` : ""}: ${detail}`)
  }
  return result.data
}
