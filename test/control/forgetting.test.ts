// Forgetting as an instance does it: one path for every reason (deleted, kept out, forgotten on
// request), the sweep that enforces "kept out" on whatever the databases hold, and the
// reconciliation that forgets what the host no longer has, only on answers it can trust.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { RECONCILE, Reconciler } from "../../src/control/forgetting.js"
import { JOBS } from "../../src/constants.js"
import type { HelperPrompt } from "../../src/host.js"
import { Memory } from "../../src/memory.js"
import { openSqlite } from "../../src/store/sqlite.js"
import { FakeHost } from "../fakes/host.js"

const HOUR = 3_600_000

/** The fake host, whose look-ups can also throw for some sessions (the server went away mid-pass) or call every session gone (a broken route). */
class LookupHost extends FakeHost {
  readonly failOn = new Set<string>()
  callsAllMissing = false

  override async sessionExists(sessionId: string, signal: AbortSignal): Promise<boolean> {
    const exists = await super.sessionExists(sessionId, signal)
    if (this.failOn.has(sessionId)) throw new Error("socket hang up")
    return exists && !this.callsAllMissing
  }
}

let clock: number
let home: string
let host: LookupHost
const memories: Memory[] = []

async function start(at: string = home, options: { started?: boolean } = {}): Promise<Memory> {
  const memory = new Memory({ home: at }, { host, env: {}, homedir: at, now: () => clock })
  memories.push(memory)
  if (options.started !== false) await memory.start()
  return memory
}

/** A consolidator that writes exactly the raw memories it was given: the summary shows what its inputs held. */
function consolidator(_id: string, prompt: HelperPrompt) {
  const raw = fs.readFileSync(path.join(prompt.directory, "raw_memories.md"), "utf8")
  const facts = raw.split("\n").filter((line) => line.startsWith("- ")).join("\n")
  fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `# Task group: work\n${facts}\n`)
  fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), `v1\n${facts}\n`)
  return { text: "done" }
}

interface Seed {
  fact?: string
  summary?: string
  slug?: string
  host?: string
}

/** A record of `sessionId` in V1, as phase 1 (or an import, with another `host`) would leave it. */
function seedRecord(memory: Memory, sessionId: string, seed: Seed = {}): void {
  memory
    .pipeline("v1")
    .store()!
    .db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at, host) VALUES ($id, $t, $raw, $summary, $slug, '/p', $t, $host)",
    )
    .run({ id: sessionId, t: clock - 7 * HOUR, raw: seed.fact ?? `- fact of ${sessionId}`, summary: seed.summary ?? `about ${sessionId}`, slug: seed.slug ?? null, host: seed.host ?? null })
  memory
    .pipeline("v1")
    .store()!
    .db.prepare("INSERT INTO jobs (kind, job_key, status, retry_remaining, last_success_watermark) VALUES ($kind, $id, 'done', 3, $t)")
    .run({ kind: JOBS.STAGE1, id: sessionId, t: clock - 7 * HOUR })
}

/** Records of sessions the host has, then a real consolidation: the folder now holds what they taught. */
async function consolidated(memory: Memory, seeds: Record<string, Seed>): Promise<void> {
  for (const [id, seed] of Object.entries(seeds)) {
    host.addSession({ id, updatedAt: clock - 7 * HOUR })
    seedRecord(memory, id, seed)
  }
  expect((await memory.pipeline("v1").phase2!.run()).type).toBe("succeeded")
}

const records = (memory: Memory) =>
  memory
    .pipeline("v1")
    .store()!
    .db.prepare("SELECT session_id FROM stage1_outputs ORDER BY session_id")
    .all<{ session_id: string }>()
    .map((row) => row.session_id)
const jobsOf = (memory: Memory, sessionId: string) =>
  memory.pipeline("v1").store()!.db.prepare("SELECT kind FROM jobs WHERE job_key = $id").all<{ kind: string }>({ id: sessionId })
const queue = (memory: Memory) => memory.pipeline("v1").store()!.forgetQueue()
const summary = () => fs.readFileSync(path.join(home, "memories", "memory_summary.md"), "utf8")

