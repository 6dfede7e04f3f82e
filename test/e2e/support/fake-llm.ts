// A fake OpenAI-compatible chat-completions server for end-to-end tests.
//
// The real OpenCode binary talks to it through the bundled `@ai-sdk/openai-compatible` provider, so
// tests can see exactly what OpenCode sends to a model (system messages, tools, history) and decide
// what the "model" answers, without any network access.
//
// Routes: POST /v1/chat/completions (SSE when `stream: true`, JSON otherwise), GET /v1/models.
// With setContextWindow it also acts as a provider whose model has a window: a prompt over it, in
// real o200k_base tokens, is refused as OpenAI refuses it (HTTP 400 context_length_exceeded).
import http from "node:http"
import type { AddressInfo } from "node:net"

/** A tool call the fake model makes. `arguments` may be an object or an already-encoded JSON string. */
export interface FakeToolCall {
  name: string
  arguments?: unknown
  id?: string
}

/** Which kind of LLM call a request is; see `classify`. */
export type RequestKind = "title" | "structured" | "agent"

/**
 * A reply queued with `FakeLlm.script`. Exactly one of `text`, `toolCalls`, `structured` or an error
 * (`status` / `error`) is normally set; `text` may accompany `toolCalls`.
 */
export interface FakeReply {
  text?: string
  toolCalls?: FakeToolCall[]
  /** Arguments for a `StructuredOutput` tool call. Such a reply is only used by structured requests. */
  structured?: Record<string, unknown>
  /** Only use this reply for a request whose last user text contains this substring. */
  match?: string
  /**
   * Only use this reply for this kind of request. Defaults to "structured" for `structured` replies and
   * "agent" otherwise, so a title request running in parallel never steals a reply meant for the agent.
   */
  kind?: RequestKind
  /** Answer with this HTTP status. 400 is the default for errors: OpenCode retries 5xx/429 with long backoff. */
  status?: number
  /** Error message; setting it alone makes the reply an HTTP 400. */
  error?: string
  /** Pause this long between streamed chunks (or before a JSON answer), e.g. to test aborts. */
  delayMs?: number
}

/** Called for structured requests when no `structured` reply is queued; return undefined to fall through. */
export type StructuredHandler = (request: ChatRequest) => Record<string, unknown> | undefined

/** Called for title requests when no title reply is queued; return undefined for the default title. */
export type TitleHandler = (request: ChatRequest) => string | undefined
/** Called for agent requests no queued reply fits, so a scripted agent can act on what it was shown; undefined falls through. */
export type AgentHandler = (request: ChatRequest) => FakeReply | undefined

/** One chat-completions request as received, plus what the fake answered. */
export interface LoggedRequest {
  kind: RequestKind
  body: ChatRequest
  /** The reply that was sent (a scripted one or a default one). */
  reply: FakeReply
  receivedAt: number
  /** The prompt's o200k_base tokens (promptTokens), counted only for a model under a context window. */
  promptTokens?: number
}

/**
 * A provider's context window (FakeLlm.setContextWindow): a prompt of more than `tokens` real
 * o200k_base tokens is refused as OpenAI refuses it. Only requests for `model` (the id as sent)
 * are measured; without it, every request.
 */
export interface ContextWindow {
  tokens: number
  model?: string
}

/** A request refused for its size: what it asked of which window. */
export interface RefusedRequest {
  kind: RequestKind
  model: string | undefined
  /** The prompt's tokens (promptTokens). */
  tokens: number
  /** The window it was over. */
  limit: number
  body: ChatRequest
  receivedAt: number
}

/** The parts of an OpenAI chat request this fake looks at. Everything else is kept as-is in the log. */
export interface ChatMessage {
  role: string
  content?: unknown
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>
  tool_call_id?: string
  [key: string]: unknown
}

export interface ChatRequest {
  model?: string
  stream?: boolean
  messages?: ChatMessage[]
  tools?: Array<{ type?: string; function?: { name?: string; [key: string]: unknown } }>
  [key: string]: unknown
}

const TITLE_SYSTEM_MARKER = "You are a title generator"
const STRUCTURED_TOOL = "StructuredOutput"
/** A heading of the template OpenCode 2.1.2's compaction prompt asks the summary in. */
export const COMPACTION_TEMPLATE_HEADING = "## Objective"

// ---------------------------------------------------------------------------------------------
// Helpers for reading requests (exported: tests use them on logged requests too)

/** Text of a message's `content`, which is a string or an array of parts (`{type:"text", text}`). */
/** The text of every user message of a request, one per line. */
export function userText(request: ChatRequest): string {
  return (request.messages ?? []).filter((m) => m.role === "user").map((m) => contentText(m.content)).join("\n")
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((part: unknown) => {
      if (typeof part === "string") return part
      if (part !== null && typeof part === "object" && "text" in part && typeof part.text === "string") return part.text
      return ""
    })
    .join("")
}

