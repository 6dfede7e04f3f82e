// OpenCode 2's registered local service: the shared background server (`opencode serve
// --service`) writes where it listens, its PID and its password to a registration file in
// OpenCode's state folder. The OpenCode 2 adapter reads sessions' whole history through it (the
// plugin's own context has only what follows a session's last compaction), and the CLI asks it
// whether a session exists. Shared by both, so it imports neither. Discovery, step by step:
//   1. read the registration ($XDG_STATE_HOME/opencode/service.json, per channel);
//   2. readiness: GET /api/info, falling back to /api/status and then /api/health only when the
//      route before answers 404 (older releases named it so);
//   3. the service must answer with the PID it registered (a stale file names a dead server);
//   4. a service in another process is used only on loopback: a plugin running in a separate
//      `serve --port 0` process may talk to the local service, never to a remote one.
import fs from "node:fs"
import path from "node:path"

export interface ServiceRegistration {
  url: string
  pid: number
  password?: string
  version?: string
}

export type ServiceState =
  | { state: "ready"; client: ServiceClient; registration: ServiceRegistration; route: string }
  | { state: "unavailable"; reason: string }

/** What discovery needs from the outside world; tests replace any of it. */
export interface DiscoveryDeps {
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  /** OpenCode's release channel (ctx.app.channel): other channels register under their own name. */
  channel?: string
  /** This process, to tell the service's own plugin from a plugin in another process. */
  pid: number
  fetch?: typeof fetch
  readFile?: (file: string) => string
}

const READINESS_ROUTES = ["/api/info", "/api/status", "/api/health"] as const
const GENERATE_ROUTE = "/api/experimental/generate"
const PROBE_TIMEOUT_MS = 2_000
const PAGE = 200
/** The most of an error answer's body kept on the thrown error. */
const ERROR_BODY_MAX_CHARS = 4_000

export function registrationFile(env: DiscoveryDeps["env"], homedir: string, channel: string | undefined): string {
  const state = env.XDG_STATE_HOME?.trim() ? env.XDG_STATE_HOME : path.join(homedir, ".local", "state")
  const shared = !channel || ["latest", "dev", "beta", "next"].includes(channel)
  return path.join(state, "opencode", shared ? "service.json" : `service-${channel.replace(/[^A-Za-z0-9_-]/g, "_")}.json`)
}

export async function discoverService(deps: DiscoveryDeps, signal: AbortSignal): Promise<ServiceState> {
  const file = registrationFile(deps.env, deps.homedir, deps.channel)
  let registration: ServiceRegistration
  try {
    registration = parseRegistration((deps.readFile ?? ((f) => fs.readFileSync(f, "utf8")))(file))
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT"
    return { state: "unavailable", reason: missing ? `no OpenCode service is registered (${file} does not exist)` : `the service registration ${file} is unreadable: ${(error as Error).message}` }
  }
  let url: URL
  try {
    url = new URL(registration.url)
  } catch {
    return { state: "unavailable", reason: `the service registration names no valid URL (${registration.url})` }
  }
  const client = new ServiceClient(registration, deps.fetch ?? fetch)
  let answer: { route: string; pid: unknown } | undefined
  for (const route of READINESS_ROUTES) {
    const probe = await client.probe(route, signal).catch((error: Error) => ({ status: 0, body: undefined, error }))
    if (probe.status === 404) continue
    if (probe.status !== 200) {
      const why = "error" in probe && probe.error ? probe.error.message : `HTTP ${probe.status}`
      return { state: "unavailable", reason: `the registered service at ${url.origin} is not ready (${route}: ${why})` }
    }
    answer = { route, pid: pidOf(probe.body) }
    break
  }
  if (!answer) return { state: "unavailable", reason: `the registered service at ${url.origin} answers none of ${READINESS_ROUTES.join(", ")}` }
  if (answer.pid !== undefined && answer.pid !== registration.pid) {
    return { state: "unavailable", reason: `the service at ${url.origin} runs as PID ${String(answer.pid)}, not the registered ${registration.pid}: the registration is stale` }
  }
  if (registration.pid !== deps.pid && !isLoopback(url.hostname)) {
    return { state: "unavailable", reason: `the registered service at ${url.origin} is not on this machine's loopback and not this process; it is not used` }
  }
  return { state: "ready", client, registration, route: answer.route }
}

export function parseRegistration(text: string): ServiceRegistration {
  const value = JSON.parse(text) as Record<string, unknown>
  if (typeof value.url !== "string" || typeof value.pid !== "number") throw new Error("it lacks a url or a pid")
  return {
    url: value.url,
    pid: value.pid,
    ...(typeof value.password === "string" ? { password: value.password } : {}),
    ...(typeof value.version === "string" ? { version: value.version } : {}),
  }
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase()
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host)
}

