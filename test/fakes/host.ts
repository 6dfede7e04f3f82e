// An in-memory Host: sessions, their messages, and a scripted helper model. Tests and benchmarks
// drive the core through it exactly as the OpenCode adapter would.
import type { HelperPrompt, HelperReply, HelperSessionInput, Host, HostSession, LogLevel, ModelRef, SessionListing } from "../../src/host.js"

export interface FakeLog {
  level: LogLevel
  message: string
}

export type Responder = (sessionId: string, prompt: HelperPrompt, signal: AbortSignal) => Promise<HelperReply> | HelperReply

export class FakeHost implements Host {
  readonly kind = "opencode1" as const
  readonly logs: FakeLog[] = []
  readonly sessions = new Map<string, HostSession>()
  readonly messages = new Map<string, unknown[]>()
  readonly prompts: Array<{ sessionId: string; prompt: HelperPrompt }> = []
  /** Every helper session created, with what it was created with (its permission rules included). */
  readonly created: Array<{ id: string; input: HelperSessionInput }> = []
  readonly deleted: string[] = []
  readonly aborted: string[] = []
  listCalls = 0
  failListing: Error | undefined
  /** Awaited inside each listing, after the sessions are read (a slow server's reply). */
  listingReply: (() => Promise<void>) | undefined
  /** Listings say they are partial (OpenCode 2 without its service). */
  partialListing = false
  /** Sessions that exist but that listings leave out (a paging gap, say). */
  readonly unlisted = new Set<string>()
  /** Every session looked up with sessionExists. */
  readonly lookups: string[] = []
  failLookup: Error | undefined
  contextLimits = new Map<string, number>()
  variants = new Map<string, string[]>()
  mcp: string[] = []
  mcpCalls = 0
  responder: Responder = () => ({ text: "", structured: { rollout_summary: "", raw_memory: "", rollout_slug: "" } })
  private nextId = 1

  constructor(private readonly now: () => number = Date.now) {}

  addSession(session: Partial<HostSession> & { id: string }, messages: unknown[] = []): HostSession {
    const full: HostSession = { title: session.id, directory: "/project", createdAt: this.now(), updatedAt: this.now(), ...session }
    this.sessions.set(full.id, full)
    this.messages.set(full.id, messages)
    return full
  }

  async log(level: LogLevel, message: string): Promise<void> {
    this.logs.push({ level, message })
  }

  async listRootSessions(options: { signal: AbortSignal; search?: string }): Promise<SessionListing> {
    this.listCalls++
    if (this.failListing) throw this.failListing
    options.signal.throwIfAborted()
    const sessions = [...this.sessions.values()]
      .filter((s) => !s.parentId && !this.unlisted.has(s.id) && (!options.search || s.title.toLowerCase().includes(options.search.toLowerCase())))
      .sort((a, b) => b.updatedAt - a.updatedAt)
    await this.listingReply?.()
    return { sessions, complete: !this.partialListing }
  }

  async sessionExists(sessionId: string, signal: AbortSignal): Promise<boolean> {
    this.lookups.push(sessionId)
    signal.throwIfAborted()
    if (this.failLookup) throw this.failLookup
    return this.sessions.has(sessionId)
  }

  async loadMessages(sessionId: string): Promise<unknown[]> {
    const messages = this.messages.get(sessionId)
    if (!messages) throw new Error(`no session ${sessionId}`)
    return messages
  }

  async createSession(input: HelperSessionInput): Promise<{ id: string }> {
    const id = `ses_helper${this.nextId++}`
    this.created.push({ id, input })
    this.addSession({ id, title: input.title, directory: input.directory, metadata: input.metadata })
    return { id }
  }

  async prompt(sessionId: string, prompt: HelperPrompt, signal: AbortSignal): Promise<HelperReply> {
    this.prompts.push({ sessionId, prompt })
    return this.responder(sessionId, prompt, signal)
  }

  async abortSession(sessionId: string): Promise<void> {
    this.aborted.push(sessionId)
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    this.deleted.push(sessionId)
    this.sessions.delete(sessionId)
    this.messages.delete(sessionId)
    return true
  }

  async contextLimit(model: ModelRef | undefined): Promise<number | undefined> {
    return model ? this.contextLimits.get(`${model.providerID}/${model.modelID}`) : this.contextLimits.get("default")
  }

  /** The models the fake's providers offer; undefined: it cannot say (as a host without the call). */
  offeredModels: string[] | undefined

  async modelIds(): Promise<string[] | undefined> {
    return this.offeredModels
  }

  async modelVariants(model: ModelRef): Promise<string[]> {
    return this.variants.get(`${model.providerID}/${model.modelID}`) ?? []
  }

  async mcpServers(): Promise<string[]> {
    this.mcpCalls++
    return [...this.mcp]
  }
}

/** A prompt's user text as one string: its text parts joined by blank lines (V2 sends several). */
export function promptText(prompt: HelperPrompt): string {
  return typeof prompt.text === "string" ? prompt.text : prompt.text.join("\n\n")
}
