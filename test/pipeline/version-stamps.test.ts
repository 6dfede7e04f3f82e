// Which version a session reads, and what spans both versions: the first real use freezes a
// session's version across restarts, status reads only peek, notes and tools follow the stamp,
// and reset, deletion and readiness cover every version.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Memory } from "../../src/memory.js"
import { FakeHost } from "../fakes/host.js"

const V2_SUMMARY = ["v1", "## User Profile", "V2-RECAP", "## User preferences", "- short answers", "## General Tips", "- none", "## What's in Memory", "- nothing yet"].join("\n")
const V2_START = "Below is a recap of this user's earlier OpenCode sessions"
const V1_START = "You have a long-term memory built from earlier OpenCode sessions"

let home: string
let clock: number
const memories: Memory[] = []

async function start(options: Record<string, unknown> = {}): Promise<Memory> {
  const memory = new Memory({ home, ...options }, { host: new FakeHost(() => clock), env: {}, homedir: home, now: () => clock })
  memories.push(memory)
  await memory.start()
  return memory
}

const call = (sessionID: string, system: string[] = ["You are OpenCode."]) => ({ sessionID, system })
const stamps = (memory: Memory) => memory.store()!.db.prepare("SELECT session_id, version FROM memory_session_versions ORDER BY session_id").all()

function seedOutput(memory: Memory, version: "v1" | "v2", sessionId: string): void {
  memory
    .pipeline(version)
    .store()!
    .db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, 1, '', 'summary', 1)")
    .run({ id: sessionId })
}

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-stamps-"))
  for (const [folder, text] of [["memories", "v1\nV1-FACT\n"], ["memories_v2", `${V2_SUMMARY}\n`]] as const) {
    fs.mkdirSync(path.join(home, folder), { recursive: true })
    fs.writeFileSync(path.join(home, folder, "memory_summary.md"), text)
  }
})
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

describe("version stamps", () => {
  it("freeze a session's version at its first injection, and keep it across a restart with another default", async () => {
    const first = await start({ version: "v2", dual_write: true })
    // A title-agent call and a peek are not a real use: nothing is stamped.
    expect(first.systemBlock(call("ses_old", ["You are a title generator. ..."]))).toBeUndefined()
    expect(first.controls.inspect().text).toContain("reading: 0 stamped v1, 0 stamped v2")
    expect(first.systemBlock(call("ses_old"))).toContain(V2_START)
    expect(stamps(first)).toEqual([{ session_id: "ses_old", version: "v2" }])
    await first.dispose()

    const second = await start({ version: "v1" })
    const resumed = second.systemBlock(call("ses_old"))!
    expect(resumed).toContain(V2_START)
    expect(resumed).toContain("V2-RECAP")
    const fresh = second.systemBlock(call("ses_new"))!
    expect(fresh).toContain(V1_START)
    expect(fresh).toContain("V1-FACT")
    // Same session, same bytes on every turn.
    expect(second.systemBlock(call("ses_old"))).toBe(resumed)
    expect(stamps(second)).toEqual([
      { session_id: "ses_new", version: "v1" },
      { session_id: "ses_old", version: "v2" },
    ])
  })

  it("scope the memory tools and notes to the session's version; dual-write notes reach every writer", async () => {
    const memory = await start({ version: "v2" })
    memory.store()!.stampVersion("ses_v1", "v1")
    expect((await memory.controls.backendFor("ses_v1").read({ path: "memory_summary.md" })).content).toContain("V1-FACT")
    expect((await memory.controls.backendFor("ses_any").read({ path: "memory_summary.md" })).content).toContain("V2-RECAP")
    const note = memory.controls.addNote({ title: "Fridays", note: "Never release on Fridays.", sessionId: "ses_v1" })
    expect(fs.existsSync(path.join(home, "memories", note.path))).toBe(true)
    expect(fs.existsSync(path.join(home, "memories_v2", note.path))).toBe(false)

    const dual = await start({ version: "v1", dual_write: true, home: fs.mkdtempSync(path.join(os.tmpdir(), "ocm-notes-")) })
    const both = dual.controls.addNote({ title: "Tuesdays", note: "Release on Tuesdays.", sessionId: "ses_x" })
    expect(fs.existsSync(path.join(dual.paths.home, "memories", both.path))).toBe(true)
    expect(fs.existsSync(path.join(dual.paths.home, "memories_v2", both.path))).toBe(true)
  })

  it("count a citation toward the citing session's version only", async () => {
    const memory = await start({ dual_write: true })
    seedOutput(memory, "v1", "ses_src")
    seedOutput(memory, "v2", "ses_src")
    memory.store()!.stampVersion("ses_reader", "v2")
    expect(memory.controls.recordCitation("prt_1", "ses_reader", ["ses_src"], [])).toBe(true)
    expect(memory.controls.recordCitation("prt_1", "ses_reader", ["ses_src"], [])).toBe(false)
    const usage = (version: "v1" | "v2") => memory.pipeline(version).store()!.db.prepare("SELECT usage_count AS n FROM stage1_outputs").get()
    expect(usage("v2")).toEqual({ n: 1 })
    expect(usage("v1")).toEqual({ n: 0 })
  })
})

