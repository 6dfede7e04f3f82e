// Runs the REAL released OpenCode 2 (@opencode/cli, pinned in package.json) in an isolated
// sandbox, the way a user installs it: the global config in 2.x's format lists the plugin by its
// checkout folder (the form the README gives), the model is the fake OpenAI-compatible LLM on
// 127.0.0.1, and HOME and every XDG folder are the sandbox's own. `serve` is the one process a
// test talks to, over its HTTP API with basic auth; `serve --service` is the shared background
// service the plugin lists sessions through.
import { spawn, type ChildProcess } from "node:child_process"
import fs from "node:fs"
import { mkdtemp } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NetworkGuard } from "./network-guard.js"
import { binaryOf, freePort, repoRoot, waitFor } from "./opencode.js"

export const OPENCODE2_VERSION = "2.1.2"
const PASSWORD = "e2e-password"

/** The pinned OpenCode 2 binary (its package's own `bin`, never node_modules/.bin: both lines install an `opencode`). */
export function opencode2Binary(): string {
  return binaryOf("@opencode/cli")
}

export interface Sandbox2Options {
  llmUrl: string
  /** Plugin entries of the global config; the checkout folder with `pluginOptions` by default. */
  plugins?: unknown[]
  pluginOptions?: Record<string, unknown>
  /** The model's declared window (`limit.context`). */
  contextLimit?: number
  env?: Record<string, string>
  /** Extra top-level keys of the global config. */
  config?: Record<string, unknown>
}

export interface Sandbox2 {
  root: string
  projectDir: string
  memoryHome: string
  home: string
  configHome: string
  dataHome: string
  cacheHome: string
  stateHome: string
  /** $XDG_CONFIG_HOME/opencode/opencode.json */
  configFile: string
  env: Record<string, string>
  /** The background service's port (service.json in the config folder). */
  servicePort: number
  /** Requests for anything beyond 127.0.0.1 that the sandbox's OpenCode tried (all refused). */
  networkAttempts(): string[]
  /** Stops what the sandbox started and removes it; fails when anything tried the network. */
  cleanup(): Promise<void>
}

/** The checkout folder as a plugin entry: what 2.x resolves as `<dir>/index` and `<dir>/tui`. */
export function checkoutPlugin(options?: Record<string, unknown>): unknown {
  return options ? { package: repoRoot(), options } : { package: repoRoot() }
}

export async function createSandbox2(opts: Sandbox2Options): Promise<Sandbox2> {
  const root = await mkdtemp(path.join(os.tmpdir(), "ocm-e2e2-"))
  const dirs = {
    home: path.join(root, "home"),
    dataHome: path.join(root, "data"),
    configHome: path.join(root, "config"),
    cacheHome: path.join(root, "cache"),
    stateHome: path.join(root, "state"),
    projectDir: path.join(root, "project"),
    memoryHome: path.join(root, "memory-home"),
  }
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true })
  fs.mkdirSync(path.join(dirs.configHome, "opencode"), { recursive: true })
  const configFile = path.join(dirs.configHome, "opencode", "opencode.json")
  const config = {
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    providers: {
      fake: {
        package: "aisdk:@ai-sdk/openai-compatible",
        settings: { baseURL: opts.llmUrl, apiKey: "fake-key" },
        models: { "fake-model": { limit: { context: opts.contextLimit ?? 100_000, output: 4096 } } },
      },
    },
    plugins: opts.plugins ?? [checkoutPlugin(opts.pluginOptions)],
    ...opts.config,
  }
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2) + "\n")
  // A port of its own for the background service, so parallel runs never meet (F5).
  const servicePort = await freePort()
  fs.writeFileSync(path.join(dirs.configHome, "opencode", "service.json"), JSON.stringify({ port: servicePort }) + "\n")
  const guard = await NetworkGuard.start()
  const env: Record<string, string> = {
    ...baseEnv(),
    ...guard.env(),
    HOME: dirs.home,
    XDG_DATA_HOME: dirs.dataHome,
    XDG_CONFIG_HOME: dirs.configHome,
    XDG_CACHE_HOME: dirs.cacheHome,
    XDG_STATE_HOME: dirs.stateHome,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_PASSWORD: PASSWORD,
    OPENCODE_CODEX_MEMORY_TEST_ROOT: dirs.memoryHome,
    ...opts.env,
  }
  const sandbox: Sandbox2 = {
    root,
    ...dirs,
    configFile,
    env,
    servicePort,
    networkAttempts: () => guard.attempts(),
    async cleanup() {
      await stopRegisteredService(sandbox)
      fs.rmSync(root, { recursive: true, force: true })
      await guard.close()
      const tried = guard.attempts()
      if (tried.length) throw new Error(`OpenCode tried the network beyond 127.0.0.1 (refused): ${tried.join(", ")}`)
    },
  }
  return sandbox
}

/** Rewrites the global config; processes started afterwards read it. */
export function editConfig2(sandbox: Sandbox2, edit: (config: Record<string, unknown>) => void): void {
  const config = JSON.parse(fs.readFileSync(sandbox.configFile, "utf8")) as Record<string, unknown>
  edit(config)
  fs.writeFileSync(sandbox.configFile, JSON.stringify(config, null, 2) + "\n")
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const key of ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"]) {
    const value = process.env[key]
    if (value !== undefined) env[key] = value
  }
  return env
}

export interface Serve2 {
  url: string
  pid: number
  /** The server's stderr: a plugin's console.error lands here (F2). */
  stderr(): string
  stop(): Promise<void>
  kill(signal: NodeJS.Signals): Promise<void>
  api: Api2
}

