// A full disk, injected (tests run as root, so permissions cannot make a write fail): database
// writes fail with SQLITE_FULL the way SQLite fails them, file writes with ENOSPC after writing
// part of their bytes. Whatever fills, the user's memory loses nothing it had, no job is left
// `running` under its lease, the log names the cause, and once space returns the same process
// learns again without a restart.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HelperPrompt } from "../../src/host.js"
import { TOOLS } from "../../src/constants.js"
import { Memory } from "../../src/memory.js"
import { toV1Tools } from "../../src/v1/tools.js"
import { FullDisk } from "../fakes/full-disk.js"
import { FakeHost, promptText } from "../fakes/host.js"

const HOUR = 3_600_000

let clock: number
let home: string
let host: FakeHost
let disk: FullDisk
let memory: Memory

/** The extractor keeps the words after "fact:"; the consolidator writes them into both files. */
function helper(_id: string, prompt: HelperPrompt) {
  if (prompt.agent === "memorize") {
    const raw = fs.readFileSync(path.join(prompt.directory, "raw_memories.md"), "utf8")
    const facts = raw.split("\n").filter((line) => line.startsWith("- ")).join("\n")
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `# Task group: work\n${facts}\n`)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), `v1\n${facts}\n`)
    return { text: "done" }
  }
  const facts = [...promptText(prompt).matchAll(/fact:(\w+)/g)].map((m) => m[1])
  return { text: "", structured: { rollout_summary: `saw ${facts.join(" ")}`, raw_memory: `---\ndescription: d\n---\n- ${facts.join(" ")}`, rollout_slug: "s" } }
}

const user = (text: string, at: number) => ({ info: { id: `msg_${text}_${at}`, role: "user", time: { created: at } }, parts: [{ type: "text", text }] })
const assistant = (at: number) => ({ info: { id: `msg_reply_${at}`, role: "assistant", time: { created: at } }, parts: [{ type: "text", text: "Noted." }] })
/** A session idle long enough to be learned from, whose one message teaches `fact`. */
const idleSession = (id: string, fact: string) => host.addSession({ id, updatedAt: clock - 7 * HOUR }, [user(`fact:${fact}`, clock - 8 * HOUR), assistant(clock - 8 * HOUR + 1)])

function start(): Promise<void> {
  memory = new Memory({ home }, { host, env: {}, homedir: home, now: () => clock, connect: disk.connect })
  return memory.start()
}

const v1 = () => memory.pipeline("v1")
const db = () => v1().store()!.db
const jobs = () => db().prepare("SELECT kind, job_key, status FROM jobs ORDER BY kind, job_key").all<{ kind: string; job_key: string; status: string }>()
const records = () => db().prepare("SELECT session_id, raw_memory FROM stage1_outputs ORDER BY session_id").all<{ session_id: string; raw_memory: string }>()
const logs = () => host.logs.map((line) => line.message).join("\n")
const summaryFile = () => path.join(memory.paths.memoryRoot, "memory_summary.md")
const summary = () => (fs.existsSync(summaryFile()) ? fs.readFileSync(summaryFile(), "utf8") : undefined)