/** The text of each system message of a request, in order. */
export function systemTexts(request: ChatRequest): string[] {
  return (request.messages ?? []).filter((m) => m.role === "system").map((m) => contentText(m.content))
}

/** The text of the last user message, or "" when there is none. */
export function lastUserText(request: ChatRequest): string {
  const users = (request.messages ?? []).filter((m) => m.role === "user")
  const last = users[users.length - 1]
  return last ? contentText(last.content) : ""
}

/** Names of the tools a request offers to the model. */
export function toolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((t) => t.function?.name ?? "").filter((n) => n !== "")
}

/**
 * Title requests are recognised by OpenCode's title prompt; structured ones by the StructuredOutput
 * tool, or as OpenCode 2's generate.text sends them: one user message, no system, no tools (an
 * agent request always offers tools). The answer to the latter is the record as JSON text.
 */
export function classify(request: ChatRequest): RequestKind {
  if (systemTexts(request).some((s) => s.includes(TITLE_SYSTEM_MARKER))) return "title"
  if (toolNames(request).includes(STRUCTURED_TOOL)) return "structured"
  if (isTextGeneration(request)) return "structured"
  return "agent"
}

/** OpenCode 2's generate.text: a single prompt, no system role, no tools. */
export function isTextGeneration(request: ChatRequest): boolean {
  const messages = request.messages ?? []
  return toolNames(request).length === 0 && messages.length === 1 && messages[0]!.role === "user"
}

function lastMessage(request: ChatRequest): ChatMessage | undefined {
  const messages = request.messages ?? []
  return messages[messages.length - 1]
}

/** True once the model has already called StructuredOutput in this conversation (avoid calling it forever). */
function hasCalledStructuredOutput(request: ChatRequest): boolean {
  return (request.messages ?? []).some((m) => (m.tool_calls ?? []).some((c) => c.function?.name === STRUCTURED_TOOL))
}

function replyKind(reply: FakeReply): RequestKind {
  return reply.kind ?? (reply.structured ? "structured" : "agent")
}

