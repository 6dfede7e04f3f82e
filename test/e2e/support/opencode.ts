// Runs the REAL OpenCode 1.18.33 binary (the opencode-ai package's own) in an isolated sandbox.
// The released OpenCode 2 has its own support file (opencode2.ts).
//
// Every sandbox gets its own HOME and XDG dirs, so nothing is read from or written to the real home,
// and OpenCode's network features are switched off. The project config points OpenCode at a fake
// OpenAI-compatible LLM (see fake-llm.ts) and loads our built plugin by default.
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import net from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { NetworkGuard } from "./network-guard.js"

/** A plugin entry of `opencode.json`: a spec, or `[spec, options]`. */
export type PluginSpec = string | [string, Record<string, unknown>]

export interface SandboxOptions {
  /** Base URL of the fake LLM (`FakeLlm.url`). */
  llmUrl: string
  /** Plugin entries; defaults to our built plugin. Pass `[]` for a run without it. */
  plugins?: PluginSpec[]
  /** Extra environment for every OpenCode process of this sandbox (e.g. OPENCODE_CODEX_MEMORY_TEST_FAULTS). */
  env?: Record<string, string>
  /** Extra top-level keys for the config (shallow merge, wins over the defaults). */
  config?: Record<string, unknown>
  /**
   * Where the config goes: the project's `opencode.json` (default), or the user's global config.
   * The write path needs "global": its helper sessions run in the memory folder, an instance that
   * reads only the global config, like a real install that lists the plugin globally.
   */
  configScope?: "project" | "global"
}

export interface Sandbox {
  /** Temp dir holding everything below. */
  root: string
  /** The project OpenCode runs in (cwd); holds `opencode.json`. */
  projectDir: string
  /** The plugin's memory home (OPENCODE_CODEX_MEMORY_TEST_ROOT). */
  memoryHome: string
  home: string
  dataHome: string
  configHome: string
  cacheHome: string
  stateHome: string
  /** The `opencode.json` written for this sandbox (project or global, as `configScope` said). */
  configFile: string
  /** The complete environment OpenCode processes get. Mutate it to change later runs. */
  env: Record<string, string>
  /** Requests for anything beyond 127.0.0.1 that the sandbox's OpenCode tried (all refused). */
  networkAttempts(): string[]
  /** Removes the sandbox; fails when anything tried the network. */
  cleanup(): Promise<void>
}

export interface RunResult {
  /** Exit code, or null when the process was killed by a signal. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
  timedOut: boolean
}

export interface RunOptions {
  timeoutMs?: number
  /** Extra arguments after `run` (e.g. `["--continue"]`). */
  args?: string[]
  /** Extra environment for this run only. */
  env?: Record<string, string>
  /** Omit `--format json` (stdout is then OpenCode's formatted output). */
  plainOutput?: boolean
}

export interface ServeHandle {
  /** `http://127.0.0.1:<port>` */
  url: string
  port: number
  stdout(): string
  stderr(): string
  stop(): Promise<void>
  /** Sends one signal and waits for the process to exit (SIGKILL simulates a crash). */
  kill(signal: NodeJS.Signals): Promise<void>
  pid: number
}

const OPENCODE_PLUGIN_VERSION = "1.18.33"
const DEFAULT_RUN_TIMEOUT_MS = 90_000
const DEFAULT_SERVE_TIMEOUT_MS = 60_000

// ---------------------------------------------------------------------------------------------
// Paths

/** The repository root: the nearest directory above this file holding our package.json. Works from src and dist. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const pkg = join(dir, "package.json")
    if (existsSync(pkg) && isOurPackage(pkg)) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error("e2e: could not find the repository's package.json above the support files")
    dir = parent
  }
}

function isOurPackage(pkgPath: string): boolean {
  try {
    return (JSON.parse(readFileSync(pkgPath, "utf8")) as { name?: unknown }).name === "opencode-codex-memory"
  } catch {
    return false
  }
}

/**
 * A host package's binary, from its own `bin` field. Never node_modules/.bin: opencode-ai and
 * @opencode/cli both install an `opencode` there, and which one wins is npm's choice.
 */
export function binaryOf(pkg: "opencode-ai" | "@opencode/cli"): string {
  const dir = join(repoRoot(), "node_modules", ...pkg.split("/"))
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: string | Record<string, string> }
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin.opencode
  if (!bin) throw new Error(`${pkg} declares no opencode binary`)
  return join(dir, bin)
}

/** The pinned OpenCode 1.18.33. */
export function opencodeBinary(): string {
  return binaryOf("opencode-ai")
}

/** Path of the built plugin entry (`npx tsc -p tsconfig.json` produces it). */
export function builtPluginPath(): string {
  return join(repoRoot(), "dist", "src", "index.js")
}