/** A reconciler over the instance's databases, as the instance builds its own. */
function reconcilerOf(memory: Memory): Reconciler {
  return new Reconciler({
    host,
    forgetting: memory.forgetting,
    known: () => new Set([...memory.pipeline("v1").knownSessions(), ...(memory.catalog.checkpoints?.sessionIds() ?? [])]),
    diagnostics: memory.diagnostics,
    now: () => clock,
  })
}

async function reconcile(reconciler: Reconciler) {
  const signal = new AbortController().signal
  return reconciler.reconcile(await host.listRootSessions({ signal }), signal)
}

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-forget-"))
  host = new LookupHost(() => clock)
  host.responder = consolidator
  // A session the host lists: the look-up is checked against it before any answer counts.
  host.addSession({ id: "ses_live", updatedAt: clock - 7 * HOUR })
})
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

describe("reconciliation with the host's sessions", () => {
  it("forgets a session that a complete listing lacks and the host says is gone: records, jobs, checkpoint, and the reviews that may quote it", async () => {
    const memory = await start()
    await consolidated(memory, { ses_gone: { fact: "- deploy with make ship" } })
    seedRecord(memory, "ses_live")
    memory.onUserMessage("ses_gone", "msg_1", ["ship the release"])
    expect(memory.catalog.reviews!.list()).toHaveLength(1)
    // Deleted in OpenCode while no process with the plugin saw the event.
    host.sessions.delete("ses_gone")

    const report = await reconcile(reconcilerOf(memory))
    expect(report).toMatchObject({ outcome: "done", missing: 1, forgotten: ["ses_gone"], present: 0 })
    expect(records(memory)).toEqual(["ses_live"])
    expect(jobsOf(memory, "ses_gone")).toEqual([])
    expect(memory.catalog.checkpoints!.get("ses_gone")).toBeUndefined()
    // It was consolidated: the folder still holds it until the next consolidation removes it.
    expect(queue(memory)).toEqual(["ses_gone"])
    expect(memory.catalog.reviews!.list()).toEqual([])
  })

  it("keeps a session that exists but is not listed, and does not look it up again for PRESENT_TTL_MS", async () => {
    const memory = await start()
    // Archived, a paging gap, and a child session (children have checkpoints, never listings).
    host.addSession({ id: "ses_archived", archived: true })
    host.unlisted.add("ses_archived")
    host.addSession({ id: "ses_gap" })
    host.unlisted.add("ses_gap")
    host.addSession({ id: "ses_child", parentId: "ses_live" })
    seedRecord(memory, "ses_archived")
    seedRecord(memory, "ses_gap")
    memory.onUserMessage("ses_child", "msg_1", ["a subtask"])
    const reconciler = reconcilerOf(memory)

    expect(await reconcile(reconciler)).toMatchObject({ outcome: "done", missing: 3, forgotten: [], present: 3 })
    expect(records(memory)).toEqual(["ses_archived", "ses_gap"])
    expect(memory.catalog.checkpoints!.get("ses_child")).toBeDefined()
    expect(host.lookups.filter((id) => id !== "ses_live").sort()).toEqual(["ses_archived", "ses_child", "ses_gap"])

    host.lookups.length = 0
    clock += RECONCILE.PRESENT_TTL_MS - 1
    expect(await reconcile(reconciler)).toMatchObject({ outcome: "done", missing: 0 })
    expect(host.lookups).toEqual([])

    clock += 1
    expect(await reconcile(reconciler)).toMatchObject({ outcome: "done", missing: 3, present: 3 })
    expect(host.lookups.filter((id) => id !== "ses_live").sort()).toEqual(["ses_archived", "ses_child", "ses_gap"])
  })

  it("forgets nothing and looks nothing up on a partial listing", async () => {
    const memory = await start()
    seedRecord(memory, "ses_gone")
    host.partialListing = true
    expect(await reconcile(reconcilerOf(memory))).toMatchObject({ outcome: "partial_listing", forgotten: [] })
    expect(host.lookups).toEqual([])
    expect(records(memory)).toEqual(["ses_gone"])
  })

  it("forgets nothing when the host cannot be asked", async () => {
    const memory = await start()
    seedRecord(memory, "ses_gone")
    host.failLookup = new Error("connection refused")
    expect(await reconcile(reconcilerOf(memory))).toMatchObject({ outcome: "lookup_failed", forgotten: [] })
    // The check of the look-up itself failed: no session was asked about.
    expect(host.lookups).toEqual(["ses_live"])
    expect(records(memory)).toEqual(["ses_gone"])
    expect(memory.diagnostics.recent().some((d) => d.source === "reconcile" && d.level === "warn")).toBe(true)
  })

  it("stops the pass at a failing look-up, forgetting only what the host answered for", async () => {
    const memory = await start()
    const gone = Array.from({ length: 12 }, (_, i) => `ses_gone${String(i).padStart(2, "0")}`)
    for (const id of gone) seedRecord(memory, id)
    host.failOn.add("ses_gone00")

    const report = await reconcile(reconcilerOf(memory))
    expect(report.outcome).toBe("lookup_failed")
    const asked = host.lookups.filter((id) => id !== "ses_live")
    // The look-ups already in flight finish; none is started after the failure.
    expect(asked.length).toBeLessThanOrEqual(RECONCILE.CONCURRENCY)
    expect(records(memory)).toContain("ses_gone00")
    expect(report.forgotten.every((id) => asked.includes(id))).toBe(true)
    expect(records(memory)).toEqual(gone.filter((id) => !report.forgotten.includes(id)))
  })

  it("forgets nothing on the word of a look-up that calls a listed session missing", async () => {
    const memory = await start()
    seedRecord(memory, "ses_gone")
    host.callsAllMissing = true
    expect(await reconcile(reconcilerOf(memory))).toMatchObject({ outcome: "lookup_untrusted", missing: 1, forgotten: [] })
    expect(host.lookups).toEqual(["ses_live"])
    expect(records(memory)).toEqual(["ses_gone"])
  })

  it("forgets nothing on an empty listing, which has no listed session to check the look-up with", async () => {
    const memory = await start()
    seedRecord(memory, "ses_gone")
    host.sessions.delete("ses_live")
    expect(await reconcile(reconcilerOf(memory))).toMatchObject({ outcome: "lookup_untrusted", forgotten: [] })
    expect(host.lookups).toEqual([])
    expect(records(memory)).toEqual(["ses_gone"])
  })

  it("looks up at most LOOKUPS_PER_PASS sessions per pass, and the rest at the next", async () => {
    const memory = await start()
    const gone = Array.from({ length: RECONCILE.LOOKUPS_PER_PASS + 5 }, (_, i) => `ses_gone${String(i).padStart(2, "0")}`)
    for (const id of gone) seedRecord(memory, id)
    const reconciler = reconcilerOf(memory)

    const first = await reconcile(reconciler)
    expect(first).toMatchObject({ outcome: "done", missing: gone.length })
    expect(first.forgotten).toHaveLength(RECONCILE.LOOKUPS_PER_PASS)
    expect(host.lookups.filter((id) => id !== "ses_live")).toHaveLength(RECONCILE.LOOKUPS_PER_PASS)
    expect(records(memory)).toHaveLength(5)

    expect((await reconcile(reconciler)).forgotten).toHaveLength(5)
    expect(records(memory)).toEqual([])
  })

  it("never judges records that came from another host", async () => {
    const memory = await start()
    // Brought in by an import from OpenCode 2, whose sessions this host cannot look up.
    seedRecord(memory, "ses_other", { host: "opencode2" })
    seedRecord(memory, "ses_gone", { host: "opencode1" })
    const report = await reconcile(reconcilerOf(memory))
    expect(report).toMatchObject({ outcome: "done", missing: 1, forgotten: ["ses_gone"] })
    expect(host.lookups).not.toContain("ses_other")
    expect(records(memory)).toEqual(["ses_other"])
  })
})

