// Both writers in one process, against one fake host: every row, file, job and helper session
// stays in its own version's namespace, and only the rate-limit breaker is shared.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HelperPrompt, HelperReply } from "../../src/host.js"
import { Memory } from "../../src/memory.js"
import { openDatabase } from "../../src/store/database.js"
import { V2_MIGRATIONS } from "../../src/store/migrations.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { FakeHost, promptText } from "../fakes/host.js"

const HOUR = 3_600_000
const V2_SUMMARY = ["v1", "## User Profile", "A developer.", "## User preferences", "- short answers", "## General Tips", "- run make ship", "## What's in Memory", "### acme", "#### 2026-11-30", "- rollout_summaries/x.md — deploys; session=ses_a"].join("\n")

let clock: number
let home: string
let host: FakeHost
const memories: Memory[] = []
const opened: SqlDatabase[] = []

function conversation(fact: string): unknown[] {
  return [
    { info: { role: "user" }, parts: [{ type: "text", text: `Remember: ${fact}` }] },
    { info: { role: "assistant" }, parts: [{ type: "text", text: "Noted." }] },
  ]
}

/** The scripted helpers: each answers in its own version's format, or writes its own version's files. */
function respond(_id: string, prompt: HelperPrompt): HelperReply {
  const v2 = path.basename(prompt.directory) === "memories_v2"
  if (prompt.agent === "memorize-extract") {
    const asksRaw = Object.hasOwn((prompt.schema as { properties: object }).properties, "raw_memory")
    const fact = /Remember: (\S+)/.exec(promptText(prompt))?.[1] ?? "nothing"
    return asksRaw
      ? { text: "", structured: { rollout_summary: `V1 summary: ${fact}`, raw_memory: `- v1 fact ${fact}`, rollout_slug: fact } }
      : { text: "", structured: { rollout_summary: `V2 summary: ${fact}`, rollout_slug: fact } }
  }
  if (v2) fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), `${V2_SUMMARY}\n`)
  else {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# Task group: deploys\n- run make ship\n")
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n## User profile\nA developer.\n")
  }
  return { text: "done" }
}

async function start(options: Record<string, unknown>): Promise<Memory> {
  const memory = new Memory({ home, ...options }, { host, env: {}, homedir: home, now: () => clock })
  memories.push(memory)
  await memory.start()
  return memory
}

function db(file: string): SqlDatabase {
  const { db } = openDatabase(path.join(home, file), file === "memory_v2.db" ? { migrations: V2_MIGRATIONS } : {})
  opened.push(db)
  return db
}

const tables = (database: SqlDatabase) => database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string }>().map((row) => row.name)
const outputs = (database: SqlDatabase) =>
  database.prepare("SELECT session_id, raw_memory, rollout_summary FROM stage1_outputs ORDER BY session_id").all<{ session_id: string; raw_memory: string; rollout_summary: string }>()
const folder = (name: string) => fs.readdirSync(path.join(home, name)).filter((entry) => !entry.startsWith(".")).sort()
const summaries = (name: string) => {
  const dir = path.join(home, name, "rollout_summaries")
  return fs.readdirSync(dir).map((file) => fs.readFileSync(path.join(dir, file), "utf8"))
}

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-dual-"))
  host = new FakeHost(() => clock)
  host.responder = respond
  host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR }, conversation("alpha"))
  host.addSession({ id: "ses_b", updatedAt: clock - 8 * HOUR }, conversation("beta"))
})
afterEach(async () => {
  for (const database of opened.splice(0)) database.close()
  for (const memory of memories.splice(0)) await memory.dispose()
})

