// The strings OpenCode itself holds about a session, on a real OpenCode: the title, which
// OpenCode's title agent writes from the user's first message, and the project folder. Here the
// scripted title model echoes the first line of the user's message, which carries a GitHub token
// and a `<private>` span, and the project folder's name carries another token and the private
// text; a second first line is long enough that OpenCode's cut of its title goes through a token. After phase 1 and phase 2 have run, none of it may be in any request the plugin's helpers
// sent, in memory.db, in the memory folder or in the plugin's log lines.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALNUM, fake } from "../redact/fakes.js"
import { FakeLlm, userText } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Ended, query } from "./support/memory-db.js"
import { folderTexts } from "./support/folder-texts.js"

const HOUR = 3_600_000
const TITLE_TOKEN = `ghp_${fake("e2e-title-gh", ALNUM, 36)}`
const FOLDER_TOKEN = `ghp_${fake("e2e-folder-gh", ALNUM, 36)}`
const PRIVATE = "Zorblat-Quince"
const FIRST_LINE = `SHIP-IT with ${TITLE_TOKEN} <private>${PRIVATE}</private> today`
/** A first line long enough that OpenCode's cut of the title (97 characters and "...") goes through its token. */
const LONG_TOKEN = `ghp_${fake("e2e-long-gh", ALNUM, 36)}`
const LONG_LINE = `SHIP-LONG release checklist for staging, canary and rollback; the runner signs with ${LONG_TOKEN} first`
const FORBIDDEN = [TITLE_TOKEN, FOLDER_TOKEN, PRIVATE, LONG_TOKEN]

const leaks = (text: string, also: readonly string[] = []) => [...FORBIDDEN, ...also].filter((secret) => text.includes(secret))