describe("the sweep of sessions kept out", () => {
  it("forgets the records of sessions whose mode another process set, dropping a disabled one's checkpoint and keeping a polluted one's", async () => {
    const memory = await start()
    for (const id of ["ses_disabled", "ses_polluted", "ses_enabled"]) {
      seedRecord(memory, id)
      memory.onUserMessage(id, "msg_1", [`the task of ${id}`])
    }
    // Set in memory.db directly, as the command line in another process or an import would.
    memory.store()!.setMode("ses_disabled", "disabled")
    memory.store()!.setMode("ses_polluted", "polluted")
    expect(records(memory)).toHaveLength(3)

    expect(memory.forgetting.sweep()).toBe(2)
    expect(records(memory)).toEqual(["ses_enabled"])
    expect(jobsOf(memory, "ses_disabled")).toEqual([])
    expect(memory.catalog.checkpoints!.get("ses_disabled")).toBeUndefined()
    expect(memory.catalog.checkpoints!.get("ses_polluted")).toBeDefined()
    expect(memory.catalog.checkpoints!.get("ses_enabled")).toBeDefined()
    // Kept out stays kept out; there is nothing left to forget.
    expect(memory.store()!.mode("ses_disabled")).toBe("disabled")
    expect(memory.forgetting.sweep()).toBe(0)
  })
})