describe("across versions", () => {
  it("a reset clears both workspaces, both databases and readiness, keeps stamps and modes, and leaves the handles usable", async () => {
    const memory = await start({ dual_write: true })
    seedOutput(memory, "v1", "ses_a")
    seedOutput(memory, "v2", "ses_a")
    memory.pipeline("v2").store()!.recordConsolidated(25)
    memory.store()!.stampVersion("ses_a", "v2")
    await memory.controls.setMode("ses_b", "disabled", { checked: true })
    expect(memory.controls.recordCitation("prt_1", "ses_a", ["ses_a"], [{ path: "memory_summary.md", start: 1, end: 2 }])).toBe(true)
    const report = await memory.controls.reset()
    expect(report).toMatchObject({ type: "reset", outputs: 2 })
    for (const version of ["v1", "v2"] as const) {
      expect(memory.pipeline(version).store()!.counts().outputs).toBe(0)
      expect(fs.readdirSync(memory.pipeline(version).paths.memoryRoot)).toEqual([])
    }
    expect(memory.pipeline("v2").store()!.maxConsolidated()).toBe(0)
    expect(memory.store()!.counts()).toMatchObject({ citedParts: 0, sessionsByVersion: { v2: 1 }, sessionsByMode: { disabled: 1 } })
    // The databases are still open and writable.
    seedOutput(memory, "v2", "ses_c")
    expect(memory.pipeline("v2").store()!.counts().outputs).toBe(1)
  })

  it("a reset is refused, changing nothing, while either version consolidates", async () => {
    const memory = await start({ dual_write: true })
    seedOutput(memory, "v1", "ses_a")
    memory
      .pipeline("v2")
      .store()!
      .db.prepare("INSERT INTO jobs (kind, job_key, status, lease_until, retry_remaining) VALUES ('memory_consolidate_global', 'global', 'running', $until, 3)")
      .run({ until: clock + 60_000 })
    const report = await memory.controls.reset()
    expect(report).toMatchObject({ type: "refused", reason: expect.stringContaining("a v2 consolidation is running") })
    expect(memory.pipeline("v1").store()!.counts().outputs).toBe(1)
    expect(fs.existsSync(path.join(home, "memories", "memory_summary.md"))).toBe(true)
  })

  it("deleting a session removes its outputs from both versions", async () => {
    const memory = await start({ version: "v2" })
    // V1 does not learn here, but what it learned before is still forgotten.
    seedOutput(memory, "v1", "ses_a")
    seedOutput(memory, "v2", "ses_a")
    memory.onSessionDeleted("ses_a")
    expect(memory.pipeline("v1").store()!.counts().outputs).toBe(0)
    expect(memory.pipeline("v2").store()!.counts().outputs).toBe(0)
  })

  it("V2 is ready once one consolidation consumed the threshold of sessions and its summary is valid", async () => {
    const memory = await start({ dual_write: true, v2_ready_sessions: 3 })
    const readiness = () => (memory.controls.inspect().data.versions as Array<{ version: string; readiness?: { ready: boolean } }>).find((v) => v.version === "v2")!.readiness
    memory.pipeline("v2").store()!.recordConsolidated(2)
    expect(readiness()).toMatchObject({ ready: false, consolidatedSessions: 2 })
    memory.pipeline("v2").store()!.recordConsolidated(3)
    memory.pipeline("v2").store()!.recordConsolidated(1)
    expect(readiness()).toMatchObject({ ready: true, consolidatedSessions: 3, threshold: 3 })
    fs.writeFileSync(path.join(home, "memories_v2", "memory_summary.md"), "not a v2 summary\n")
    expect(readiness()).toMatchObject({ ready: false, summary: { valid: false } })
    expect(memory.controls.inspect().text).toContain("readiness: not ready (3 of 3 sessions in one consolidation; summary invalid:")
  })
})