/** `file://` URL of the built plugin: the default plugin entry of a sandbox. */
export function defaultPluginSpec(): string {
  return pathToFileURL(builtPluginPath()).href
}

// ---------------------------------------------------------------------------------------------
// Sandbox

export async function createSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), "ocm-e2e-"))
  const dirs = {
    home: join(root, "home"),
    dataHome: join(root, "data"),
    configHome: join(root, "config"),
    cacheHome: join(root, "cache"),
    stateHome: join(root, "state"),
    projectDir: join(root, "project"),
    memoryHome: join(root, "memory-home"),
  }
  for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true })
  await stubPluginDepsInstall(join(dirs.configHome, "opencode"))

  const config = {
    $schema: "https://opencode.ai/config.json",
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake LLM",
        options: { baseURL: opts.llmUrl, apiKey: "fake-key" },
        models: {
          "fake-model": { name: "Fake Model", tool_call: true, limit: { context: 100_000, output: 4096 } },
        },
      },
    },
    plugin: opts.plugins ?? [defaultPluginSpec()],
    ...opts.config,
  }
  const configFile = opts.configScope === "global" ? join(dirs.configHome, "opencode", "opencode.json") : join(dirs.projectDir, "opencode.json")
  await writeFile(configFile, JSON.stringify(config, null, 2) + "\n")

  // Everything beyond 127.0.0.1 goes to a proxy that refuses it and remembers it.
  const guard = await NetworkGuard.start()
  const env: Record<string, string> = {
    ...baseEnv(),
    ...guard.env(),
    HOME: dirs.home,
    XDG_DATA_HOME: dirs.dataHome,
    XDG_CONFIG_HOME: dirs.configHome,
    XDG_CACHE_HOME: dirs.cacheHome,
    XDG_STATE_HOME: dirs.stateHome,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
    OPENCODE_CODEX_MEMORY_TEST_ROOT: dirs.memoryHome,
    ...opts.env,
  }

  return {
    root,
    ...dirs,
    configFile,
    env,
    networkAttempts: () => guard.attempts(),
    async cleanup() {
      await rm(root, { recursive: true, force: true })
      await guard.close()
      const tried = guard.attempts()
      if (tried.length) throw new Error(`OpenCode tried the network beyond 127.0.0.1 (refused): ${tried.join(", ")}`)
    },
  }
}

/**
 * At every start OpenCode npm-installs `@opencode-ai/plugin` into each config dir and waits for it
 * before loading plugins (10 s online, over a minute offline). It skips the install when `node_modules/`
 * exists and `package-lock.json` already lists the package, so an empty stub is enough.
 */
export async function stubPluginDepsInstall(configDir: string): Promise<void> {
  await mkdir(join(configDir, "node_modules"), { recursive: true })
  const deps = { "@opencode-ai/plugin": OPENCODE_PLUGIN_VERSION }
  await writeFile(join(configDir, "package.json"), JSON.stringify({ dependencies: deps }) + "\n")
  await writeFile(
    join(configDir, "package-lock.json"),
    JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies: deps } } }) + "\n",
  )
}

/** Only harmless variables of the test process are passed on: never HOME, XDG_* or OPENCODE_*. */
function baseEnv(): Record<string, string> {
  const keep = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"]
  const env: Record<string, string> = {}
  for (const key of keep) {
    const value = process.env[key]
    if (value !== undefined) env[key] = value
  }
  return env
}

/** Rewrites the sandbox's config through `edit`; OpenCode processes started afterwards read it. */
export function editConfig(sandbox: Sandbox, edit: (config: Record<string, unknown>) => void): void {
  const config = JSON.parse(readFileSync(sandbox.configFile, "utf8")) as Record<string, unknown>
  edit(config)
  writeFileSync(sandbox.configFile, JSON.stringify(config, null, 2) + "\n")
}

/** Writes `<memory home>/memories/memory_summary.md`. */
export async function seedSummary(sandbox: Sandbox, text: string): Promise<string> {
  const dir = join(sandbox.memoryHome, "memories")
  await mkdir(dir, { recursive: true })
  const file = join(dir, "memory_summary.md")
  await writeFile(file, text)
  return file
}

/** Removes `<memory home>/memories/memory_summary.md` if present. */
export async function removeSummary(sandbox: Sandbox): Promise<void> {
  await rm(join(sandbox.memoryHome, "memories", "memory_summary.md"), { force: true })
}

// ---------------------------------------------------------------------------------------------
// Processes

/**
 * `opencode run` in the sandbox's project dir. The message goes in on stdin: OpenCode quotes
 * argv messages that contain spaces, and without a stdin pipe it may block reading a TTY.
 */
