import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { Memory } from "../src/memory.js"
import { toV1Tools } from "../src/v1/tools.js"
import { FakeHost } from "./fakes/host.js"

const memories: Memory[] = []
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

async function setup(options: Record<string, unknown> = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-tools-"))
  const host = new FakeHost()
  const memory = new Memory({ home, ...options }, { host, env: {}, homedir: home })
  memories.push(memory)
  await memory.start()
  const tools = toV1Tools(memory.tools(), memory.diagnostics)
  const asks: unknown[] = []
  const context = (approve = true) =>
    ({
      sessionID: "ses_me",
      messageID: "msg_1",
      agent: "build",
      directory: home,
      worktree: home,
      abort: new AbortController().signal,
      metadata: () => undefined,
      ask: async (input: unknown) => {
        asks.push(input)
        if (!approve) throw new Error("rejected")
      },
    }) as never
  const run = async (name: string, args: Record<string, unknown>, approve = true) => {
    const result = await tools[name]!.execute(args as never, context(approve))
    return typeof result === "string" ? { output: result, metadata: {} } : result
  }
  return { memory, host, tools, run, asks, root: memory.paths.memoryRoot }
}

describe("tools", () => {
  it("offers the memory tools only with use_memories and dedicated_tools; the controls always", async () => {
    expect(Object.keys((await setup()).tools).sort()).toEqual(
      ["memory_add_note", "memory_checkpoint", "memory_inspect", "memory_list", "memory_mode", "memory_read", "memory_reset", "memory_search"],
    )
    expect(Object.keys((await setup({ dedicated_tools: false })).tools).sort()).toEqual(["memory_checkpoint", "memory_inspect", "memory_mode", "memory_reset"])
    expect(Object.keys((await setup({ use_memories: false })).tools).sort()).toEqual(["memory_checkpoint", "memory_inspect", "memory_mode", "memory_reset"])
    expect(Object.keys((await setup({ use_memories: false, checkpoint: { enabled: false } })).tools).sort()).toEqual(["memory_inspect", "memory_mode", "memory_reset"])
  })

  it("answers refusals with a readable error instead of throwing", async () => {
    const { run } = await setup()
    for (const bad of ["/etc/passwd", "../outside.md", ".git/config", "a\\b.md"]) {
      const reply = await run("memory_read", { path: bad })
      expect(reply.output).toMatch(/^Error \((invalid_path|not_found)\)/)
    }
    expect((await run("memory_search", { queries: [" "] })).output).toMatch(/^Error \(empty_query\)/)
  })

  it("checks every call against the tool's schema before it runs, with a reply naming each wrong field", async () => {
    const { run, host, memory } = await setup()
    host.addSession({ id: "ses_me" })
    const note = await run("memory_add_note", { note: "remember this" })
    expect(note.output).toMatch(/^Error \(invalid_argument\): title: .*Call memory_add_note again/)
    const mode = await run("memory_mode", { mode: "off" })
    expect(mode.output).toMatch(/^Error \(invalid_argument\): mode: .*"enabled"/)
    expect(mode.output).not.toMatch(/CHECK|SQLITE/)
    expect((await run("memory_read", { path: 7 })).output).toMatch(/^Error \(invalid_argument\): path:/)
    // Refused before running: nothing was written, nothing logged as a failure.
    expect(fs.existsSync(path.join(memory.paths.memoryRoot, "extensions", "ad_hoc", "notes"))).toBe(false)
    expect(host.logs.filter((line) => line.level === "error")).toEqual([])
  })

  it("reads with line numbers and says where a cut answer continues", async () => {
    const { run, root } = await setup()
    fs.writeFileSync(path.join(root, "MEMORY.md"), "one\ntwo\nthree\n")
    const reply = await run("memory_read", { path: "MEMORY.md", line_offset: 2, max_lines: 1 })
    expect(reply.output).toBe("MEMORY.md (lines 2-2 of 3)\n2| two")
  })

  it("sets a session's mode, the current session by default, and refuses an id no one knows", async () => {
    const { run, memory, host } = await setup()
    expect((await run("memory_mode", { mode: "disabled" })).output).toBe(
      "Memory mode of session ses_me changed from enabled to disabled. Memory had learned nothing from it. Nothing of it is kept from now on, its checkpoint included.",
    )
    host.addSession({ id: "ses_other" })
    await run("memory_mode", { mode: "polluted", session_id: "ses_other" })
    expect(memory.store()?.mode("ses_me")).toBe("disabled")
    expect(memory.store()?.mode("ses_other")).toBe("polluted")
    const typo = await run("memory_mode", { mode: "disabled", session_id: "ses_0ther" })
    expect(typo.output).toBe('Error (unknown_session): No session ses_0ther exists, in memory or in OpenCode; check the id (OpenCode\'s ids start with "ses_").')
    expect(memory.store()?.mode("ses_0ther")).toBe("enabled")
    expect(memory.controls.keptOut().map((entry) => entry.sessionId).sort()).toEqual(["ses_me", "ses_other"])
  })

  it("resets only with confirm: true and the user's approval", async () => {
    const { run, root, asks } = await setup()
    fs.writeFileSync(path.join(root, "MEMORY.md"), "keep me")
    expect((await run("memory_reset", { confirm: false })).output).toMatch(/^Refused: confirm must be true/)
    expect(asks).toHaveLength(0)
    expect((await run("memory_reset", { confirm: true }, false)).output).toMatch(/^Refused: the user did not approve/)
    expect(fs.existsSync(path.join(root, "MEMORY.md"))).toBe(true)
    // One approval covers every version's folder: a reset erases them all.
    expect(asks[0]).toMatchObject({ permission: "memory_reset", patterns: [root, `${root}_v2`] })
    expect((await run("memory_reset", { confirm: true })).output).toMatch(/^Erased all memory/)
    expect(fs.readdirSync(root)).toEqual([])
  })

  it("inspects as text and metadata", async () => {
    const { run } = await setup({ max_unused_days: 1000 })
    const reply = await run("memory_inspect", {})
    expect(reply.output).toContain("# Long-term memory")
    expect(reply.output).toContain('option "max_unused_days" = 1000 adjusted to 365')
    expect(reply.metadata).toMatchObject({ catalog: { state: { status: "open" } }, options: { max_unused_days: 365 } })
  })

  it("ranks whole entries best first, from the folder and from records not consolidated yet, in the plugin's own index file", async () => {
    const { run, root, memory } = await setup()
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(path.join(root, "MEMORY.md"), "## Task: pool\n- pgbouncer pool size is 40 in production\n\n## Task: other\n- unrelated notes\n")
    const { db } = (await import("../src/store/database.js")).openDatabase(memory.paths.db)
    const jobs = new (await import("../src/store/stage1-jobs.js")).Stage1Jobs(db)
    const claim = jobs.claim({ sessionId: "ses_rec", updatedAt: 1 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed("ses_rec", claim.token, { rawMemory: "- raising the pgbouncer pool fixed the timeouts", rolloutSummary: "Pool work.", slug: "pool", cwd: "/p" })
    db.close()
    const found = await run("memory_search", { queries: ["pgbouncer pool size"], match_mode: "ranked" })
    expect(found.output).toMatch(/^3 entries, best first, for: pgbouncer pool size\n\nMEMORY\.md:1-2  \[score [\d.]+\]\n1: ## Task: pool\n2: - pgbouncer pool size is 40 in production\n\nrecord of ses_rec \(not consolidated yet\), raw_memory lines 1  \[score [\d.]+\]\n1: - raising the pgbouncer pool fixed the timeouts\n\nrecord of ses_rec \(not consolidated yet\), rollout_summary lines 1  \[score [\d.]+\]\n1: Pool work\.$/)
    expect(fs.existsSync(memory.paths.index)).toBe(true)
    expect(fs.readdirSync(root)).toEqual(["MEMORY.md"])
    expect((await run("memory_search", { queries: ["pool"], match_mode: "ranked", context_lines: 2 })).output).toMatch(/^Error \(invalid_argument\): context_lines does not apply/)
  })

  it("ranks in the session's own memory version, from that version's own index file", async () => {
    const { run, memory } = await setup({ version: "v2" })
    const root = memory.pipeline("v2").paths.memoryRoot
    fs.mkdirSync(path.join(root, "rollout_summaries"), { recursive: true })
    fs.writeFileSync(path.join(root, "rollout_summaries", "2026-03-01T10-00-00-aB3x-pool.md"), "session_id: ses_v2\n\nRaised the pgbouncer pool to 40.\n")
    const found = await run("memory_search", { queries: ["pgbouncer pool"], match_mode: "ranked" })
    expect(found.output).toContain("rollout_summaries/2026-03-01T10-00-00-aB3x-pool.md:3")
    expect(path.basename(memory.pipeline("v2").paths.index)).toBe("memory_v2_index.db")
    expect(fs.existsSync(memory.pipeline("v2").paths.index)).toBe(true)
    expect(fs.existsSync(memory.pipeline("v1").paths.index)).toBe(false)
  })

  it("saves a note and finds it by search right away", async () => {
    const { run } = await setup()
    const saved = await run("memory_add_note", { title: "Release day", note: "Releases happen on Tuesdays." })
    expect(saved.output).toMatch(/^Saved the note as extensions\/ad_hoc\/notes\/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-release-day\.md/)
    const found = await run("memory_search", { queries: ["tuesdays"] })
    expect(found.output).toContain("Releases happen on Tuesdays.")
  })
})
