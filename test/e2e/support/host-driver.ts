// One small interface over the two hosts the plugin serves, so a scenario is written once and run
// on both: the real OpenCode 1.18.33 (the binary, over HTTP, against the fake LLM) and the
// OpenCode 2 fake (test/fakes/opencode2.ts, in process, with a registered service over HTTP).
// Both answer through the same ScriptedModel API, so one script drives either.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { createV2Setup } from "../../../src/v2/plugin.js"
import { FakeOpenCode2 } from "../../fakes/opencode2.js"
import { FakeLlm, type ChatRequest, type ScriptedModel } from "./fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, repoRoot, startServe, type Sandbox, type ServeHandle } from "./opencode.js"
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

export const opencode2Fake: DriverFactory = async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-v2-scenario-"))
  const memoryHome = path.join(root, "memory-home")
  const projectDir = path.join(root, "project")
  const outsideDir = path.join(root, "outside")
  const stateDir = path.join(root, "state")
  for (const dir of [projectDir, outsideDir]) fs.mkdirSync(dir, { recursive: true })
  const fake = new FakeOpenCode2()
  await fake.startService(stateDir)
  const logs: string[] = []
  let running = false
  return {
    name: "OpenCode 2 (fake)",
    model: fake.model,
    memoryHome,
    projectDir,
    outsideDir,
    pathKey: "path",
    async start(options = {}) {
      const env: Record<string, string> = {
        OPENCODE_CODEX_MEMORY_TEST_ROOT: memoryHome,
        OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(options.clockOffsetMs ?? 0),
        XDG_STATE_HOME: stateDir,
      }
      // A fresh definition: a new OpenCode 2 process loading the plugin.
      const plugin = { id: "opencode-codex-memory", setup: createV2Setup({ env, homedir: root, packageDir: repoRoot(), log: (line) => logs.push(line) }) }
      await fake.setup(plugin, projectDir, options.pluginOptions ?? {})
      running = true
      // Start-up work runs just after setup.
      await new Promise((resolve) => setTimeout(resolve, 100))
    },
    async stop() {
      if (running) await fake.dispose(projectDir)
      running = false
    },
    createSession: (title) => fake.createSession(projectDir, title),
    async turn(sessionId, text) {
      const before = fake.requests.length
      await fake.prompt(sessionId, text)
      const first = fake.requests.slice(before).find((r) => r.sessionID === sessionId && r.kind === "primary")
      if (!first) throw new Error(`no model request for the turn "${text}"`)
      return { system: first.system, tools: first.tools, request: first.request }
    },
    deleteSession: (sessionId) => fake.deleteSession(sessionId),
    log: () => logs.join("\n"),
    async cleanup() {
      await fake.disposeAll()
      fs.rmSync(root, { recursive: true, force: true })
    },
  }
}