export function runOpencode(sandbox: Sandbox, message: string, opts: RunOptions = {}): Promise<RunResult> {
  const args = ["run", "--print-logs", ...(opts.plainOutput ? [] : ["--format", "json"]), ...(opts.args ?? [])]
  const timeoutMs = opts.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS
  const started = Date.now()
  const child = spawn(opencodeBinary(), args, {
    cwd: sandbox.projectDir,
    env: { ...sandbox.env, ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  })
  const out = collect(child)
  child.stdin?.on("error", () => {}) // the process may exit before reading stdin; that is its business
  child.stdin?.end(message)

  return new Promise((resolve, reject) => {
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      void terminate(child)
    }, timeoutMs)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout: out.stdout(), stderr: out.stderr(), ms: Date.now() - started, timedOut })
    })
  })
}

/** `opencode serve` on a free port of 127.0.0.1; resolves once it prints that it is listening. */
export async function startServe(sandbox: Sandbox, opts: { timeoutMs?: number } = {}): Promise<ServeHandle> {
  for (let attempt = 1; ; attempt++) {
    // `--port 0` binds 4096 rather than a random port, so pick one ourselves.
    const port = await freePort()
    try {
      return await serveOn(sandbox, port, opts)
    } catch (error) {
      // Another process took the port between the pick and OpenCode's bind: pick again. Any
      // other failure, or a port still free, is the test's to see.
      if (attempt >= 3 || !(error instanceof ServeExitedEarly) || (await canBind(port))) throw error
    }
  }
}

class ServeExitedEarly extends Error {}

async function serveOn(sandbox: Sandbox, port: number, opts: { timeoutMs?: number }): Promise<ServeHandle> {
  const child = spawn(
    opencodeBinary(),
    ["serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs"],
    { cwd: sandbox.projectDir, env: sandbox.env, stdio: ["ignore", "pipe", "pipe"] },
  )
  const out = collect(child)
  const handle: ServeHandle = {
    url: `http://127.0.0.1:${port}`,
    port,
    stdout: out.stdout,
    stderr: out.stderr,
    stop: () => terminate(child),
    kill: (signal) => killAndWait(child, signal),
    pid: child.pid ?? -1,
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`opencode serve not listening after ${timeoutMsOf(opts)} ms\n${out.stderr().slice(-2000)}`)),
        timeoutMsOf(opts),
      )
      const onData = () => {
        if (out.stdout().includes("opencode server listening")) {
          clearTimeout(timer)
          resolve()
        }
      }
      child.stdout?.on("data", onData)
      child.once("error", (error) => {
        clearTimeout(timer)
        reject(error)
      })
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        reject(new ServeExitedEarly(`opencode serve exited early (code ${code}, signal ${signal})\n${out.stderr().slice(-2000)}`))
      })
      onData()
    })
  } catch (error) {
    await handle.stop()
    throw error
  }
  return handle
}

function timeoutMsOf(opts: { timeoutMs?: number }): number {
  return opts.timeoutMs ?? DEFAULT_SERVE_TIMEOUT_MS
}

/**
 * Polls `predicate` until it returns a truthy value, which is returned; throws after `timeoutMs`.
 * `state` describes what was seen instead, for a failure that happens only on a loaded machine.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; message?: string; state?: () => string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
  for (;;) {
    const value = await predicate()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) {
      const message = opts.message ?? `waitFor: timed out after ${opts.timeoutMs ?? 10_000} ms`
      throw new Error(opts.state ? `${message}\n${describeState(opts.state)}` : message)
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 100))
  }
}

function describeState(state: () => string): string {
  try {
    return state()
  } catch (error) {
    return `(the state could not be read: ${String(error)})`
  }
}

/** Parses `--format json` stdout (one JSON event per line), skipping lines that are not JSON. */
export function parseJsonEvents(stdout: string): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = []
  for (const line of stdout.split("\n")) {
    const trimmed = line.trim()
    if (!trimmed.startsWith("{")) continue
    try {
      events.push(JSON.parse(trimmed) as Record<string, unknown>)
    } catch {
      // not an event line
    }
  }
  return events
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  return { stdout: () => stdout, stderr: () => stderr }
}

/** SIGTERM, then SIGKILL if the process is still alive after a grace period. Only touches this child. */
async function terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
  await exited
  clearTimeout(timer)
}

async function killAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill(signal)
  await exited
}

/**
 * A port of 127.0.0.1 that is free now, drawn at random below the kernel's ephemeral range
 * (32768 and up on Linux), so the port-0 listeners of a test running beside this one (fake LLMs,
 * OpenCode's own) are not handed it meanwhile.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await canBind(port)) return port
  }
  throw new Error("freePort: no free port in 20000-31999 after 50 tries")
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })
}
