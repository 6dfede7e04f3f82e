// The command-line tool, as the built binary, on homes the real OpenCode made: V1's closed loop
// (a fact learned, consolidated, then forgotten; checked here, so one loop serves both), then
// every command on the home it left; pause proved on a running OpenCode (no helper session
// starts while paused, learning goes on after resume); and the spend ledger matching what the
// scripted model reported for the helper sessions.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createRequire } from "node:module"
import { openDatabase } from "../../src/store/database.js"
import { DRIVER_ENV } from "../../src/store/sqlite.js"
import { stageInstall } from "./support/staged-install.js"
import { FACT, runClosedLoop, V1_BLOCK, type ClosedLoopResult } from "./support/closed-loop.js"
import { FakeLlm, systemTexts, toolNames } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { createSandbox, opencodeBinary, repoRoot, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
/** Node 22.13 and later have node:sqlite unflagged: there the CLI runs from an install without better-sqlite3. */
const HAS_NODE_SQLITE = major > 22 || (major === 22 && minor >= 13)
const staged = stageInstall()
const BIN = HAS_NODE_SQLITE ? staged.bin : path.join(repoRoot(), "dist", "src", "cli", "main.js")
afterAll(() => staged.cleanup())

interface Ran {
  code: number | null
  json: Record<string, unknown>
  stdout: string
  stderr: string
}

function cli(args: readonly string[], env: Record<string, string> = {}): Ran {
  return runBin(BIN, args, env)
}

function runBin(bin: string, args: readonly string[], env: Record<string, string> = {}): Ran {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-home", ...env } })
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(run.stdout) as Record<string, unknown>
  } catch {
    // --text
  }
  return { code: run.status, json, stdout: run.stdout, stderr: run.stderr }
}

