// One small interface over the hosts the plugin serves, so a scenario is written once and run on
// each: the real OpenCode 1.18.33 and the real released OpenCode 2.1.2 (the binaries, over HTTP,
// against the fake LLM; 2.1.2 with or without its shared background service). Both answer
// through the same ScriptedModel API, so one script drives either.
import fs from "node:fs"
import path from "node:path"
import { FakeLlm, type ChatRequest, type ScriptedModel } from "./fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, type Sandbox, type ServeHandle } from "./opencode.js"
import { checkoutPlugin, createSandbox2, editConfig2, startServe2, type Serve2 } from "./opencode2.js"
import { ServerApi } from "./server-api.js"

export interface StartOptions {
  pluginOptions?: Record<string, unknown>
  /** Shifts the plugin's clock, so sessions look that much older (honoured under the test root). */
  clockOffsetMs?: number
}

/** What the model was sent for a turn's first request. */
export interface SentRequest {
  system: string[]
  tools: string[]
  request: ChatRequest
}

export interface HostDriver {
  readonly name: string
  readonly model: ScriptedModel
  readonly memoryHome: string
  readonly projectDir: string
  /** A folder outside the project and the memory home, for sandbox probes. */
  readonly outsideDir: string
  /** How the host's file tools name their file. */
  readonly pathKey: "filePath" | "path"
  start(options?: StartOptions): Promise<void>
  /** Ends the host as it ends (OpenCode 1.18 exits on SIGTERM without the plugin's dispose; OpenCode 2 releases its locations). */
  stop(): Promise<void>
  createSession(title: string): Promise<string>
  /** A user's turn, to its end. */
  turn(sessionId: string, text: string): Promise<SentRequest>
  deleteSession(sessionId: string): Promise<void>
  /** The host's log, for failure messages. */
  log(): string
  cleanup(): Promise<void>
}

export type DriverFactory = () => Promise<HostDriver>

export const opencode1: DriverFactory = async () => {
  const llm = await FakeLlm.start()
  const sandbox: Sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [defaultPluginSpec()] })
  const outsideDir = path.join(sandbox.root, "outside")
  fs.mkdirSync(outsideDir)
  let server: ServeHandle | undefined
  let api: ServerApi | undefined
  return {
    name: "OpenCode 1.18.33",
    model: llm,
    memoryHome: sandbox.memoryHome,
    projectDir: sandbox.projectDir,
    outsideDir,
    pathKey: "filePath",
    async start(options = {}) {
      sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(options.clockOffsetMs ?? 0)
      editConfig(sandbox, (config) => {
        config.plugin = [options.pluginOptions ? [defaultPluginSpec(), options.pluginOptions] : defaultPluginSpec()]
      })
      server = await startServe(sandbox)
      api = new ServerApi(server.url, sandbox.projectDir)
    },
    async stop() {
      await server?.stop()
      server = undefined
    },
    async createSession(title) {
      return (await api!.createSession(title)).id
    },
    async turn(sessionId, text) {
      const before = llm.requests().length
      await api!.prompt(sessionId, text)
      const first = llm.requests().slice(before).find((r) => r.kind === "agent" && JSON.stringify(r.body.messages).includes(text))
      if (!first) throw new Error(`no model request for the turn "${text}"`)
      const system = (first.body.messages ?? []).filter((m) => m.role === "system").map((m) => String(typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
      return { system, tools: (first.body.tools ?? []).map((t) => t.function?.name ?? ""), request: first.body }
    },
    async deleteSession(sessionId) {
      await api!.request("DELETE", `/session/${sessionId}`)
    },
    log: () => server?.stderr() ?? "",
    async cleanup() {
      await server?.stop()
      await llm.close()
      await sandbox.cleanup()
    },
  }
}

/**
 * The released OpenCode 2.1.2: a plain `serve` on a port of its own, or (`service`) the shared
 * background service, the process the TUI and the CLI use, which the plugin then runs in.
 */
export function opencode2(options: { service?: boolean } = {}): DriverFactory {
  return async () => {
    const llm = await FakeLlm.start()
    const sandbox = await createSandbox2({ llmUrl: llm.url })
    const outsideDir = path.join(sandbox.root, "outside")
    fs.mkdirSync(outsideDir)
    let server: Serve2 | undefined
    return {
      name: `OpenCode 2.1.2${options.service ? " (shared service)" : ""}`,
      model: llm,
      memoryHome: sandbox.memoryHome,
      projectDir: sandbox.projectDir,
      outsideDir,
      pathKey: "path",
      async start(startOptions = {}) {
        sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(startOptions.clockOffsetMs ?? 0)
        editConfig2(sandbox, (config) => {
          config.plugins = [checkoutPlugin(startOptions.pluginOptions)]
        })
        server = await startServe2(sandbox, { service: options.service ?? false })
      },
      async stop() {
        await server?.stop()
        server = undefined
      },
      async createSession() {
        return server!.api.createSession()
      },
      async turn(sessionId, text) {
        const before = llm.requests().length
        await server!.api.prompt(sessionId, text)
        const first = llm.requests().slice(before).find((r) => r.kind === "agent" && JSON.stringify(r.body.messages).includes(text))
        if (!first) throw new Error(`no model request for the turn "${text}"`)
        const system = (first.body.messages ?? []).filter((m) => m.role === "system").map((m) => String(typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
        return { system, tools: (first.body.tools ?? []).map((t) => t.function?.name ?? ""), request: first.body }
      },
      async deleteSession(sessionId) {
        await server!.api.deleteSession(sessionId)
      },
      log: () => server?.stderr() ?? "",
      async cleanup() {
        await server?.stop()
        await llm.close()
        await sandbox.cleanup()
      },
    }
  }
}
