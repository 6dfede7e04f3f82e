// The plugin on the real released OpenCode 2.1.2 in every form a user can follow, and the
// command-line tool reading 2.x's config: the checkout folder and an installed package's folder
// (resolved as <dir>/index and <dir>/tui), the package as OpenCode installs it into its plugin
// cache (`opencode plugin add`), each with its options; `status` finding the home a 2.x entry
// names; `doctor` asking 2.1.2 whether it loaded the plugin and what it refused, and giving the
// fix in 2.x's format; `mode` asking 2.1.2 about a session memory does not know.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { copyingExtractor } from "./support/facts.js"
import { FakeLlm } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { repoRoot, waitFor } from "./support/opencode.js"
import { checkoutPlugin, createSandbox2, editConfig2, opencode2Binary, startServe2, type Sandbox2 } from "./support/opencode2.js"
import { stageInstall, type StagedInstall } from "./support/staged-install.js"

const CLI = path.join(repoRoot(), "dist", "src", "cli", "main.js")

interface Ran {
  code: number | null
  json: Record<string, unknown>
  stdout: string
  stderr: string
}

describe("the plugin and the CLI on the real OpenCode 2.1.2", () => {
  let llm: FakeLlm
  let sandbox: Sandbox2
  let installed: StagedInstall
  let cached: StagedInstall
  const optionHome = () => path.join(sandbox.root, "home-from-options")

  /** The CLI as the user runs it: the sandbox's HOME and XDG folders, no test root. */
  const cli = (args: readonly string[]): Ran => {
    const { OPENCODE_CODEX_MEMORY_TEST_ROOT: _root, OPENCODE_PASSWORD: _password, ...env } = sandbox.env
    const run = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 120_000, env })
    let json: Record<string, unknown> = {}
    try {
      json = JSON.parse(run.stdout) as Record<string, unknown>
    } catch {
      // --text
    }
    return { code: run.status, json, stdout: run.stdout, stderr: run.stderr }
  }
  const checks = (ran: Ran) => Object.fromEntries((ran.json.checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).map((c) => [c.name, c]))

  /** What a serve with `plugins` as its plugin list loaded, and the home its memory opened. */
  const loadWith = async (plugins: unknown[]) => {
    editConfig2(sandbox, (config) => void (config.plugins = plugins))
    const { OPENCODE_CODEX_MEMORY_TEST_ROOT: _root, ...env } = sandbox.env
    fs.rmSync(optionHome(), { recursive: true, force: true })
    const serve = await startServe2(sandbox, { env: { ...env, OPENCODE_CODEX_MEMORY_TEST_ROOT: "" } })
    try {
      let listed = await serve.api.plugins()
      for (let i = 0; i < 40 && !listed.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        listed = await serve.api.plugins()
      }
      const session = await serve.api.createSession()
      await serve.api.prompt(session, "hello")
      return { listed, homeOpened: fs.existsSync(path.join(optionHome(), "memory.db")), log: serve.stderr() }
    } finally {
      await serve.stop()
    }
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox2({ llmUrl: llm.url })
    installed = stageInstall()
    // OpenCode 2 installs a package spec into $XDG_CACHE_HOME/opencode/npm/<name>@<spec>/<generation>/
    // and installs nothing when the package is already there (F4): laid out so, nothing is fetched.
    cached = stageInstall({ nodeModules: path.join(sandbox.cacheHome, "opencode", "npm", "opencode-codex-memory@0.1.0", "1", "node_modules") })
  }, 60_000)

  afterAll(async () => {
    installed?.cleanup()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("loads the checkout folder, an installed package's folder and the cached package, server and TUI parts, each with its options", async () => {
    const options = { home: optionHome() }
    for (const plugins of [[checkoutPlugin(options)], [{ package: installed.dir, options }], [{ package: "opencode-codex-memory@0.1.0", options }]]) {
      const { listed, homeOpened, log } = await loadWith(plugins)
      expect(listed.map((p) => [p.id, p.state.status, p.features]), JSON.stringify(plugins)).toEqual([["opencode-codex-memory", "active", { server: true, tui: true }]])
      expect(homeOpened, `${JSON.stringify(plugins)}\n${log}`).toBe(true)
      expect(log).not.toMatch(/codex-memory: error/)
    }
  }, 180_000)

  it("status finds the home a 2.x entry's options name; doctor passes, having asked 2.1.2 what it loaded and registered", () => {
    editConfig2(sandbox, (config) => void (config.plugins = [checkoutPlugin({ home: optionHome() })]))
    fs.mkdirSync(optionHome(), { recursive: true })
    const status = cli(["status"])
    expect(status.json.home).toBe(optionHome())
    expect(status.json.home_source).toBe("option")
    const doctor = cli(["doctor", "--opencode", opencode2Binary()])
    const found = checks(doctor)
    const failed = Object.values(found).filter((c) => !c.ok && !["memory.db integrity"].includes(c.name))
    expect(failed, doctor.stdout).toEqual([])
    expect(found["plugin in OpenCode's global config"]!.detail).toContain('"plugins", OpenCode 2')
    expect(found["plugin loaded by OpenCode"]).toMatchObject({ ok: true, detail: expect.stringContaining("server and tui") })
    expect(found["plugin registrations"]).toMatchObject({ ok: true, detail: expect.stringMatching(/^all in place: tools, agents, .*rpc$/) })
    expect(found["helper models"]).toMatchObject({ ok: true, detail: expect.stringContaining("fake/fake-model") })
  }, 120_000)

  it("doctor names a configured plugin 2.1.2 did not load, and a 1.x entry 2.x does not read, with the fix in 2.x's format", () => {
    editConfig2(sandbox, (config) => void (config.plugins = [{ package: path.join(sandbox.root, "no-such", "opencode-codex-memory") }]))
    const missing = checks(cli(["doctor", "--opencode", opencode2Binary()]))["plugin loaded by OpenCode"]!
    expect(missing).toMatchObject({ ok: false, detail: expect.stringContaining("did not load it"), fix: expect.stringContaining("index.js and tui.js") })
    editConfig2(sandbox, (config) => {
      config.plugins = []
      config.plugin = [`file://${repoRoot()}`]
    })
    const wrongList = checks(cli(["doctor", "--opencode", opencode2Binary()]))["plugin in OpenCode's global config"]!
    expect(wrongList).toMatchObject({ ok: false, detail: expect.stringContaining('"plugin" list, which OpenCode 2 does not read'), fix: expect.stringContaining('"plugins" list') })
    expect(wrongList.fix).toContain("opencode plugin add opencode-codex-memory")
    editConfig2(sandbox, (config) => void delete config.plugin)
  }, 120_000)

  it("on a plain serve, without the shared service, learns the idle sessions of two projects", async () => {
    editConfig2(sandbox, (config) => void (config.plugins = [checkoutPlugin()]))
    llm.setStructuredHandler(copyingExtractor)
    const other = path.join(sandbox.root, "other-project")
    fs.mkdirSync(other, { recursive: true })
    let serve = await startServe2(sandbox)
    const here = await serve.api.createSession()
    await serve.api.prompt(here, "Please remember: FACT-HERE: the api runs on port 8080")
    const there = await serve.api.createSession(other)
    await serve.api.prompt(there, "Please remember: FACT-THERE: the docs build with mkdocs")
    await serve.stop()
    serve = await startServe2(sandbox, { env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * 3_600_000) } })
    try {
      await serve.api.prompt(await serve.api.createSession(), "good morning")
      const learned = () => query<{ session_id: string }>(sandbox, "SELECT session_id FROM stage1_outputs").map((row) => row.session_id)
      await waitFor(() => learned().includes(here) && learned().includes(there), { timeoutMs: 60_000, message: `both projects' sessions were not learned\n${serve.stderr().slice(-2000)}` })
    } finally {
      await serve.stop()
      llm.setStructuredHandler(undefined)
    }
  }, 120_000)

  it("mode asks 2.1.2 about a session memory does not know: a real one is accepted, a typo refused", async () => {
    editConfig2(sandbox, (config) => void (config.plugins = [checkoutPlugin({ home: optionHome() })]))
    const serve = await startServe2(sandbox)
    const session = await serve.api.createSession()
    await serve.stop()
    const accepted = cli(["mode", session, "disabled", "--opencode", opencode2Binary()])
    expect(accepted, accepted.stderr).toMatchObject({ code: 0, json: { mode: "disabled" } })
    const typo = cli(["mode", `${session.slice(0, -3)}zzz`, "disabled", "--opencode", opencode2Binary()])
    expect(typo).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
  }, 120_000)
})