/** Every file under the memory root and the home, to find what a failed write left behind. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => !name.split(path.sep).includes(".git"))
}
const leftovers = () => filesUnder(home).filter((name) => /\.tmp$|\.tmp\b/.test(path.basename(name)))

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-full-"))
  host = new FakeHost(() => clock)
  host.responder = helper
  disk = new FullDisk().install()
})
afterEach(async () => {
  disk.restore()
  await memory?.dispose()
})

async function cycle(): Promise<void> {
  await v1().phase1!.pass()
  await v1().phase2!.run()
}

describe("a disk that is full when OpenCode starts", () => {
  it("opens the database again once space returns, and learns in the same process", async () => {
    idleSession("ses_a", "alpha")
    disk.full = true
    await start()
    expect(logs()).toMatch(/database or disk is full \(SQLITE_FULL\)|ENOSPC/)
    expect(await v1().phase1!.pass()).toMatchObject({ type: "skipped", reason: "no_store" })
    expect(memory.controls.inspect().text).toContain("reopening: 1 try(s) to open memory failed; the next is at 2026-11-30T12:00:30.000Z or later")

    disk.free()
    // A try is due 30 s after the last one, not at every pass.
    clock += 10_000
    expect(await v1().phase1!.pass()).toMatchObject({ type: "skipped", reason: "no_store" })
    clock += 25_000
    expect(await v1().phase1!.pass()).toMatchObject({ type: "done", results: [{ sessionId: "ses_a", outcome: "stored" }] })
    expect(logs()).toMatch(/memory opened on try \d+; learning resumes/)
    expect(memory.controls.inspect().text).not.toContain("reopening:")
    expect(await v1().phase2!.run()).toMatchObject({ type: "succeeded" })
    expect(summary()).toContain("alpha")
    expect(leftovers()).toEqual([])
  })

  it("tries less often while the disk stays full: 30 s, then twice as long each time, at most 10 minutes", async () => {
    disk.full = true
    await start()
    // Each try fails at its first step, the memory folder's mkdir, and logs it.
    const opens = () => host.logs.filter((line) => line.message.includes("ENOSPC")).length
    const tries: number[] = []
    for (let minute = 0; minute < 40; minute++) {
      const before = opens()
      await v1().phase1!.pass()
      if (opens() > before) tries.push(minute)
      clock += 60_000
    }
    // Due after 30 s, 60 s, 2, 4, 8 and then every 10 minutes (a pass comes once a minute here).
    expect(tries).toEqual([1, 2, 4, 8, 16, 26, 36])
  })
})

describe("a disk that fills while an extraction's answer is in flight", () => {
  beforeEach(async () => {
    idleSession("ses_a", "alpha")
    await start()
    host.responder = (id, prompt) => {
      if (prompt.agent === "memorize-extract") disk.full = true
      return helper(id, prompt)
    }
  })

  it("keeps the answer and records it at the next pass once space returns, without asking the model again", async () => {
    expect(await v1().phase1!.pass()).toMatchObject({ type: "done", results: [{ sessionId: "ses_a", outcome: "unsettled" }] })
    expect(logs()).toContain("could not record the outcome of ses_a (stored): database or disk is full (SQLITE_FULL); this process settles it at its next pass")
    expect(logs()).not.toContain("cannot rollback")
    expect(records()).toEqual([])
    expect(memory.controls.inspect().text).toContain("unsettled: 1 job outcome(s) could not be written")

    disk.free()
    host.responder = helper
    clock += 31_000
    await v1().phase1!.pass()
    expect(logs()).toContain("settled 1 job outcome(s) a failed write had left open (1 recorded, 0 given back)")
    expect(records()).toMatchObject([{ session_id: "ses_a", raw_memory: expect.stringContaining("alpha") }])
    expect(jobs().filter((job) => job.status === "running")).toEqual([])
    expect(host.prompts.filter((p) => p.prompt.agent === "memorize-extract")).toHaveLength(1)
    expect(memory.controls.inspect().text).not.toContain("unsettled:")
  })

  it("keeps trying while the disk stays full, and never leaves the job to its lease", async () => {
    await v1().phase1!.pass()
    for (let pass = 0; pass < 3; pass++) {
      clock += 31_000
      await v1().phase1!.pass()
    }
    expect(logs()).toContain("could not give extraction of ses_a back yet")
    expect(logs()).not.toContain("cannot rollback")
    disk.free()
    host.responder = helper
    clock += 31_000
    await v1().phase1!.pass()
    expect(records()).toMatchObject([{ session_id: "ses_a" }])
    expect(jobs().filter((job) => job.status === "running")).toEqual([])
  })
})

describe("the tools and the checkpoint store on a full disk", () => {
  const tools = () => toV1Tools(memory.tools(), memory.diagnostics)
  const run = async (name: string, args: Record<string, unknown>) => {
    const context = { sessionID: "ses_me", messageID: "msg_1", agent: "build", directory: home, worktree: home, abort: new AbortController().signal, metadata: () => undefined, ask: async () => {} }
    const result = await tools()[name]!.execute(args as never, context as never)
    return typeof result === "string" ? result : result.output
  }

  beforeEach(async () => {
    host.addSession({ id: "ses_me", updatedAt: clock })
    await start()
  })

  it("memory_add_note says the disk is full and leaves no note, whole or partial", async () => {
    const note = { title: "Deploys", note: "Deploys go through the staging branch." }
    // Full before the notes folder exists, and full halfway through writing the note.
    disk.full = true
    expect(await run("memory_add_note", note)).toMatch(/^Error \(io\): could not write the note: ENOSPC: no space left on device/)
    disk.free()
    fs.mkdirSync(path.join(memory.paths.memoryRoot, TOOLS.NOTES_DIR), { recursive: true })
    const before = filesUnder(memory.paths.memoryRoot)
    disk.full = true
    expect(await run("memory_add_note", note)).toMatch(/^Error \(io\): could not write the note: ENOSPC: no space left on device/)
    expect(filesUnder(memory.paths.memoryRoot)).toEqual(before)
    disk.free()
    expect(await run("memory_add_note", { title: "Deploys", note: "Deploys go through the staging branch." })).not.toMatch(/^Error/)
  })

  it("memory_mode says the database is full and changes nothing", async () => {
    disk.full = true
    const reply = await run("memory_mode", { mode: "disabled" })
    expect(reply).toMatch(/database or disk is full \(SQLITE_FULL\)/)
    expect(reply).not.toContain("cannot rollback")
    disk.free()
    expect(await run("memory_mode", { mode: "enabled" })).toContain("stays enabled")
  })

  it("memory_checkpoint says the database is full and keeps the checkpoint as it was", async () => {
    expect(await run("memory_checkpoint", { plan: [{ id: "s1", text: "Ship the release" }] })).not.toMatch(/^Error/)
    const view = memory.checkpoints!.view("ses_me")
    disk.full = true
    const reply = await run("memory_checkpoint", { plan: [{ id: "s2", text: "Something else" }] })
    expect(reply).toMatch(/database or disk is full \(SQLITE_FULL\)/)
    expect(memory.checkpoints!.view("ses_me")).toBe(view)
  })

  it("memory_reset says the database is full and erases nothing, and works once space returns", async () => {
    const note = await run("memory_add_note", { title: "Deploys", note: "Deploys go through the staging branch." })
    expect(note).not.toMatch(/^Error/)
    const files = filesUnder(memory.paths.memoryRoot)
    disk.full = true
    const reply = await run("memory_reset", { confirm: true })
    expect(reply).toMatch(/database or disk is full \(SQLITE_FULL\)|ENOSPC/)
    expect(reply).not.toContain("cannot rollback")
    expect(filesUnder(memory.paths.memoryRoot)).toEqual(files)
    disk.free()
    expect(await run("memory_reset", { confirm: true })).not.toMatch(/^Error/)
    expect(filesUnder(memory.paths.memoryRoot).some((name) => name.includes("deploys"))).toBe(false)
  })

  it("a cited reply is still stripped of its citation when usage cannot be counted", () => {
    const block = "<memory-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<session_ids>\nses_src\n</session_ids>\n</memory-citation>"
    disk.full = true
    expect(memory.citations.completeText("ses_me", "prt_1", `Done.\n\n${block}`)).toBe("Done.")
    expect(logs()).toMatch(/citations: .*database or disk is full \(SQLITE_FULL\)/)
  })

  it("a message the checkpoint cannot record fails with the cause, and the next one is recorded", () => {
    disk.full = true
    expect(() => memory.onUserMessage("ses_me", "msg_1", ["Fix the flaky test"])).toThrow(/database or disk is full/)
    disk.free()
    memory.onUserMessage("ses_me", "msg_2", ["Fix the flaky test"])
    expect(memory.checkpoints!.view("ses_me")).toContain("Fix the flaky test")
  })
})

describe("a disk that fills at any write of a learning cycle", () => {
  it("keeps the memory the user sees whole, leaves no job running, names the cause, and learns once space returns", async () => {
    // The home a user has: one session learned and consolidated.
    idleSession("ses_a", "alpha")
    await start()
    await cycle()
    await memory.dispose()
    const template = home
    const learned = clock
    const before = { summary: fs.readFileSync(path.join(template, "memories", "memory_summary.md"), "utf8"), memory: fs.readFileSync(path.join(template, "memories", "MEMORY.md"), "utf8") }
    expect(before.summary).toContain("alpha")

    /** A second session is learned in that home (a copy of it), the disk filling at write `fillAt`. */
    const learnSecond = async (fillAt?: number) => {
      disk.restore()
      disk = new FullDisk().install()
      home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-full-"))
      fs.cpSync(template, home, { recursive: true })
      clock = learned + 7 * HOUR
      host = new FakeHost(() => clock)
      host.responder = helper
      host.addSession({ id: "ses_a", updatedAt: learned - 7 * HOUR }, [user("fact:alpha", learned - 8 * HOUR), assistant(learned - 8 * HOUR + 1)])
      idleSession("ses_b", "beta")
      if (fillAt !== undefined) disk.fillAt(fillAt)
      await start()
      await cycle()
    }

    // Where such a cycle writes, counted on a disk that never fills: the sweep fills once at each site.
    await learnSecond()
    expect(summary()).toMatch(/alpha[\s\S]*beta/)
    const sites = disk.firstAtEachSite()
    await memory.dispose()
    expect(sites.size).toBeGreaterThan(15)

    const problems: string[] = []
    for (const [site, at] of sites) {
      await learnSecond(at)
      const seen = (problem: string) => problems.push(`full at write ${at} (${site}): ${problem}`)
      if (!disk.failures) seen("no write failed")
      const shown = { summary: summary(), memory: fs.readFileSync(path.join(memory.paths.memoryRoot, "MEMORY.md"), "utf8") }
      // Either the memory as it was, or the whole new one: never a file cut short.
      const whole = (now: string | undefined, old: string) => now === old || (now !== undefined && now.includes("beta") && now.endsWith("\n") && now.includes("alpha"))
      if (!whole(shown.summary, before.summary)) seen(`memory_summary.md is ${JSON.stringify(shown.summary)}`)
      if (!whole(shown.memory, before.memory)) seen(`MEMORY.md is ${JSON.stringify(shown.memory)}`)
      if (logs().includes("cannot rollback")) seen("a failed ROLLBACK hid the cause")
      if (!/SQLITE_FULL|ENOSPC/.test(logs())) seen(`no log line names the cause:\n${logs()}`)

      disk.free()
      for (let round = 0; round < 4 && !(summary()?.includes("beta") && !jobs().some((job) => job.status === "running" || job.status === "pending")); round++) {
        clock += 2 * HOUR
        await cycle()
      }
      if (!summary()?.includes("beta") || !summary()?.includes("alpha")) seen(`once space returned, memory_summary.md is ${JSON.stringify(summary())}`)
      const open = jobs().filter((job) => job.status === "running")
      if (open.length) seen(`jobs left running: ${JSON.stringify(open)}`)
      if (leftovers().length) seen(`left behind: ${leftovers().join(", ")}`)
      await memory.dispose()
    }
    expect(problems).toEqual([])
  }, 120_000)
})