/**
 * `opencode serve` on a port of 127.0.0.1, or with `service` the shared background service
 * (`serve --service`, port from service.json, its own password read from its registration).
 */
export async function startServe2(sandbox: Sandbox2, opts: { service?: boolean; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<Serve2> {
  const port = opts.service ? sandbox.servicePort : await freePort()
  const args = opts.service ? ["serve", "--service"] : ["serve", "--hostname", "127.0.0.1", "--port", String(port)]
  const child = spawn(opencode2Binary(), args, { cwd: sandbox.projectDir, env: { ...sandbox.env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `http://127.0.0.1:${port}`
  let password = PASSWORD
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`opencode serve exited early (${child.exitCode ?? child.signalCode})\n${stderr.slice(-2000)}`)
        if (opts.service) {
          const registration = readRegistration(sandbox)
          if (!registration || registration.pid !== child.pid) return false
          password = registration.password ?? password
        }
        return (await fetch(`${url}/api/info`, { headers: auth(password) }).then((r) => r.ok, () => false)) || false
      },
      { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 100, message: `opencode serve (2.x) not ready\n${stdout}\n${stderr.slice(-2000)}` },
    )
  } catch (error) {
    await terminate(child, exited)
    throw error
  }
  return {
    url,
    pid: child.pid ?? -1,
    stderr: () => stderr,
    stop: () => terminate(child, exited),
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill(signal)
      await exited
    },
    api: new Api2(url, password, sandbox.projectDir),
  }
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 8_000)
  await exited
  clearTimeout(timer)
}

function readRegistration(sandbox: Sandbox2): { url: string; pid: number; password?: string } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(sandbox.stateHome, "opencode", "service.json"), "utf8")) as { url: string; pid: number; password?: string }
  } catch {
    return undefined
  }
}

/** Ends a background service the CLI started on its own (F6): only the one this sandbox registered. */
export async function stopRegisteredService(sandbox: Sandbox2): Promise<void> {
  const registration = readRegistration(sandbox)
  if (!registration) return
  try {
    process.kill(registration.pid, "SIGTERM")
  } catch {
    return
  }
  await waitFor(() => !alive(registration.pid), { timeoutMs: 10_000 }).catch(() => {
    try {
      process.kill(registration.pid, "SIGKILL")
    } catch {
      // gone
    }
  })
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * `opencode <args>` of 2.x in the sandbox's project, to its end. Asynchronous on purpose: the
 * scripted model answers from this same process, so a blocking spawn would never be answered.
 */
export function runOpencode2(sandbox: Sandbox2, args: readonly string[], opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now()
  const child = spawn(opencode2Binary(), args, { cwd: sandbox.projectDir, env: { ...sandbox.env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000)
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
}

function auth(password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}` }
}

export interface Message2 {
  id: string
  type: string
  text?: string
  content?: Array<Record<string, unknown>>
  time?: { created?: number; completed?: number }
  [key: string]: unknown
}

/** The 2.x HTTP API, as far as the tests need it (F7), scoped to one folder. */
export class Api2 {
  constructor(
    readonly url: string,
    private readonly password: string,
    readonly directory: string,
  ) {}

  async request<T>(method: string, route: string, body?: unknown, directory = this.directory): Promise<T> {
    const response = await fetch(`${this.url}${route}`, {
      method,
      headers: { ...auth(this.password), "x-opencode-directory": directory, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw Object.assign(new Error(`${method} ${route} -> ${response.status}: ${text.slice(0, 500)}`), { status: response.status })
    return (text ? JSON.parse(text) : undefined) as T
  }

  async createSession(directory = this.directory): Promise<string> {
    return (await this.request<{ data: { id: string } }>("POST", "/api/session", { location: { directory } }, directory)).data.id
  }

  async session(id: string): Promise<{ id: string; title?: string; time: { created: number; updated: number; idle?: number } }> {
    return (await this.request<{ data: { id: string; title?: string; time: { created: number; updated: number; idle?: number } } }>("GET", `/api/session/${id}`)).data
  }

  /** A user's turn, to its end: a turn is over once the session's idle time passes the prompt's creation (F7). */
  async prompt(id: string, text: string, opts: { timeoutMs?: number } = {}): Promise<void> {
    const sent = (await this.request<{ data: { time: { created: number } } }>("POST", `/api/session/${id}/prompt`, { text })).data
    await waitFor(async () => ((await this.session(id)).time.idle ?? 0) >= sent.time.created, { timeoutMs: opts.timeoutMs ?? 90_000, intervalMs: 100, message: `the turn "${text.slice(0, 60)}" did not end` })
  }

  /** Stored messages, oldest first. */
  async messages(id: string): Promise<Message2[]> {
    const page = await this.request<{ data: Message2[] }>("GET", `/api/session/${id}/message?order=asc&limit=200`)
    return page.data
  }

  async deleteSession(id: string): Promise<void> {
    await this.request("DELETE", `/api/session/${id}`)
  }

  async plugins(directory = this.directory): Promise<Array<{ id: string; source: { type: string; path?: string; target?: string }; features: Record<string, boolean>; state: { status: string; error?: string } }>> {
    return (await this.request<{ data: Array<{ id: string; source: { type: string }; features: Record<string, boolean>; state: { status: string } }> }>("GET", "/api/plugin", undefined, directory)).data.filter((p) => p.source.type !== "builtin") as never
  }
}