function pidOf(body: unknown): unknown {
  const fields = record(body)
  return fields?.pid ?? record(fields?.data)?.pid
}

/** The service's HTTP API, as far as memory needs it. Every call is bounded by its signal. */
export class ServiceClient {
  constructor(
    readonly registration: ServiceRegistration,
    private readonly fetchImpl: typeof fetch,
  ) {}

  async probe(route: string, signal: AbortSignal): Promise<{ status: number; body: unknown }> {
    const response = await this.fetchImpl(this.url(route), { headers: this.headers(), signal: AbortSignal.any([signal, AbortSignal.timeout(PROBE_TIMEOUT_MS)]) })
    return { status: response.status, body: response.status === 200 ? await response.json().catch(() => undefined) : undefined }
  }

  /** Root sessions of every project, newest first, following the cursor. */
  async rootSessions(signal: AbortSignal, maxPages = 500): Promise<unknown[]> {
    return this.pages("/api/session", { parentID: "null", order: "desc", limit: String(PAGE) }, signal, maxPages)
  }

  /** Whether the service has the session: false on its 404, true on a session, an error otherwise. */
  async sessionExists(sessionId: string, signal: AbortSignal): Promise<boolean> {
    const route = `/api/session/${encodeURIComponent(sessionId)}`
    const response = await this.fetchImpl(this.url(route), { headers: this.headers(), signal })
    if (response.status === 404) return false
    await this.json(response, `GET ${route}`)
    return true
  }

  /** A session's stored messages, oldest first. */
  async messages(sessionId: string, signal: AbortSignal, maxPages = 500): Promise<unknown[]> {
    return this.pages(`/api/session/${encodeURIComponent(sessionId)}/message`, { order: "asc", limit: String(PAGE) }, signal, maxPages)
  }

  /** Deletes a session and its children: 404 counts as already gone. */
  async deleteSession(sessionId: string, signal: AbortSignal): Promise<void> {
    const route = `/api/session/${encodeURIComponent(sessionId)}`
    const response = await this.fetchImpl(this.url(route), { method: "DELETE", headers: this.headers(), signal })
    if (response.status === 404) return
    if (!response.ok) throw Object.assign(new Error(`DELETE ${route} -> HTTP ${response.status}`), { status: response.status })
    await response.body?.cancel()
  }

  async generateText(body: { prompt: string; model?: { id: string; providerID: string; variant?: string } }, signal: AbortSignal): Promise<string> {
    // Released 2.0.x serves text generation under /api/experimental/ (protocol groups/generate.ts).
    const response = await this.fetchImpl(this.url(GENERATE_ROUTE), {
      method: "POST",
      headers: { ...this.headers(), "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    })
    const payload = await this.json(response, `POST ${GENERATE_ROUTE}`)
    const text = record(record(payload)?.data)?.text ?? record(payload)?.text
    if (typeof text !== "string") throw new Error(`POST ${GENERATE_ROUTE} answered without a text`)
    return text
  }

  private async pages(route: string, query: Record<string, string>, signal: AbortSignal, maxPages: number): Promise<unknown[]> {
    const items: unknown[] = []
    let cursor: string | undefined
    for (let page = 0; page < maxPages; page++) {
      // A cursor carries the query it continues; the message list refuses one combined with `order`.
      const response = await this.fetchImpl(this.url(route, cursor ? { cursor, ...(query.limit ? { limit: query.limit } : {}) } : query), { headers: this.headers(), signal })
      const payload = record(await this.json(response, `GET ${route}`))
      const data = payload?.data
      if (!Array.isArray(data)) throw new Error(`GET ${route} answered without a data list`)
      items.push(...data)
      const next = record(payload?.cursor)?.next
      if (typeof next !== "string" || !next || data.length === 0) return items
      cursor = next
    }
    // A list cut short would look like sessions gone: fail instead (the pass is skipped).
    throw new Error(`GET ${route}: more than ${maxPages} pages`)
  }

  private async json(response: Response, what: string): Promise<unknown> {
    if (!response.ok) {
      // The body says why (a provider's context_length_exceeded among others): kept, bounded, for the caller's checks.
      const body = (await response.text().catch(() => "")).slice(0, ERROR_BODY_MAX_CHARS)
      throw Object.assign(new Error(`${what} -> HTTP ${response.status}`), { status: response.status, ...(body ? { responseBody: body } : {}) })
    }
    return response.json()
  }

  private url(route: string, query: Record<string, string> = {}): string {
    const url = new URL(route, this.registration.url)
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value)
    return url.href
  }

  private headers(): Record<string, string> {
    const { password } = this.registration
    return password ? { authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}` } : {}
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}
