// The part of OpenCode 2's plugin API this adapter uses, as local types. OpenCode 2 ships its
// plugin package as @opencode/plugin, a scope this project's registry does not carry, and its
// `define` is the identity function, so the adapter needs no runtime import: it exports a plain
// `{ id, setup }` and types the context itself. Derived from the released 2.0.x line (the
// @opencode/plugin 2.0.16 declarations, the 2.0.x sources of packages/plugin/src/promise/ and
// packages/core/src/session/, and a third party's contract run on 2.0.24); each fact and its
// source is listed in test/fakes/opencode2.ts and docs/decisions/16-one-module-two-hosts.md. Every field the adapter
// reads from the host is still checked at run time: a type here is a claim about the host, not a
// guarantee.

export interface V2Registration {
  dispose(): Promise<void>
}

export type V2Cleanup = () => Promise<void> | void

export interface V2Plugin {
  readonly id: string
  setup(ctx: V2Context | V2RegistrationContext): Promise<V2Cleanup | void> | V2Cleanup | void
}

/** A full OpenCode 2 context: the domains a memory runtime needs are there. */
export function isFullContext(ctx: V2Context | V2RegistrationContext): ctx is V2Context {
  const full = ctx as Partial<V2Context>
  return typeof full.session?.hook === "function" && typeof full.tool?.transform === "function" && typeof full.event?.subscribe === "function" && typeof full.location?.directory === "string"
}

export interface V2Location {
  directory: string
  workspaceID?: string
  /** The project the folder belongs to: its id, its root folder, and a canonical identity (2.0.16 declarations). */
  project?: { id: string; directory: string; canonical?: string }
}

export interface V2ModelRef {
  id: string
  providerID: string
  variant?: string
}

/** A permission rule: evaluated after the agent's, the last match wins. */
export interface V2Rule {
  action: string
  resource: string
  effect: "allow" | "deny" | "ask"
}

export type V2SystemPart = { type: "text"; text: string }

/** A model-facing message of a request (`@opencode/ai` Message): content parts, not V1's `parts`. */
export interface V2ModelMessage {
  id?: string
  role: string
  content: unknown
  metadata?: Record<string, unknown>
}

/**
 * The `context` hook's event: one primary (agent-loop) request of a session, edited in place.
 * Compaction, title and generate requests never reach `context`: each has its own hook, and no
 * event names its kind (packages/core/src/session/model-request.ts).
 */
export interface V2SessionContext {
  readonly sessionID: string
  readonly model?: V2ModelRef
  readonly agent?: string
  system: V2SystemPart[]
  messages: V2ModelMessage[]
  options?: Record<string, unknown>
  tools?: Record<string, unknown>
}

export interface V2SessionPrompt {
  readonly sessionID: string
  readonly messageID?: string
  prompt: { text: string }
}

export interface V2SessionInfo {
  id: string
  parentID?: string
  title?: string
  location?: { directory: string; workspaceID?: string }
  /** The project OpenCode keys the folder under: one for a repository's subfolders and worktrees (packages/schema session.ts). */
  projectID?: string
  time?: { created?: number; updated?: number }
}

/** A stored message (packages/schema session-message.ts), tagged by `type`. */
export interface V2StoredMessage {
  id: string
  type: string
  text?: string
  content?: unknown[]
  agent?: string
  error?: unknown
  time?: { created?: number; completed?: number }
  [key: string]: unknown
}

/** The `compaction` hook's event: the compaction request (2.1.2 reads back its system, messages, options and tools). */
export type V2SessionCompaction = V2SessionContext

/** The `title` and `generate` hooks' event: a request with no agent loop. */
export interface V2SessionAuxiliary {
  readonly sessionID: string
  readonly model?: V2ModelRef
  system: V2SystemPart[]
  messages: V2ModelMessage[]
  options?: Record<string, unknown>
}

export interface V2SessionHooks {
  context: V2SessionContext
  prompt: V2SessionPrompt
  compaction: V2SessionCompaction
  title: V2SessionAuxiliary
  generate: V2SessionAuxiliary
}

/** A page of ctx.session.list (2.1.2): every project's sessions, newest first, with a cursor to the next. */
export interface V2SessionPage {
  data: unknown[]
  cursor?: { next?: string | null; previous?: string | null }
}

/** One model as ctx.model.list and ctx.model.default describe it (2.1.2's Model.Info, under `data` beside `location`). */
export interface V2ModelInfo {
  /** The name OpenCode knows the model by: its key under providers.<id>.models in the config. */
  id?: string
  /** The name sent to the provider: the config's `modelID`, else the id. */
  modelID?: string
  providerID?: string
  limit?: { context?: number; input?: number; output?: number }
  variants?: Array<{ id?: string }>
}