describe("dual-write", () => {
  it("runs both writers with no row, file, job or helper session crossing namespaces", async () => {
    const memory = await start({ dual_write: true })
    const [v1, v2] = [memory.pipeline("v1"), memory.pipeline("v2")]
    expect(memory.writers().map((p) => p.version)).toEqual(["v1", "v2"])
    expect(await v1.phase1!.pass()).toMatchObject({ type: "done", claimed: 2 })
    expect(await v2.phase1!.pass()).toMatchObject({ type: "done", claimed: 2 })
    expect((await v1.phase2!.run()).type).toBe("succeeded")
    expect((await v2.phase2!.run()).type).toBe("succeeded")

    // Rows: each database holds its own version's records, and only its own tables.
    const catalog = db("memory.db")
    const second = db("memory_v2.db")
    expect(outputs(catalog)).toEqual([
      { session_id: "ses_a", raw_memory: "- v1 fact alpha", rollout_summary: "V1 summary: alpha" },
      { session_id: "ses_b", raw_memory: "- v1 fact beta", rollout_summary: "V1 summary: beta" },
    ])
    expect(outputs(second)).toEqual([
      { session_id: "ses_a", raw_memory: "", rollout_summary: "V2 summary: alpha" },
      { session_id: "ses_b", raw_memory: "", rollout_summary: "V2 summary: beta" },
    ])
    expect(tables(second)).toEqual(["consolidated_sessions", "consolidation_progress", "forget_queue", "jobs", "stage1_outputs"])
    expect(tables(catalog)).not.toContain("consolidation_progress")

    // Jobs: both versions have their own stage-1 jobs and their own global consolidation row.
    const jobs = (database: SqlDatabase) => database.prepare("SELECT kind, job_key, status FROM jobs ORDER BY kind, job_key").all()
    const expected = [
      { kind: "memory_consolidate_global", job_key: "global", status: "done" },
      { kind: "memory_stage1", job_key: "ses_a", status: "done" },
      { kind: "memory_stage1", job_key: "ses_b", status: "done" },
    ]
    expect(jobs(catalog)).toEqual(expected)
    expect(jobs(second)).toEqual(expected)
    expect(second.prepare("SELECT max_session_count AS n FROM consolidation_progress").get()).toEqual({ n: 2 })

    // Files: V1's workspace has V1's artifacts and inputs; V2's only its summary and summaries.
    expect(folder("memories")).toEqual(["MEMORY.md", "extensions", "memory_summary.md", "raw_memories.md", "rollout_summaries"])
    expect(folder("memories_v2")).toEqual(["extensions", "memory_summary.md", "rollout_summaries"])
    expect(summaries("memories").join("\n")).not.toContain("V2 summary")
    expect(summaries("memories_v2").join("\n")).not.toContain("V1 summary")
    expect(summaries("memories_v2")).toHaveLength(2)

    // Helper sessions: each ran in its own version's folder, sandboxed to that folder alone.
    const roots = { v1: path.join(home, "memories"), v2: path.join(home, "memories_v2") }
    for (const { input } of host.created) {
      const own = input.directory === roots.v1 ? roots.v1 : roots.v2
      const other = own === roots.v1 ? roots.v2 : roots.v1
      expect([roots.v1, roots.v2]).toContain(input.directory)
      // Extraction helpers name no folder at all (deny-all); consolidators only their own.
      const rules = JSON.stringify(input.permission)
      expect(rules).not.toContain(`"${other}"`)
      expect(rules).not.toContain(`"${other}/`)
    }
    const consolidators = host.created.filter((c) => JSON.stringify(c.input.permission).includes(home))
    expect(consolidators.map((c) => c.input.directory).sort()).toEqual([roots.v1, roots.v2])
    for (const c of consolidators) expect(JSON.stringify(c.input.permission)).toContain(`"${c.input.directory}`)
    expect(host.created.filter((c) => c.input.directory === roots.v2)).toHaveLength(3)
    // V2 sends its evidence as separate text parts; V1 one transcript.
    const extractions = host.prompts.filter((p) => p.prompt.agent === "memorize-extract")
    expect(extractions.filter((p) => Array.isArray(p.prompt.text))).toHaveLength(2)
    expect(extractions.filter((p) => typeof p.prompt.text === "string")).toHaveLength(2)
    // Log lines say whose they are.
    const logged = host.logs.map((log) => log.message)
    expect(logged).toContain("v1/phase1: claimed 2 of 2 eligible session(s) for extraction")
    expect(logged).toContain("v2/phase1: claimed 2 of 2 eligible session(s) for extraction")
    expect(logged.filter((line) => line.startsWith("phase1:"))).toEqual([])
  })

  it("shares one rate-limit breaker: a model that hit a limit in one version rests in the other", async () => {
    const memory = await start({ dual_write: true, extract_model: "acme/small" })
    host.responder = () => ({ text: "", error: { name: "APIError", message: "rate limit reached", status: 429 } })
    expect(await memory.pipeline("v1").phase1!.pass()).toMatchObject({ type: "done", claimed: 2 })
    expect(await memory.pipeline("v2").phase1!.pass()).toEqual({ type: "skipped", reason: "rate_limited" })
  })

  it("writes only the selected version without dual_write, and creates nothing for the other", async () => {
    const memory = await start({ version: "v2" })
    expect(memory.writers().map((p) => p.version)).toEqual(["v2"])
    expect(memory.pipeline("v1").phase1).toBeUndefined()
    expect(await memory.pipeline("v2").phase1!.pass()).toMatchObject({ claimed: 2 })
    // One writer: its lines need no version.
    expect(host.logs.map((log) => log.message)).toContain("phase1: claimed 2 of 2 eligible session(s) for extraction")
    expect(fs.existsSync(path.join(home, "memory_v2.db"))).toBe(true)
    expect(fs.existsSync(path.join(home, "memories"))).toBe(false)
    expect(outputs(db("memory.db"))).toEqual([])
    const v1Only = await start({ version: "v1", home: fs.mkdtempSync(path.join(os.tmpdir(), "ocm-v1only-")) })
    expect(fs.existsSync(path.join(v1Only.paths.home, "memory_v2.db"))).toBe(false)
    expect(v1Only.controls.inspect().text).toContain("memory_v2.db: not created (this version never learned)")
  })
})