describe("a deletion seen by a process that never started", () => {
  it("forgets the session in the home's memory.db at once, and queues it when it was consolidated", async () => {
    const first = await start()
    await consolidated(first, { ses_a: {} })
    seedRecord(first, "ses_b")
    await first.dispose()

    // A short-lived OpenCode process (`opencode session delete`): the event comes before start-up.
    const cli = await start(home, { started: false })
    cli.onSessionDeleted("ses_a")
    cli.onSessionDeleted("ses_b")
    await cli.dispose()

    const db = openSqlite(path.join(home, "memory.db"))
    try {
      expect(db.prepare("SELECT session_id FROM stage1_outputs").all()).toEqual([])
      expect(db.prepare("SELECT session_id FROM forget_queue").all()).toEqual([{ session_id: "ses_a" }])
    } finally {
      db.close()
    }
  })

  it("creates nothing in a home that holds no memory.db", async () => {
    const fresh = path.join(home, "never-used")
    const memory = await start(fresh, { started: false })
    memory.onSessionDeleted("ses_a")
    await memory.dispose()
    expect(fs.existsSync(fresh)).toBe(false)
  })
})

describe("the controls of forgetting", () => {
  it("setMode disabled forgets at once and queues a consolidated session", async () => {
    const memory = await start()
    await consolidated(memory, { ses_a: {}, ses_b: {} })
    await memory.controls.setMode("ses_a", "disabled")
    expect(records(memory)).toEqual(["ses_b"])
    expect(queue(memory)).toEqual(["ses_a"])
    expect(memory.store()!.mode("ses_a")).toBe("disabled")
  })

  it("refuses an id neither memory nor the host knows, changing nothing; checked skips the look-up", async () => {
    const memory = await start()
    await expect(memory.controls.setMode("ses_typo", "disabled")).rejects.toMatchObject({ name: "MemoryError", kind: "unknown_session" })
    await expect(memory.controls.forget("ses_typo")).rejects.toMatchObject({ name: "MemoryError", kind: "unknown_session" })
    expect(host.lookups).toEqual(["ses_typo", "ses_typo"])
    expect(memory.store()!.knows("ses_typo")).toBe(false)
    expect(memory.controls.keptOut()).toEqual([])

    // The host has it, though memory holds nothing of it yet.
    host.addSession({ id: "ses_new" })
    await memory.controls.setMode("ses_new", "disabled")
    expect(memory.store()!.mode("ses_new")).toBe("disabled")

    host.lookups.length = 0
    await memory.controls.setMode("ses_tool", "disabled", { checked: true })
    expect(host.lookups).toEqual([])
    expect(memory.store()!.mode("ses_tool")).toBe("disabled")
  })

  it("forget removes what was learned and leaves the mode as it was", async () => {
    const memory = await start()
    await consolidated(memory, { ses_a: {} })
    const report = await memory.controls.forget("ses_a")
    expect(report).toEqual({ versions: ["v1"], queued: ["v1"] })
    expect(records(memory)).toEqual([])
    expect(memory.store()!.mode("ses_a")).toBe("enabled")
    expect(memory.controls.keptOut()).toEqual([])
  })

  it("lists the sessions kept out, newest change first", async () => {
    const memory = await start()
    await memory.controls.setMode("ses_1", "disabled", { checked: true })
    clock += 1_000
    await memory.controls.setMode("ses_2", "polluted", { checked: true })
    clock += 1_000
    await memory.controls.setMode("ses_3", "disabled", { checked: true })
    await memory.controls.setMode("ses_3", "enabled", { checked: true })
    expect(memory.controls.keptOut()).toEqual([
      { sessionId: "ses_2", mode: "polluted", since: clock - 1_000 },
      { sessionId: "ses_1", mode: "disabled", since: clock - 2_000 },
    ])
  })

  it("memory_inspect tells what waits to be forgotten and what is kept out", async () => {
    const memory = await start()
    await consolidated(memory, { ses_a: {} })
    await memory.controls.setMode("ses_a", "disabled")
    const text = memory.controls.inspect().text
    expect(text).toContain("1 session waiting to be forgotten from v1")
    expect(text).toContain(`kept out: ses_a (disabled since ${new Date(clock).toISOString()})`)
  })
})