export interface V2SessionDomain {
  /** 2.1.2: the sessions of every project (the global database), not only this location's. */
  list?(input: { parentID?: null; limit?: number; cursor?: string }): Promise<V2SessionPage>
  hook<N extends keyof V2SessionHooks>(name: N, callback: (event: V2SessionHooks[N]) => Promise<void> | void): Promise<V2Registration>
  create(input: {
    title?: string
    agent?: string
    model?: V2ModelRef
    location?: { directory: string }
    metadata?: Record<string, unknown>
    permissions?: V2Rule[]
  }): Promise<V2SessionInfo>
  get(input: { sessionID: string }): Promise<V2SessionInfo>
  prompt(input: { sessionID: string; text: string; delivery?: "queue" | "steer" }): Promise<unknown>
  wait(input: { sessionID: string }): Promise<void>
  /** The session's model context: the messages since its last compaction. */
  context(input: { sessionID: string }): Promise<readonly V2StoredMessage[]>
  interrupt(input: { sessionID: string }): Promise<unknown>
  /** Not in the 2.0.16 promise domain; later 2.0.x sources add it. The service's DELETE route is the fallback. */
  remove?(input: { sessionID: string }): Promise<void>
}

export interface V2ToolCall {
  readonly sessionID: string
  readonly agent?: string
  readonly messageID?: string
  readonly id?: string
  readonly signal?: AbortSignal
}

export interface V2ToolResult {
  content?: string
  /** A built-in tool's declared output (2.1.2 refuses a built-in tool's result without it). */
  output?: unknown
  metadata?: Record<string, unknown>
}

export interface V2ToolInfo {
  name: string
  description: string
  /** JSON Schema of the input. */
  input: Record<string, unknown>
  options?: { codemode?: boolean; permission?: string; namespace?: string }
  execute(input: unknown, call: V2ToolCall): Promise<V2ToolResult>
}

export interface V2ToolEditor {
  get(id: string): V2ToolInfo | undefined
  add(tool: V2ToolInfo): void
  update(id: string, edit: (tool: V2ToolInfo) => void): void
}

export interface V2ToolExecuteBefore {
  tool: string
  readonly sessionID: string
  input: unknown
}

/** A finished tool call; `result` only when it completed. */
export interface V2ToolExecuteAfter {
  readonly tool: string
  readonly sessionID: string
  readonly id?: string
  readonly input: unknown
  readonly status?: "completed" | "error"
  readonly result?: { metadata?: Record<string, unknown> }
}

export interface V2ToolDomain {
  transform(callback: (editor: V2ToolEditor) => void): Promise<V2Registration>
  hook(name: "execute.before", callback: (event: V2ToolExecuteBefore) => Promise<void> | void): Promise<V2Registration>
  hook(name: "execute.after", callback: (event: V2ToolExecuteAfter) => Promise<void> | void): Promise<V2Registration>
}

export interface V2AgentInfo {
  mode?: "subagent" | "primary" | "all"
  hidden?: boolean
  description?: string
  system?: string
  model?: V2ModelRef
  steps?: number
  permissions: V2Rule[]
}

export interface V2AgentEditor {
  list?(): readonly unknown[]
  /** Creates the agent when it is missing. */
  update(id: string, edit: (agent: V2AgentInfo) => void): void
}

/** An event on the host's stream: its payload is under `data`. */
export interface V2Event {
  id?: string
  type: string
  data?: Record<string, unknown>
  location?: { directory?: string }
}

/**
 * What OpenCode 1.18's own V2 loader passes to `setup`: registration domains only (no session,
 * tool, event or location). It converts a V1 config's `plugin` list, so it sets up this module too.
 */
export interface V2RegistrationContext {
  readonly options?: Readonly<Record<string, unknown>>
  readonly agent?: { transform(callback: (editor: V2AgentEditor) => void): Promise<V2Registration>; reload?(): Promise<void> }
}

export interface V2Context {
  readonly app?: { name?: string; version?: string; channel?: string }
  readonly location: V2Location
  readonly options?: Readonly<Record<string, unknown>>
  readonly session: V2SessionDomain
  readonly tool: V2ToolDomain
  readonly agent: { transform(callback: (editor: V2AgentEditor) => void): Promise<V2Registration>; reload?(): Promise<void> }
  readonly event: { subscribe(options?: { signal?: AbortSignal }): AsyncIterable<V2Event> }
  readonly generate?: { text(input: { prompt: string; model?: V2ModelRef }): Promise<{ text: string }> }
  /** 2.1.2: the models every provider offers, with their limits, and the default one. */
  readonly model?: {
    list(): Promise<{ data?: V2ModelInfo[] } | V2ModelInfo[]>
    default?(): Promise<{ data?: V2ModelInfo } | V2ModelInfo>
  }
  readonly mcp?: { list(): Promise<unknown> }
  readonly storage?: {
    get(key: string): Promise<unknown>
    set(key: string, value: unknown): Promise<void>
    remove?(key: string): Promise<void>
  }
  /**
   * 2.1.2: asks the session's rules for an action, and the user when they say "ask", waiting for
   * the answer; throws when it is denied or rejected. A plugin tool's `permission` option is not
   * evaluated by 2.1.2, so a tool asks here itself.
   */
  readonly permission?: {
    assert(input: {
      action: string
      resources: string[]
      save?: string[]
      metadata?: Record<string, unknown>
      sessionID: string
      agent?: string
      source?: { type: "tool"; messageID?: string; id?: string }
    }): Promise<unknown>
  }
  readonly rpc?: {
    register(definition: unknown, handlers: Record<string, (input: unknown) => Promise<unknown>>): Promise<V2Registration>
  }
}