export function isError(reply: FakeReply): boolean {
  return reply.status !== undefined || reply.error !== undefined
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------

/**
 * The scripted model itself, with no transport: queued replies, handlers, the request log. The
 * HTTP server below (FakeLlm) and the in-process OpenCode 2 fake (test/fakes/opencode2.ts) both
 * answer through it, so one script drives either host.
 */
export class ScriptedModel {
  private queue: FakeReply[] = []
  private log: LoggedRequest[] = []
  private counter = 0
  private structuredHandler: StructuredHandler | undefined
  private titleHandler: TitleHandler | undefined
  private agentHandler: AgentHandler | undefined
  /** Slows every handler-made structured answer (per streamed chunk), to show work is in the background. */
  structuredDelayMs = 0

  /** Adds a request the transport answered itself (e.g. a refusal) to the log. */
  protected record(entry: LoggedRequest): void {
    this.log.push(entry)
  }

  /** Every chat request received since start or the last `reset()`, oldest first. */
  requests(): LoggedRequest[] {
    return [...this.log]
  }

  /** Queues replies. Each request takes the first queued reply whose `kind` and `match` fit it. */
  script(...replies: FakeReply[]): void {
    this.queue.push(...replies)
  }

  /** Replies still waiting in the queue. */
  pending(): FakeReply[] {
    return [...this.queue]
  }

  /** Sets (or clears) the answer for structured requests that have no queued `structured` reply. */
  setStructuredHandler(handler: StructuredHandler | undefined): void {
    this.structuredHandler = handler
  }

  /** Sets (or clears) the answer for title requests that have no queued reply (e.g. an echo of the user's first line). */
  setTitleHandler(handler: TitleHandler | undefined): void {
    this.titleHandler = handler
  }

  /** Sets (or clears) the answer for agent requests that no queued reply fits. */
  setAgentHandler(handler: AgentHandler | undefined): void {
    this.agentHandler = handler
  }

  /** Forgets the request log, the queue, the handlers and the reply counter. */
  reset(): void {
    this.queue = []
    this.log = []
    this.counter = 0
    this.structuredHandler = undefined
    this.titleHandler = undefined
    this.agentHandler = undefined
    this.structuredDelayMs = 0
  }

  /** The reply to one request, logged. `kind` overrides what the request looks like (a host's own request kinds). */
  answer(body: ChatRequest, kind: RequestKind = classify(body)): FakeReply {
    const reply = this.takeQueued(body, kind) ?? this.defaultReply(body, kind)
    this.log.push({ kind, body, reply, receivedAt: Date.now() })
    return reply
  }

  private takeQueued(body: ChatRequest, kind: RequestKind): FakeReply | undefined {
    const userText = lastUserText(body)
    const index = this.queue.findIndex(
      (r) => replyKind(r) === kind && (r.match === undefined || userText.includes(r.match)),
    )
    if (index < 0) return undefined
    return this.queue.splice(index, 1)[0]
  }

  private defaultReply(body: ChatRequest, kind: RequestKind): FakeReply {
    // A structured request has to end with a StructuredOutput call, so the handler goes first.
    if (kind === "structured" && this.structuredHandler && !hasCalledStructuredOutput(body)) {
      const args = this.structuredHandler(body)
      if (args) return { structured: args, ...(this.structuredDelayMs ? { delayMs: this.structuredDelayMs } : {}) }
    }
    if (kind === "agent" && this.agentHandler) {
      const reply = this.agentHandler(body)
      if (reply) return reply
    }
    const last = lastMessage(body)
    if (last?.role === "tool") return { text: `FAKE: tool result received (${contentText(last.content).length} chars)` }
    // OpenCode 2.1.2's compaction takes a summary only in its template (a "## Objective" heading).
    if (kind === "agent" && lastUserText(body).includes(COMPACTION_TEMPLATE_HEADING)) return { text: `${COMPACTION_TEMPLATE_HEADING}\n- FAKE summary #${++this.counter}\n## Next Move\n1. (none)` }
    if (kind === "title") return { text: this.titleHandler?.(body) ?? "Fake title" }
    this.counter += 1
    return { text: `FAKE-REPLY #${this.counter}` }
  }
}

/** The scripted model behind an OpenAI-compatible HTTP server on 127.0.0.1, for the real OpenCode. */
export class FakeLlm extends ScriptedModel {
  private readonly server: http.Server
  private readonly port: number
  private window: ContextWindow | undefined
  private refusals: RefusedRequest[] = []

  private constructor(server: http.Server, port: number) {
    super()
    this.server = server
    this.port = port
  }

  /** Starts a server on 127.0.0.1 with a port chosen by the OS. */
  static async start(): Promise<FakeLlm> {
    const server = http.createServer()
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve())
    })
    const fake = new FakeLlm(server, (server.address() as AddressInfo).port)
    server.on("request", (req, res) => void fake.handle(req, res))
    return fake
  }

  /** Base URL for an OpenAI-compatible provider (`.../v1`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`
  }

  /**
   * Acts as a provider whose model has a context window (or, with undefined, has none again: the
   * default). A prompt over it gets OpenAI's HTTP 400 context_length_exceeded, takes no queued
   * reply and calls no handler; it is logged (requests()) and kept in refused().
   */
  setContextWindow(window: ContextWindow | undefined): void {
    this.window = window
  }

  /** Requests refused for their size since start or the last reset(), oldest first. */
  refused(): RefusedRequest[] {
    return [...this.refusals]
  }

  override reset(): void {
    super.reset()
    this.window = undefined
    this.refusals = []
  }

  async close(): Promise<void> {
    // OpenCode keeps HTTP connections alive; drop them so close() does not wait for their timeout.
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  // -------------------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const path = (req.url ?? "").split("?")[0] ?? ""
      const raw = await readBody(req)
      if (req.method === "GET" && path === "/v1/models") return sendJson(res, 200, modelList())
      if (req.method === "POST" && path === "/v1/chat/completions") {
        const body: unknown = JSON.parse(raw)
        if (body === null || typeof body !== "object" || Array.isArray(body)) throw new Error("request body is not a JSON object")
        return await this.complete(body as ChatRequest, res)
      }
      sendJson(res, 404, errorBody(`fake-llm: no route ${req.method} ${path}`))
    } catch (error) {
      // 400 rather than 500: OpenCode would retry a 5xx for a minute before giving up.
      if (!res.headersSent) sendJson(res, 400, errorBody(`fake-llm: ${String(error)}`))
      else res.end()
    }
  }

  private async complete(body: ChatRequest, res: http.ServerResponse): Promise<void> {
    const window = this.window
    if (window && (window.model === undefined || window.model === body.model)) {
      const tokens = await promptTokens(body)
      if (tokens > window.tokens) {
        const kind = classify(body)
        const error = contextLengthExceeded(window.tokens, tokens)
        const receivedAt = Date.now()
        this.record({ kind, body, reply: { status: 400, error: error.error.message }, receivedAt, promptTokens: tokens })
        this.refusals.push({ kind, model: body.model, tokens, limit: window.tokens, body, receivedAt })
        return sendJson(res, 400, error)
      }
      return this.answerAndSend(body, res, tokens)
    }
    return this.answerAndSend(body, res)
  }

  private async answerAndSend(body: ChatRequest, res: http.ServerResponse, tokens?: number): Promise<void> {
    const reply = this.answer(body)
    // answer() logged this request just now (nothing ran in between): note what it measured.
    const logged = this.requests().at(-1)
    if (tokens !== undefined && logged?.body === body) logged.promptTokens = tokens
    if (isError(reply)) {
      if (reply.delayMs) await sleep(reply.delayMs)
      return sendJson(res, reply.status ?? 400, errorBody(reply.error ?? "fake-llm: scripted error"))
    }
    // A text generation has no StructuredOutput tool to call: the record comes back as its text.
    const shaped = reply.structured && isTextGeneration(body) ? { text: JSON.stringify(reply.structured) } : reply
    const completion = toCompletion(shaped, body.model ?? "fake-model", this.requests().length)
    if (body.stream) await streamCompletion(res, completion, reply.delayMs ?? 0)
    else {
      if (reply.delayMs) await sleep(reply.delayMs)
      sendJson(res, 200, jsonCompletion(completion))
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Wire format

interface Completion {
  id: string
  created: number
  model: string
  text: string | null
  toolCalls: Array<{ index: number; id: string; type: "function"; function: { name: string; arguments: string } }>
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }

function toCompletion(reply: FakeReply, model: string, sequence: number): Completion {
  const calls: FakeToolCall[] = reply.structured
    ? [{ name: STRUCTURED_TOOL, arguments: reply.structured }]
    : (reply.toolCalls ?? [])
  const toolCalls = calls.map((call, index) => ({
    index,
    id: call.id ?? `call_fake_${sequence}_${index}`,
    type: "function" as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  }))
  return {
    id: `chatcmpl-fake-${sequence}`,
    created: Math.floor(Date.now() / 1000),
    model,
    text: reply.text ?? (toolCalls.length > 0 ? null : ""),
    toolCalls,
  }
}

function finishReason(c: Completion): string {
  return c.toolCalls.length > 0 ? "tool_calls" : "stop"
}

function jsonCompletion(c: Completion): unknown {
  const message = { role: "assistant", content: c.text, ...(c.toolCalls.length > 0 ? { tool_calls: c.toolCalls } : {}) }
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    choices: [{ index: 0, message, finish_reason: finishReason(c) }],
    usage: USAGE,
  }
}

/** Streams the completion as SSE chunks: role, text in small pieces, tool calls, finish, usage, [DONE]. */
async function streamCompletion(res: http.ServerResponse, c: Completion, delayMs: number): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model, choices, ...extra })}\n\n`)
  const delta = async (d: Record<string, unknown>, finish: string | null = null) => {
    chunk([{ index: 0, delta: d, finish_reason: finish }])
    if (delayMs > 0) await sleep(delayMs)
  }

  await delta({ role: "assistant", content: "" })
  // Several small pieces, so OpenCode's streaming path (text deltas) is exercised like with a real model.
  for (const piece of (c.text ?? "").match(/[\s\S]{1,16}/g) ?? []) await delta({ content: piece })
  for (const call of c.toolCalls) await delta({ tool_calls: [call] })
  await delta({}, finishReason(c))
  chunk([], { usage: USAGE })
  res.write("data: [DONE]\n\n")
  res.end()
}

function modelList(): unknown {
  return { object: "list", data: [{ id: "fake-model", object: "model", created: 0, owned_by: "fake" }] }
}

/** OpenAI's answer to a prompt over the model's window (HTTP 400), word for word. */
function contextLengthExceeded(limit: number, tokens: number) {
  return {
    error: {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  }
}

type CountTokens = (text: string) => number
let o200k: Promise<CountTokens> | undefined

/**
 * The prompt's tokens as OpenAI counts a chat request, with the real o200k_base tokenizer: each
 * message's role, text and tool calls (name and arguments) plus 3 tokens of framing, 3 more for the
 * reply's start, and the tool definitions as sent. The tokenizer's tables load on first use, so a
 * fake without a window never loads it.
 */
export async function promptTokens(request: ChatRequest): Promise<number> {
  o200k ??= import("gpt-tokenizer/encoding/o200k_base").then((module) => module.countTokens as CountTokens)
  const count = await o200k
  let tokens = 3
  for (const message of request.messages ?? []) {
    tokens += 3 + count(message.role) + count(contentText(message.content))
    for (const call of message.tool_calls ?? []) tokens += count(call.function?.name ?? "") + count(call.function?.arguments ?? "")
  }
  if (request.tools?.length) tokens += count(JSON.stringify(request.tools))
  return tokens
}

function errorBody(message: string): unknown {
  return { error: { message, type: "fake_error" } }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })
}