describe("a disabled session keeps no checkpoint", () => {
  it("records nothing from its turns, gives its compaction no view, and refuses memory_checkpoint", async () => {
    const memory = await start()
    const file = path.join(home, "a.ts")
    fs.writeFileSync(file, "one")
    await memory.controls.setMode("ses_off", "disabled", { checked: true })
    for (const id of ["ses_off", "ses_on"]) {
      memory.onUserMessage(id, "msg_1", ["fix the bug"])
      memory.onToolResult(id, { tool: "read", callID: "call_1", args: { filePath: file } })
    }
    expect(memory.catalog.checkpoints!.get("ses_on")).toBeDefined()
    expect(memory.catalog.checkpoints!.get("ses_off")).toBeUndefined()

    expect(memory.onCompacting("ses_on")).toContain("fix the bug")
    expect(memory.onCompacting("ses_off")).toBeUndefined()

    const fact = { fact: { key: "bug", value: "the bug is in a.ts", evidence: { source: "user", ref: "current" }, depends_on: [] } }
    expect(memory.checkpoints!.apply("ses_on", fact)).toMatchObject({ ok: true })
    expect(memory.checkpoints!.apply("ses_off", fact)).toMatchObject({ ok: false, reason: expect.stringContaining("disabled") })
    expect(memory.catalog.checkpoints!.get("ses_off")).toBeUndefined()
  })
})

describe("the consolidation that forgets", () => {
  it("runs minutes after the last one, rewrites the summary without the session, empties the queue, and keeps no removed text in its review", async () => {
    const memory = await start()
    await consolidated(memory, {
      ses_a: { fact: "- deploy with make ship", summary: "Shipping day recap", slug: "shipping-day" },
      ses_b: { fact: "- run the tests with npm test" },
    })
    expect(summary()).toContain("make ship")

    host.sessions.delete("ses_a")
    memory.onSessionDeleted("ses_a")
    expect(queue(memory)).toEqual(["ses_a"])
    // The deletion started a run of its own; it found the last consolidation too recent.
    await memory.pipeline("v1").phase2!.settled()
    // Not within the few minutes after the last consolidation...
    expect(await memory.pipeline("v1").phase2!.run()).toEqual({ type: "skipped", reason: "skipped_cooldown" })
    // ...but long before its hours of cooldown are over.
    clock += JOBS.FORGET_INTERVAL_MS
    expect(await memory.pipeline("v1").phase2!.run()).toMatchObject({ type: "succeeded" })

    expect(summary()).not.toContain("make ship")
    expect(summary()).toContain("npm test")
    expect(queue(memory)).toEqual([])
    const reviews = memory.catalog.reviews!.list()
    expect(reviews).toHaveLength(1)
    const kept = JSON.stringify(reviews)
    for (const removed of ["make ship", "Shipping day recap", "shipping_day", "shipping-day", "ses_a"]) expect(kept).not.toContain(removed)
  })
})
