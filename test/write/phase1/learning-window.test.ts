// What phase 1 may learn from, in an instance: nothing said before the last reset or before a
// session's own forget, while sessions are still listed when learning is held (the listing is
// what reconciliation forgets deleted sessions by), and compactions of sessions newer than a
// cached listing.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { HelperPrompt } from "../../../src/host.js"
import { Memory } from "../../../src/memory.js"
import { sinceTime } from "../../../src/write/phase1/extraction-job.js"
import { FakeHost, promptText } from "../../fakes/host.js"

const HOUR = 3_600_000

let clock: number
let home: string
let host: FakeHost
let memory: Memory

const user = (text: string, at: number) => ({ info: { id: `msg_${text}_${at}`, role: "user", time: { created: at } }, parts: [{ type: "text", text }] })
const assistant = (at: number) => ({ info: { id: `msg_reply_${at}`, role: "assistant", time: { created: at } }, parts: [{ type: "text", text: "Noted." }] })
const compaction = (at: number) => ({ info: { id: `msg_compaction_${at}`, role: "user", time: { created: at } }, parts: [{ type: "compaction", auto: false }] })
const exchange = (text: string, at: number) => [user(text, at), assistant(at + 1)]

/**
 * The extractor remembers the words after "fact:" in what it was given, so each record says which
 * messages it saw; the consolidator leaves valid files, so a consolidation a test starts ends cleanly.
 */
function helper(_id: string, prompt: HelperPrompt) {
  if (prompt.agent === "memorize") {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# Task group: work\n- nothing\n")
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n- nothing\n")
    return { text: "done" }
  }
  const facts = [...promptText(prompt).matchAll(/fact:(\w+)/g)].map((m) => m[1])
  return { text: "", structured: { rollout_summary: `saw ${facts.join(" ")}`, raw_memory: `---\ndescription: d\n---\n- ${facts.join(" ")}`, rollout_slug: "s" } }
}

/** The user text of every extraction prompt the helper model received, in order. */
const extractions = () => host.prompts.filter((p) => p.prompt.agent === "memorize-extract").map((p) => promptText(p.prompt))
const records = () =>
  memory
    .pipeline("v1")
    .store()!
    .db.prepare("SELECT session_id, rollout_summary FROM stage1_outputs ORDER BY session_id")
    .all<{ session_id: string; rollout_summary: string }>()
const phase1 = () => memory.pipeline("v1").phase1!

/** The user goes on in a session: a new exchange at `at`, which is its last activity. */
function continueSession(sessionId: string, text: string, at: number): void {
  host.messages.get(sessionId)!.push(...exchange(text, at))
  host.sessions.get(sessionId)!.updatedAt = at + 1
}

beforeEach(async () => {
  clock = Date.UTC(2026, 10, 30, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-window-"))
  host = new FakeHost(() => clock)
  host.responder = helper
  memory = new Memory({ home }, { host, env: {}, homedir: home, now: () => clock })
  await memory.start()
})
afterEach(async () => {
  await memory.dispose()
})

describe("after a reset", () => {
  it("learns nothing from sessions idle since, and only what was said after it from a session active since", async () => {
    const reset = clock
    host.addSession({ id: "ses_idle", updatedAt: reset - 8 * HOUR }, exchange("fact:idle", reset - 9 * HOUR))
    host.addSession({ id: "ses_busy", updatedAt: reset - HOUR }, exchange("fact:before", reset - 2 * HOUR))
    expect(await memory.controls.reset()).toMatchObject({ type: "reset" })
    continueSession("ses_busy", "fact:after", reset + HOUR)
    // Both sessions are now long idle, and well within max_rollout_age_days.
    clock = reset + 8 * HOUR

    expect(await phase1().pass()).toMatchObject({ type: "done", eligible: 1, claimed: 1, results: [{ sessionId: "ses_busy", outcome: "stored" }] })
    expect(extractions()).toHaveLength(1)
    expect(extractions()[0]).toContain("fact:after")
    expect(extractions()[0]).not.toContain("fact:before")
    expect(records()).toEqual([{ session_id: "ses_busy", rollout_summary: "saw after" }])
    expect(memory.controls.inspect().text).toContain(`last reset: ${new Date(reset).toISOString()}`)
  })
})

describe("after a session is forgotten on request", () => {
  it("never sends its older messages to the extractor again, and does send what is said after", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock - 8 * HOUR }, exchange("fact:old", clock - 9 * HOUR))
    expect(await phase1().pass()).toMatchObject({ claimed: 1 })
    expect(extractions()[0]).toContain("fact:old")

    const forgotAt = clock
    await memory.controls.forget("ses_a")
    expect(records()).toEqual([])
    // Its job went with its record: only the forget time keeps it from being extracted again.
    clock += 31_000
    expect(await phase1().pass()).toMatchObject({ type: "done", eligible: 0, claimed: 0 })

    continueSession("ses_a", "fact:new", forgotAt + HOUR)
    clock = forgotAt + 8 * HOUR
    expect(await phase1().pass()).toMatchObject({ claimed: 1 })
    expect(extractions()).toHaveLength(2)
    expect(extractions()[1]).toContain("fact:new")
    expect(extractions()[1]).not.toContain("fact:old")
    expect(records()).toEqual([{ session_id: "ses_a", rollout_summary: "saw new" }])
  })
})

describe("sinceTime", () => {
  it("drops messages created before the time, and keeps those at or after it and those without a time", () => {
    const untimed = { info: { id: "msg_x", role: "user" }, parts: [] }
    const messages = [user("a", 100), untimed, user("b", 200), user("c", 300)]
    expect(sinceTime(messages, 200)).toEqual([untimed, user("b", 200), user("c", 300)])
    expect(sinceTime(messages, undefined)).toEqual(messages)
    expect(sinceTime(messages, 301)).toEqual([untimed])
  })
})

describe("while learning is paused", () => {
  it("still lists the host's sessions, so a deleted session is forgotten, but claims nothing", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock - 8 * HOUR }, exchange("fact:a", clock - 9 * HOUR))
    // A record of a session OpenCode deleted while no process with the plugin was running.
    memory
      .pipeline("v1")
      .store()!
      .db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ('ses_gone', $t, '- x', 'x', $t)")
      .run({ t: clock - 9 * HOUR })
    memory.catalog.settings!.setPaused(true)
    const listed = host.listCalls

    expect(await phase1().pass()).toEqual({ type: "skipped", reason: "held" })
    expect(host.listCalls).toBe(listed + 1)
    expect(host.prompts).toEqual([])
    // Reconciliation rides on the listing, in the background.
    await vi.waitFor(() => expect(records()).toEqual([]))
    expect(host.lookups).toContain("ses_gone")
    expect(memory.pipeline("v1").store()!.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE job_key = 'ses_a'").get()).toEqual({ n: 0 })
  })
})

describe("a compaction of a session newer than the cached listing", () => {
  it("is captured, not settled as a session the host does not have", async () => {
    expect(await phase1().pass()).toMatchObject({ type: "done", claimed: 0 })
    const listed = host.listCalls

    // Created, used and compacted within the listing's cache time.
    clock += 5_000
    host.addSession({ id: "ses_fresh", createdAt: clock, updatedAt: clock }, [...exchange("fact:early", clock - 2_000), compaction(clock - 1_000)])
    memory.onCompacted("ses_fresh")
    await phase1().capturesSettled()

    expect(records()).toEqual([{ session_id: "ses_fresh#1", rollout_summary: "saw early" }])
    // The cached listing could not say it was gone: the capture listed again.
    expect(host.listCalls).toBe(listed + 1)
  })
})