describe("the closed loop (V1), and the CLI on the home it left", () => {
  let loop: ClosedLoopResult
  let home: string
  let scratch: string
  const at = (...args: string[]) => cli([...args, "--home", home])

  beforeAll(async () => {
    loop = await runClosedLoop({ keep: true })
    home = loop.memoryHome
    scratch = fs.mkdtempSync(path.join(path.dirname(home), "cli-"))
  }, 240_000)

  afterAll(() => {
    if (home) fs.rmSync(path.dirname(home), { recursive: true, force: true })
  })

  it("the loop (V1): learns a fact, injects it into a new session, and forgets it after the session is deleted", () => {
    const result = loop
    expect(result.learnedSummary.split("\n")[0]).toBe("v1")
    expect(result.learnedSummary).toContain(FACT)
    expect(result.learnedHandbook).toContain(FACT)
    expect(result.injectedBlock).toContain("----- MEMORY SUMMARY BEGINS -----")
    expect(result.injectedBlock).toContain(V1_BLOCK)
    expect(result.injectedBlock).toContain(FACT)
    expect(result.forgottenSummary).not.toContain("make ship")
    expect(result.factAfterForgetting).toBe(false)
    // V2 was never turned on: it has no folder and no database.
    expect(result.idle.v2).toEqual({ folder: false, outputs: undefined })

    // The helpers' requests carry their own prompts instead of OpenCode's coding-agent prompt,
    // and still get OpenCode's environment block, the structured-output instruction and their tools.
    const { extraction, consolidation } = result.helperRequests
    const extractionSystem = systemTexts(extraction).join("\n")
    expect(toolNames(extraction)).toEqual(["StructuredOutput"])
    expect(extraction.tool_choice).toBe("required")
    expect(extractionSystem).toContain("You MUST use the StructuredOutput tool")
    expect(extractionSystem).toMatch(/^You are the memory extractor of opencode-codex-memory/)
    expect(extractionSystem).toContain("<env>")
    expect(extractionSystem).toContain("# Memory extraction")
    const consolidationSystem = systemTexts(consolidation).join("\n")
    expect(toolNames(consolidation).sort()).toEqual(["edit", "glob", "grep", "read", "write"])
    expect(consolidationSystem).toMatch(/^You are the memory consolidator of opencode-codex-memory/)
    expect(consolidationSystem).toContain("<env>")
    expect(consolidationSystem).toContain("# Memory consolidation")
    for (const request of [extraction, consolidation]) expect(JSON.stringify(request.messages)).not.toContain("You are opencode")
  })

  it("status, view, view --all, search and recall read what OpenCode left", () => {
    const status = at("status")
    expect(status.code, status.stderr).toBe(0)
    const versions = status.json.versions as Array<{ version: string; last_consolidation: string | null }>
    expect(versions.find((v) => v.version === "v1")?.last_consolidation).toMatch(/^\d{4}-/)
    expect(at("status", "--text").stdout).toContain("# Long-term memory")

    const view = at("view")
    expect(view.code).toBe(0)
    expect(view.json).toMatchObject({ injected: true, block: expect.stringContaining("----- MEMORY SUMMARY BEGINS -----") })

    const all = at("view", "--all")
    expect(all.code).toBe(0)
    expect(Array.isArray(all.json.records)).toBe(true)

    const search = at("search", "memory")
    expect(search.code).toBe(0)
    expect(search.json).toHaveProperty("matches")

    // Session A was deleted in OpenCode: nothing of it is left to recall, nor in the sessions list.
    expect(at("recall", loop.sessionA)).toMatchObject({ code: 1, json: { error: { code: "not_found" } } })
    const sessions = at("sessions")
    expect(sessions.code, sessions.stderr).toBe(0)
    const listed = sessions.json.sessions as Array<{ session_id: string; title: string | null; folder: string | null; state: string; updated_at: string | null }>
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.map((s) => s.session_id)).not.toContain(loop.sessionA)
    // Titles and folders as OpenCode's listing gave them; no helper session is ever listed.
    for (const s of listed) {
      expect(s.updated_at).toMatch(/^\d{4}-/)
      expect(s.title ?? "").not.toMatch(/memorize/)
    }
    expect(listed.some((s) => s.title !== null && s.folder !== null)).toBe(true)
  })

  it("diff --last says the last consolidation forgot session A's record; diff --pending leaves the folder alone", () => {
    const last = at("diff", "--last")
    expect(last.code).toBe(0)
    const review = last.json.last as { inputsRemoved: string[]; diff: string }
    expect(review.inputsRemoved.length).toBeGreaterThan(0)
    expect(review.diff).toContain("Phase 2 workspace diff")
    const before = fs.readdirSync(loop.memoryRoot).sort()
    expect(at("diff", "--pending").code).toBe(0)
    expect(fs.readdirSync(loop.memoryRoot).sort()).toEqual(before)
  })

  /** The loop's OpenCode environment (its folders, nothing fetched), with `config` as the config folder. */
  function openCodeEnv(config: string): Record<string, string> {
    const root = path.dirname(home)
    return {
      HOME: path.join(root, "home"),
      XDG_DATA_HOME: path.join(root, "data"),
      XDG_CACHE_HOME: path.join(root, "cache"),
      XDG_STATE_HOME: path.join(root, "state"),
      XDG_CONFIG_HOME: config,
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
      OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
    }
  }

  it("doctor passes on the real home with the real OpenCode binary (which loads the plugin and offers its models), and names the driver it used", () => {
    const ran = cli(["doctor", "--home", home, "--opencode", opencodeBinary()], openCodeEnv(HAS_NODE_SQLITE ? configFor(`file://${path.join(staged.dir, "dist", "src", "index.js")}`) : path.join(path.dirname(home), "config")))
    const checks = ran.json.checks as Array<{ name: string; ok: boolean; detail: string }>
    const failed = checks.filter((c) => !c.ok)
    expect(failed, JSON.stringify(failed)).toEqual([])
    expect(ran.code).toBe(0)
    // Node 22.13+: the built-in driver, from an install that has no better-sqlite3 at all.
    expect(checks.find((c) => c.name === "SQLite driver")?.detail).toMatch(HAS_NODE_SQLITE ? /^node:sqlite \(built into Node, Node 2[2-9]\./ : /^better-sqlite3 \(better-sqlite3 12\./)
    if (HAS_NODE_SQLITE) expect(() => createRequire(staged.bin).resolve("better-sqlite3")).toThrow(/Cannot find module/)
    expect(checks.find((c) => c.name === "plugin loaded by OpenCode")?.ok).toBe(true)
    expect(checks.find((c) => c.name === "helper models")).toMatchObject({ ok: true, detail: expect.stringContaining("fake/fake-model") })
  })

  it("doctor finds a configured plugin the real OpenCode cannot load, and a helper model it does not offer", () => {
    const config = configFor("file:///nonexistent/opencode-codex-memory/dist/src/index.js", { extract_model: "fake/fake-modle" })
    const ran = cli(["doctor", "--home", home, "--opencode", opencodeBinary()], openCodeEnv(config))
    const checks = Object.fromEntries((ran.json.checks as Array<{ name: string; ok: boolean; detail: string }>).map((c) => [c.name, c]))
    expect(ran.code).toBe(1)
    expect(checks["plugin loaded by OpenCode"]).toMatchObject({ ok: false, detail: expect.stringContaining("memorize-extract is missing") })
    expect(checks["helper models"]).toMatchObject({ ok: false, detail: expect.stringContaining("did you mean fake/fake-model?") })
  })

  /**
   * A copy of the loop's OpenCode config folder (with its stubbed plugin-deps install) whose plugin
   * entry is `spec` instead of the checkout, with `options` added to the plugin's.
   */
  function configFor(spec: string, options: Record<string, unknown> = {}): string {
    const config = fs.mkdtempSync(path.join(scratch, "config-"))
    fs.cpSync(path.join(path.dirname(home), "config"), config, { recursive: true })
    const file = path.join(config, "opencode", "opencode.json")
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { plugin?: unknown[] }
    parsed.plugin = (parsed.plugin ?? []).map((entry) => (Array.isArray(entry) ? [spec, { ...(entry[1] as object), ...options }] : [spec, options]))
    fs.writeFileSync(file, JSON.stringify(parsed))
    return config
  }

  it("with no SQLite driver, says what to install instead of calling the database damaged", () => {
    // The staged install has no better-sqlite3; pinning that driver leaves none on any Node.
    const none = { [DRIVER_ENV]: "better-sqlite3" }
    const status = runBin(staged.bin, ["status", "--home", home], none)
    expect(status).toMatchObject({ code: 1, json: { error: { code: "no_sqlite_driver" } } })
    expect(status.stderr).toMatch(/better-sqlite3: not installed.*Use Node 22\.13 or later/)
    expect(status.stderr).not.toMatch(/damaged|corrupt/)
    const doctor = runBin(staged.bin, ["doctor", "--home", home, "--opencode", opencodeBinary()], { ...none, XDG_CONFIG_HOME: path.join(path.dirname(home), "config") })
    const checks = doctor.json.checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>
    expect(doctor.code).toBe(1)
    expect(checks.find((c) => c.name === "SQLite driver")).toMatchObject({ ok: false, fix: expect.stringContaining("npm install better-sqlite3@12") })
    expect(checks.find((c) => c.name === "memory.db integrity")?.detail).toMatch(/not checked: no SQLite driver loads/)
    expect(JSON.stringify(checks)).not.toMatch(/damaged/)
  })

  it("export and import carry the home to another machine; mode, pause, resume and reset work on the copy", () => {
    const file = path.join(scratch, "memory.json")
    expect(at("export", file).code).toBe(0)
    const copy = path.join(scratch, "copy")
    expect(cli(["import", file, "--home", copy]).code).toBe(0)
    expect(fs.readFileSync(path.join(copy, "memories", "memory_summary.md"), "utf8")).toBe(fs.readFileSync(path.join(home, "memories", "memory_summary.md"), "utf8"))
    expect(cli(["import", file, "--home", copy])).toMatchObject({ code: 1, json: { error: { code: "home_not_empty" } } })
    const on = (...args: string[]) => cli([...args, "--home", copy])
    // mode checks an id memory knows nothing of with OpenCode's own CLI (`opencode export --pure`),
    // here the real binary on the closed loop's OpenCode data.
    const sandboxRoot = path.dirname(home)
    const opencodeEnv = {
      HOME: path.join(sandboxRoot, "home"),
      XDG_DATA_HOME: path.join(sandboxRoot, "data"),
      XDG_CONFIG_HOME: path.join(sandboxRoot, "config"),
      XDG_CACHE_HOME: path.join(sandboxRoot, "cache"),
      XDG_STATE_HOME: path.join(sandboxRoot, "state"),
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
    }
    const withOpencode = (...args: string[]) => cli([...args, "--home", copy, "--opencode", opencodeBinary()], opencodeEnv)
    // Session A was deleted in OpenCode, and memory forgot it: a typo-like id, refused.
    expect(withOpencode("mode", loop.sessionA, "disabled")).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
    // A session OpenCode has, of which memory holds nothing (its stamp dropped here), is accepted.
    const { db } = openDatabase(path.join(copy, "memory.db"))
    const existing = db.prepare("SELECT session_id FROM memory_session_versions ORDER BY session_id LIMIT 1").get<{ session_id: string }>()!.session_id
    db.prepare("DELETE FROM memory_session_versions WHERE session_id = $id").run({ id: existing })
    db.close()
    expect(withOpencode("mode", existing, "disabled")).toMatchObject({ code: 0, json: { mode: "disabled" } })
    expect(on("modes").json).toMatchObject({ sessions: [{ session_id: existing, mode: "disabled" }] })
    expect(on("pause")).toMatchObject({ code: 0, json: { paused: true } })
    expect(on("resume")).toMatchObject({ code: 0, json: { paused: false } })
    expect(on("reset")).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
    expect(on("reset", "--yes")).toMatchObject({ code: 0, json: { reset: true } })
  })

  it("fails clearly on bad input: unknown command, bad flags, a damaged database, a newer or truncated archive", () => {
    expect(cli(["capabilities"])).toMatchObject({ code: 0, json: { protocol_version: 1 } })
    expect(cli(["check-compatibility", "--protocol", "1"])).toMatchObject({ code: 0, json: { compatible: true } })
    expect(cli(["check-compatibility", "--protocol", "7"])).toMatchObject({ code: 1, json: { error: { code: "incompatible" } } })
    expect(cli(["nonsense"])).toMatchObject({ code: 2, json: { error: { code: "unknown_command" } } })
    expect(at("status", "--verbose")).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
    const broken = path.join(scratch, "broken")
    fs.mkdirSync(broken)
    fs.writeFileSync(path.join(broken, "memory.db"), "garbage ".repeat(1000))
    const damaged = cli(["status", "--home", broken])
    expect(damaged).toMatchObject({ code: 3, json: { error: { code: "corrupt_database" } } })
    expect(damaged.stderr).toContain("damaged")
    const file = path.join(scratch, "memory.json")
    const archive = JSON.parse(fs.readFileSync(file, "utf8")) as { schema: { catalog: number } }
    archive.schema.catalog += 1
    fs.writeFileSync(path.join(scratch, "newer.json"), JSON.stringify(archive))
    expect(cli(["import", path.join(scratch, "newer.json"), "--home", path.join(scratch, "n")])).toMatchObject({ code: 3, json: { error: { code: "newer_archive" } } })
    fs.writeFileSync(path.join(scratch, "cut.json"), fs.readFileSync(file, "utf8").slice(0, 200))
    expect(cli(["import", path.join(scratch, "cut.json"), "--home", path.join(scratch, "t")])).toMatchObject({ code: 3, json: { error: { code: "invalid_archive" } } })
  })
})

describe("pause on a running OpenCode, and the spend ledger", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle | undefined
  const home = () => sandbox.memoryHome
  const helperRequests = () => llm.requests().filter((r) => r.kind === "structured" || systemTexts(r.body).some((s) => s.includes("You are the memory consolidator")))

  beforeAll(async () => {
    llm = await FakeLlm.start()
    llm.setStructuredHandler(() => ({ rollout_summary: "Worked on the PAUSE-FACT.", raw_memory: "---\ndescription: d\n---\n- PAUSE-FACT: builds use bazel", rollout_slug: "pause" }))
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global" })
    // A session finished earlier; the plugin's clock is then set 7 h ahead so it looks idle.
    server = await startServe(sandbox)
    const api = new ServerApi(server.url, sandbox.projectDir)
    await api.prompt((await api.createSession("earlier work")).id, "PAUSE-FACT: builds use bazel")
    await server.stop()
    server = undefined
    llm.reset()
    llm.setStructuredHandler(() => ({ rollout_summary: "Worked on the PAUSE-FACT.", raw_memory: "---\ndescription: d\n---\n- PAUSE-FACT: builds use bazel", rollout_slug: "pause" }))
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(7 * HOUR)
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("starts no helper session while paused, learns after resume, and its ledger matches the scripted model's usage", async () => {
    expect(cli(["pause", "--home", home()])).toMatchObject({ code: 0, json: { paused: true } })
    server = await startServe(sandbox)
    const api = new ServerApi(server.url, sandbox.projectDir)
    // A new session's first message starts a pass; paused, it claims nothing.
    await api.prompt((await api.createSession("while paused")).id, "hello")
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    expect(helperRequests()).toEqual([])
    expect(query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]?.n).toBe(0)
    const held = cli(["status", "--home", home()])
    expect(held.json.learning).toMatchObject({ held: true })

    expect(cli(["resume", "--home", home()])).toMatchObject({ code: 0, json: { paused: false } })
    await api.prompt((await api.createSession("after resume")).id, "hello again")
    await waitFor(() => (query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]?.n ?? 0) > 0, { timeoutMs: 60_000, message: "nothing was learned after resume" })
    // Wait for the extraction's helper session to be accounted (it is read before it is deleted).
    await waitFor(() => (query<{ n: number }>(sandbox, "SELECT COALESCE(SUM(sessions), 0) AS n FROM spend_ledger WHERE phase = 'extraction'")[0]?.n ?? 0) > 0, { timeoutMs: 30_000, message: "the ledger recorded no extraction" }).catch((error) => {
      const log = server!.stderr().split("\n").filter((line) => /codex-memory|cost|rror/.test(line)).slice(-20).join("\n")
      throw new Error(`${(error as Error).message}\nledger: ${JSON.stringify(query(sandbox, "SELECT * FROM spend_ledger"))}\n${log}`)
    })

    // The fake model reports 10 prompt and 5 completion tokens for every request.
    const extraction = llm.requests().filter((r) => r.kind === "structured").length
    const ledger = cli(["status", "--home", home()]).json.report as { spend: { byDay: Array<{ phase: string; input: number; output: number; sessions: number }> } }
    const row = ledger.spend.byDay.find((r) => r.phase === "extraction")!
    // One helper session per extraction job (both sessions look idle by now).
    const helpers = query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_stage1' AND status = 'done'")[0]?.n
    expect(extraction).toBeGreaterThan(0)
    expect(row).toMatchObject({ sessions: helpers, input: 10 * extraction, output: 5 * extraction })
  }, 180_000)
})
