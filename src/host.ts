// The contract between the memory core and an OpenCode host. Adapters (src/v1 for OpenCode 1.x,
// later src/v2) implement it; nothing in the core imports an adapter or an SDK. Every call may
// fail or time out; callers treat a failure as "skip this pass", never as data.

export type LogLevel = "debug" | "info" | "warn" | "error"

export type HostKind = "opencode1" | "opencode2"

/**
 * A session as the host lists it. Its strings are user data (OpenCode's title agent writes the
 * title from the user's first message; the user names the folder): the write path reads them only
 * through sanitizeSession (src/write/phase1/session-input.ts), never directly.
 */
export interface HostSession {
  id: string
  title: string
  /** The session's project folder. */
  directory: string
  parentId?: string
  createdAt: number
  /** Last activity: the extraction watermark. */
  updatedAt: number
  /** Archived in the host: it still exists (never forgotten for being absent), but is not learned from. */
  archived?: boolean
  metadata?: Record<string, unknown>
  /** The host's own identity of the session's project, when it gives one. */
  project?: HostProject
}

/** A host's own identity of a session's project: OpenCode's project id (`projectID` on 1.x's and 2.x's sessions). */
export interface HostProject {
  /** Stable across the project's folders and clones, as the host keys it; `global` is none. */
  key: string
}

/**
 * The host's root sessions. `complete` says the list holds every root session the host has (all
 * pages read); a host that can only list what its own process saw says false, and nothing is ever
 * forgotten for being absent from such a list.
 */
export interface SessionListing {
  sessions: HostSession[]
  complete: boolean
}

export interface ModelRef {
  providerID: string
  modelID: string
}

/**
 * One permission rule of a helper session: a tool permission name (`*` for all), a pattern of
 * what it touches (a path or `*`), and what happens. Hosts evaluate a session's rules after the
 * agent's and the last matching rule wins, so a session's rules have the final word.
 */
export interface PermissionRule {
  permission: string
  pattern: string
  action: "allow" | "deny" | "ask"
}

export interface HelperPrompt {
  /** The helper session's folder: the memory root, which bounds what its tools can reach. */
  directory: string
  agent: string
  /** Unset: the agent's model, else the host's default. */
  model?: ModelRef
  variant?: string
  /** Appended to the agent's system prompt. */
  system: string
  /** The user message: one text part, or one text part per string (V2 sends its evidence in chunks). */
  text: string | readonly string[]
  /** JSON schema for a structured answer (OpenCode's `format: json_schema`). */
  schema?: Record<string, unknown>
}

export interface HelperSessionInput {
  /** The memory root the helper works on (OpenCode 1 also makes it the session's folder). */
  directory: string
  /** What the helper is for: hosts whose permission semantics differ derive their own rules from it. */
  role: "extract" | "consolidate"
  title: string
  metadata: Record<string, unknown>
  /** The sandbox in OpenCode 1's terms (helper-sandbox.ts). */
  permission: readonly PermissionRule[]
}

export interface HelperReply {
  /** The structured answer, when a schema was given and the model produced one. */
  structured?: unknown
  /** The reply's text parts, joined. */
  text: string
  /**
   * The host's error for this reply (e.g. the provider failed, or no structured output came), with
   * the provider's HTTP status and response body when the host keeps them.
   */
  error?: { name: string; message: string; status?: number; body?: string }
  /** What the reply's own message cost, when the host says: the spend ledger's fallback. */
  usage?: HelperUsage
}

/** Tokens and cost as OpenCode reports them for a message (the same shape as the store's ledger). */
export interface HelperUsage {
  input: number
  output: number
  reasoning: number
  cacheRead: number
  cacheWrite: number
  cost: number
}

export interface Host {
  readonly kind: HostKind
  /** Writes to the host's log. Must not throw; callers never await it on a user's turn. */
  log(level: LogLevel, message: string, extra?: Record<string, unknown>): Promise<void>
  /** Every root (non-child) session of every project, newest first, following pagination; archived ones included. */
  listRootSessions(options: { signal: AbortSignal; search?: string }): Promise<SessionListing>
  /**
   * Whether the host still has this session (a root or a child, archived or not): false only when
   * the host says it does not exist; any other failure throws. Reconciliation forgets a session
   * only on that false.
   */
  sessionExists(sessionId: string, signal: AbortSignal): Promise<boolean>
  /** The raw message list of a session, oldest first, as the host stores it. */
  loadMessages(sessionId: string, signal: AbortSignal): Promise<unknown[]>
  /**
   * Creates a helper session. `permission` is the session's own ruleset, evaluated after the
   * agent's: the helper's sandbox holds whatever the agent definition says.
   */
  createSession(input: HelperSessionInput, signal: AbortSignal): Promise<{ id: string }>
  prompt(sessionId: string, input: HelperPrompt, signal: AbortSignal): Promise<HelperReply>
  abortSession(sessionId: string, directory: string): Promise<void>
  /** True when the session is gone afterwards (deleted now, or already absent). */
  deleteSession(sessionId: string, directory: string): Promise<boolean>
  /** The context window of a model (undefined: the host's default model), when the host knows it. */
  contextLimit(model: ModelRef | undefined, signal: AbortSignal): Promise<number | undefined>
  /** The reasoning-effort variants a model lists (e.g. "low", "high"); [] when none or unknown. */
  modelVariants(model: ModelRef, signal: AbortSignal): Promise<string[]>
  /**
   * Every model the host's providers offer, as "provider/model"; undefined when the host cannot
   * say. A helper model missing from it fails in the host with a bare error, so it is checked first.
   */
  modelIds?(signal: AbortSignal): Promise<string[] | undefined>
  /** Names of the configured MCP servers: their tools are named `<server>_<tool>`. */
  mcpServers(signal: AbortSignal): Promise<string[]>
  /**
   * One tool-less completion (OpenCode 2's generate.text): a single prompt, no session, no system
   * role, no schema. Hosts that have it extract with it instead of a helper session.
   */
  generateText?(input: GenerateInput, signal: AbortSignal): Promise<GenerateReply>
}

/** What a host adapter registered with its host, by name, and what the host refused. */
export interface HostRegistrations {
  registered: string[]
  failed: Array<{ name: string; message: string }>
}

export interface GenerateInput {
  prompt: string
  /** Unset: the host's default model. */
  model?: ModelRef
  variant?: string
}

export interface GenerateReply {
  text: string
  error?: { name: string; message: string; status?: number; body?: string }
}