describe("the session's title and folder on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let folder: string
  let source: { id: string; title: string; directory: string }
  let long: { id: string; title: string }
  /** What is left of LONG_TOKEN at the end of the cut title: no longer a token's shape. */
  let fragment: string

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({
      llmUrl: llm.url,
      plugins: [],
      configScope: "global",
      env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
    })
    // A project folder named after the private text, holding a folder whose name is a token.
    folder = path.join(sandbox.projectDir, PRIVATE, `build-${FOLDER_TOKEN}`)
    fs.mkdirSync(folder, { recursive: true })

    // The session to learn from comes from a run without the plugin; its title is OpenCode's.
    const earlier = await startServe(sandbox)
    llm.setTitleHandler((request) => userText(request).split("\n").find((line) => line.startsWith("SHIP-")))
    const titled = async (text: string, marker: string, api: ServerApi) => {
      const created = await api.request<{ id: string }>("POST", "/session", {})
      await api.prompt(created.id, text)
      return waitFor(
        async () => {
          const session = await api.request<{ id: string; title: string; directory: string }>("GET", `/session/${created.id}`)
          return session.title.includes(marker) ? session : undefined
        },
        { timeoutMs: 30_000, message: "OpenCode did not set the title from the title model's reply" },
      )
    }
    source = await titled(`${FIRST_LINE}\nThe release notes are in the usual place.`, "SHIP-IT", new ServerApi(earlier.url, folder))
    // Elsewhere: private spans belong to the session that marks them, and this one marks none.
    long = await titled(`${LONG_LINE}\nThen tag the release.`, "SHIP-LONG", new ServerApi(earlier.url, sandbox.projectDir))
    fragment = long.title.replace(/(\.\.\.|\u2026)$/, "").split(" ").pop() ?? ""
    await earlier.stop()

    editConfig(sandbox, (config) => {
      config.plugin = [defaultPluginSpec()]
    })

    llm.reset()
    // The extractor copies the prompt's header lines into what it stores: whatever the plugin
    // sends as the title or folder would land in memory.db and the memory folder too.
    llm.setStructuredHandler((request) => {
      const header = userText(request)
        .split("\n")
        .filter((line) => /^(Title|Project folder):/.test(line))
        .join("\n")
      return { rollout_summary: `Shipping work.\n${header}`, raw_memory: `- the user ships releases\n${header}`, rollout_slug: "shipping" }
    })
    server = await startServe(sandbox)
    const live = new ServerApi(server.url, sandbox.projectDir)
    await live.prompt((await live.createSession("live turn")).id, "TRIGGER-LIVE hello")

    await waitFor(() => query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_stage1' AND status = 'done'")[0]?.n === 2, {
      timeoutMs: 90_000,
      message: "the two extractions did not finish",
      state: () =>
        [
          JSON.stringify(query(sandbox, "SELECT kind, job_key, status, retry_remaining, last_error FROM jobs"), null, 1),
          ...server.stderr().split("\n").filter((line) => /memory|phase/i.test(line)).slice(-60),
        ].join("\n"),
    })
    await waitFor(() => phase2Ended(sandbox), {
      timeoutMs: 60_000,
      message: "phase 2 did not run after phase 1",
    })
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("starts from a session whose title and folder in OpenCode hold the secrets and the private text", () => {
    expect(source.title).toContain(TITLE_TOKEN)
    expect(source.title).toContain(`<private>${PRIVATE}</private>`)
    expect(source.directory).toBe(folder)
    // OpenCode cut the long title through its token: the fragment left is no token to the redactor.
    expect(long.title).toMatch(/(\.\.\.|\u2026)$/)
    expect(fragment.length).toBeGreaterThanOrEqual(8)
    expect(LONG_TOKEN.startsWith(fragment)).toBe(true)
    expect(fragment).not.toBe(LONG_TOKEN)
  })

  it("sends the extractor the title and folder with markers in their place", () => {
    const extraction = llm.requests().find((r) => r.kind === "structured" && userText(r.body).includes("SHIP-IT"))
    expect(extraction).toBeDefined()
    const text = userText(extraction!.body)
    expect(text).toContain("Title: SHIP-IT with [REDACTED:github-token] [private] today")
    expect(text).toContain(`Project folder: ${path.join(sandbox.projectDir, "[private]", "build-[REDACTED:github-token]")}`)
    const cut = llm.requests().find((r) => r.kind === "structured" && userText(r.body).includes("SHIP-LONG"))
    expect(userText(cut!.body)).toMatch(/^Title: SHIP-LONG release checklist .* signs with (\.\.\.|\u2026)$/m)
  })

  it("lets neither into any request the plugin's helpers made", () => {
    const plugin = llm.requests().filter((r) => !JSON.stringify(r.body).includes("TRIGGER-LIVE"))
    expect(plugin.some((r) => r.kind === "structured")).toBe(true)
    expect(plugin.some((r) => userText(r.body).includes("Consolidate the memory folder"))).toBe(true)
    for (const request of plugin) expect(leaks(JSON.stringify(request.body), [fragment])).toEqual([])
  })

  it("keeps them out of every table of memory.db, and out of its files", () => {
    const [record] = query<{ cwd: string; rollout_summary: string }>(sandbox, `SELECT cwd, rollout_summary FROM stage1_outputs WHERE session_id = '${source.id}'`)
    expect(record!.cwd).toContain("build-[REDACTED:github-token]")
    expect(record!.rollout_summary).toContain("Title: SHIP-IT with [REDACTED:github-token] [private] today")
    const tables = query<{ name: string }>(sandbox, "SELECT name FROM sqlite_master WHERE type = 'table'").map((t) => t.name)
    expect(tables).toContain("stage1_outputs")
    for (const table of tables) expect(leaks(JSON.stringify(query(sandbox, `SELECT * FROM "${table}"`)), [fragment]), table).toEqual([])
    const files = ["memory.db", "memory.db-wal"].map((name) => path.join(sandbox.memoryHome, name)).filter((file) => fs.existsSync(file))
    for (const file of files) expect(leaks(fs.readFileSync(file).toString("latin1"), [fragment]), file).toEqual([])
  })

  it("keeps them out of every file of the memory folder, git objects included", () => {
    const texts = folderTexts(path.join(sandbox.memoryHome, "memories"))
    const raw = texts.find(([file]) => file === "raw_memories.md")
    expect(raw?.[1]).toContain("build-[REDACTED:github-token]")
    for (const [file, text] of texts) expect(leaks(text, [fragment]), file).toEqual([])
  })

  it("keeps them out of the plugin's log lines", () => {
    const lines = server.stderr().split("\n").filter((line) => line.includes("codex-memory"))
    expect(leaks(lines.join("\n"), [fragment])).toEqual([])
  })

  it("records what the title and folder held in the extraction's audit", () => {
    const [row] = query<{ counts: string }>(sandbox, `SELECT counts FROM redaction_log WHERE session_id = '${source.id}' AND stage = 'transcript'`)
    // The message's token and the title's; the folder's; the span in the message and in the title.
    expect(JSON.parse(row!.counts)).toEqual({ "github-token": 3, "private-span": 2 })
  })
})
