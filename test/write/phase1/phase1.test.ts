import { v1Extraction } from "../../../src/write/phase1/extraction-strategy.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { eligibleSessions, Phase1 } from "../../../src/write/phase1/phase1.js"
import { FakeHost } from "../../fakes/host.js"
import { helperSessionRules } from "../../../src/write/helpers/helper-sandbox.js"

const HOUR = 3_600_000
const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
const conversation = (text: string) => [
  { info: { id: "msg_1", role: "user", sessionID: "s" }, parts: [{ id: "prt_1", type: "text", text }] },
  { info: { id: "msg_2", role: "assistant", sessionID: "s" }, parts: [{ id: "prt_2", type: "text", text: "Done." }] },
]
const memoryAnswer = (fact: string) => ({
  text: "",
  structured: { rollout_summary: `Session about ${fact}.`, raw_memory: `---\ndescription: ${fact}\n---\n- ${fact}`, rollout_slug: "Fact Topic!" },
})

let clock: number
let db: SqlDatabase
let host: FakeHost
let root: string
const disposers: Array<() => Promise<void> | void> = []

function phase1(options: Record<string, unknown> = {}, excluded: Set<string> = new Set(), afterPass?: () => void) {
  const jobs = new Stage1Jobs(db, () => clock)
  const helperSessions = new Set<string>()
  const p = new Phase1({
    ...(afterPass ? { afterPass } : {}),
    host,
    options: parseOptions(options).options,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    strategy: v1Extraction(templates),
    memoryRoot: root,
    jobs: () => jobs,
    excludedSessions: () => excluded,
    helperSessions,
    extractionModel: () => undefined,
    workerId: "test-worker",
    breaker: new RateLimitBreaker(() => clock),
  })
  disposers.push(() => p.dispose())
  return { p, jobs, helperSessions }
}

const outputs = () => db.prepare("SELECT session_id, raw_memory, rollout_summary, rollout_slug, cwd, source_updated_at FROM stage1_outputs ORDER BY session_id").all<Record<string, unknown>>()

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p1-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(root)
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
})

describe("phase 1", () => {
  it("extracts idle sessions, newest first, at most max_rollouts_per_startup, and deletes its helper sessions", async () => {
    host.addSession({ id: "ses_old", directory: "/p/a", updatedAt: clock - 9 * HOUR }, conversation("old"))
    host.addSession({ id: "ses_mid", directory: "/p/b", updatedAt: clock - 8 * HOUR }, conversation("mid"))
    host.addSession({ id: "ses_new", directory: "/p/c", updatedAt: clock - 7 * HOUR }, conversation("new"))
    host.responder = (_id, prompt) => memoryAnswer(prompt.text.includes("mid") ? "mid fact" : "new fact")
    const { p, helperSessions } = phase1()
    const report = await p.pass()
    expect(report).toMatchObject({ type: "done", eligible: 3, claimed: 2 })
    expect(outputs().map((o) => o.session_id)).toEqual(["ses_mid", "ses_new"])
    expect(outputs()[1]).toMatchObject({ rollout_slug: "fact-topic", cwd: "/p/c", source_updated_at: clock - 7 * HOUR })
    expect(host.prompts.every((call) => call.prompt.agent === "memorize-extract" && call.prompt.directory === root && call.prompt.schema)).toBe(true)
    // Each helper session carries its own deny-first rules, so the sandbox holds whatever the agent says.
    expect(host.created.map((c) => c.input.permission)).toEqual([helperSessionRules("extract", [root]), helperSessionRules("extract", [root])])
    expect(host.deleted).toHaveLength(2)
    expect([...host.sessions.keys()].filter((id) => id.startsWith("ses_helper"))).toEqual([])
    expect(helperSessions.size).toBe(0)
  })

  it("skips the current session, busy or too old sessions, excluded modes, children and helpers", () => {
    const now = clock
    const sessions = [
      { id: "ses_current", updatedAt: now - 7 * HOUR },
      { id: "ses_recent", updatedAt: now - 1 * HOUR },
      { id: "ses_ancient", updatedAt: now - 11 * 24 * HOUR },
      { id: "ses_disabled", updatedAt: now - 7 * HOUR },
      { id: "ses_child", updatedAt: now - 7 * HOUR, parentId: "ses_x" },
      { id: "ses_helper", updatedAt: now - 7 * HOUR, title: "[codex-memory] extract ses_a", metadata: { "opencode-codex-memory": { role: "extract" } } },
      { id: "ses_ok", updatedAt: now - 7 * HOUR },
    ].map((s) => ({ title: s.id, directory: "/p", createdAt: 0, ...s }))
    const eligible = eligibleSessions(sessions, { now, currentSessionId: "ses_current", maxAgeDays: 10, minIdleHours: 6, excluded: new Set(["ses_disabled"]) })
    expect(eligible.map((s) => s.id)).toEqual(["ses_ok"])
  })

  it("stamps the 30 s gate only after a pass that claimed work", async () => {
    const { p } = phase1()
    expect(await p.pass()).toMatchObject({ type: "done", claimed: 0 })
    host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR }, conversation("a"))
    clock += 31_000 // past the discovery cache
    expect(await p.pass()).toMatchObject({ type: "done", claimed: 1 })
    host.addSession({ id: "ses_b", updatedAt: clock - 7 * HOUR }, conversation("b"))
    expect(await p.pass()).toEqual({ type: "skipped", reason: "gate" })
    clock += 31_000
    expect(await p.pass()).toMatchObject({ type: "done", claimed: 1 })
  })

  it("puts off a trigger that meets the gate until the gate ends, instead of dropping it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    try {
      host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR }, conversation("a"))
      host.responder = () => memoryAnswer("a fact")
      const { p } = phase1()
      expect(await p.pass()).toMatchObject({ type: "done", claimed: 1 })
      // Due now, but the trigger that would find it comes within 30 s of the claiming pass.
      host.addSession({ id: "ses_b", updatedAt: clock - 7 * HOUR }, conversation("b"))
      clock += 10_000
      p.trigger()
      await p.inFlight()
      expect(outputs().map((o) => o.session_id)).toEqual(["ses_a"])
      clock += 20_100
      vi.advanceTimersByTime(20_100)
      await p.inFlight()
      expect(outputs().map((o) => o.session_id)).toEqual(["ses_a", "ses_b"])
    } finally {
      vi.useRealTimers()
    }
  })

  it("finalizes nothing when discovery fails", async () => {
    host.failListing = new Error("server not ready")
    const { p } = phase1()
    expect(await p.pass()).toEqual({ type: "discovery_failed", error: "server not ready" })
    expect(db.prepare("SELECT COUNT(*) AS n FROM jobs").get<{ n: number }>()?.n).toBe(0)
  })

  it("caches discovery for 30 s", async () => {
    const { p } = phase1()
    await p.pass()
    await p.pass()
    expect(host.listCalls).toBe(1)
    clock += 31_000
    await p.pass()
    expect(host.listCalls).toBe(2)
  })

  it("never claims a session deleted since the cached listing, and forgets one deleted after its claim without a failed or retrying job", async () => {
    host.addSession({ id: "ses_deleted", updatedAt: clock - 8 * HOUR }, conversation("deleted"))
    host.addSession({ id: "ses_kept", updatedAt: clock - 7 * HOUR }, conversation("kept"))
    const gone: string[] = []
    const jobs = new Stage1Jobs(db, () => clock)
    const p = new Phase1({
      host,
      options: parseOptions({ max_rollouts_per_startup: 1 }).options,
      now: () => clock,
      diagnostics: new Diagnostics(host, () => clock),
      strategy: v1Extraction(templates),
      memoryRoot: root,
      jobs: () => jobs,
      excludedSessions: () => new Set(),
      helperSessions: new Set(),
      extractionModel: () => undefined,
      workerId: "test-worker",
      breaker: new RateLimitBreaker(() => clock),
      onSessionGone: (id) => {
        gone.push(id)
        // What forgetting does: the session's job rows go.
        db.prepare("DELETE FROM jobs WHERE job_key = $id").run({ id })
      },
    })
    disposers.push(() => p.dispose())
    host.responder = () => memoryAnswer("kept fact")
    // Deleted between the listing and the extraction: OpenCode no longer has its messages.
    const load = host.loadMessages.bind(host)
    host.loadMessages = async (id) => {
      if (id === "ses_kept") {
        host.sessions.delete(id)
        host.messages.delete(id)
      }
      return load(id)
    }
    expect((await p.pass()) as unknown).toMatchObject({ type: "done", claimed: 1, results: [{ sessionId: "ses_kept", outcome: "session_gone" }] })
    expect(gone).toEqual(["ses_kept"])
    expect(db.prepare("SELECT job_key, status, retry_remaining FROM jobs").all()).toEqual([])
  })

  it("never claims a session deleted while the listing is cached", async () => {
    host.addSession({ id: "ses_deleted", updatedAt: clock - 8 * HOUR }, conversation("deleted"))
    let held: string | undefined = "paused"
    const jobs = new Stage1Jobs(db, () => clock)
    const p = new Phase1({
      host,
      options: parseOptions({}).options,
      now: () => clock,
      diagnostics: new Diagnostics(host, () => clock),
      strategy: v1Extraction(templates),
      memoryRoot: root,
      jobs: () => jobs,
      excludedSessions: () => new Set(),
      helperSessions: new Set(),
      extractionModel: () => undefined,
      workerId: "test-worker",
      breaker: new RateLimitBreaker(() => clock),
      hold: () => held,
    })
    disposers.push(() => p.dispose())
    // Listed while learning is paused (what reconciliation needs), then deleted, then resumed within the cache's life.
    expect(await p.pass()).toEqual({ type: "skipped", reason: "held" })
    host.sessions.delete("ses_deleted")
    host.messages.delete("ses_deleted")
    p.sessionDeleted("ses_deleted")
    held = undefined
    clock += 5_000
    expect(await p.pass()).toMatchObject({ type: "done", claimed: 0 })
    expect(host.listCalls).toBe(1)
    expect(db.prepare("SELECT job_key FROM jobs").all()).toEqual([])
  })

  it("stores nothing for blank answers, and fails the job with a retry for malformed ones", async () => {
    host.addSession({ id: "ses_blank", updatedAt: clock - 8 * HOUR }, conversation("blank"))
    host.addSession({ id: "ses_bad", updatedAt: clock - 7 * HOUR }, conversation("bad"))
    host.responder = (_id, prompt) =>
      prompt.text.includes("bad")
        ? { text: "", structured: { rollout_summary: 42 } }
        : { text: "", structured: { rollout_summary: " ", raw_memory: "", rollout_slug: null } }
    const { p } = phase1()
    const report = await p.pass()
    expect(report).toMatchObject({ type: "done", claimed: 2 })
    expect(outputs()).toEqual([])
    const jobs = db.prepare("SELECT job_key, status, retry_remaining, retry_at, last_error FROM jobs WHERE kind = 'memory_stage1' ORDER BY job_key").all<Record<string, unknown>>()
    expect(jobs[0]).toMatchObject({ job_key: "ses_bad", status: "failed", retry_remaining: 2, retry_at: clock + HOUR })
    expect(String(jobs[0]!.last_error)).toContain("does not match the schema")
    expect(jobs[1]).toMatchObject({ job_key: "ses_blank", status: "done" })
  })

  it("fails the job when the answer echoes the prompt", async () => {
    host.addSession({ id: "ses_echo", updatedAt: clock - 7 * HOUR }, conversation("echo"))
    host.responder = (_id, prompt) => ({ text: "", structured: { rollout_summary: prompt.system, raw_memory: prompt.system, rollout_slug: "x" } })
    const { p } = phase1()
    await p.pass()
    expect(outputs()).toEqual([])
    expect(db.prepare("SELECT last_error FROM jobs WHERE job_key = 'ses_echo'").get<{ last_error: string }>()?.last_error).toMatch(/echoed its instructions/)
  })

  it("redacts secrets in the transcript sent out and in what is stored", async () => {
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    host.addSession({ id: "ses_s", updatedAt: clock - 7 * HOUR }, conversation(`my token is ${secret}`))
    host.responder = () => memoryAnswer(`the token ${secret} is used for deploys`)
    const { p } = phase1()
    await p.pass()
    expect(JSON.stringify(host.prompts)).not.toContain(secret)
    expect(JSON.stringify(outputs())).not.toContain(secret)
    expect(JSON.stringify(outputs())).toContain("[REDACTED:github-token]")
  })

  it("records the branch the session's folder has checked out, redacted, and none outside a repository", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p1-repo-"))
    fs.mkdirSync(path.join(repo, ".git"))
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    fs.writeFileSync(path.join(repo, ".git", "HEAD"), `ref: refs/heads/fix-${secret}\n`)
    const plain = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p1-plain-"))
    host.addSession({ id: "ses_git", directory: repo, updatedAt: clock - 7 * HOUR }, conversation("git"))
    host.addSession({ id: "ses_plain", directory: plain, updatedAt: clock - 7 * HOUR }, conversation("plain"))
    host.responder = () => memoryAnswer("a fact")
    const { p } = phase1()
    await p.pass()
    const branches = db.prepare("SELECT session_id, git_branch FROM stage1_outputs ORDER BY session_id").all<{ session_id: string; git_branch: string | null }>()
    expect(branches).toEqual([
      { session_id: "ses_git", git_branch: "fix-[REDACTED:github-token]" },
      { session_id: "ses_plain", git_branch: null },
    ])
  })

  it("gives jobs back without spending a retry when disposed mid-extraction", async () => {
    host.addSession({ id: "ses_slow", updatedAt: clock - 7 * HOUR }, conversation("slow"))
    host.responder = (_id, _prompt, signal) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    const { p } = phase1()
    const pass = p.pass()
    await new Promise((resolve) => setTimeout(resolve, 20))
    await p.dispose()
    expect(await pass).toMatchObject({ results: [{ sessionId: "ses_slow", outcome: "released" }] })
    const job = db.prepare("SELECT status, retry_remaining, lease_until FROM jobs WHERE job_key = 'ses_slow'").get<Record<string, unknown>>()
    expect(job).toMatchObject({ retry_remaining: 3, lease_until: null })
    expect(host.aborted).toHaveLength(1)
    expect(host.deleted).toHaveLength(1)
  })

  it("starts phase 2 once the pass in flight has stored its records, not when a trigger finds it busy", async () => {
    host.addSession({ id: "ses_slow", updatedAt: clock - 7 * HOUR }, conversation("slow"))
    let release: (() => void) | undefined
    host.responder = () => new Promise((resolve) => (release = () => resolve(memoryAnswer("slow fact"))))
    const after: number[] = []
    const { p } = phase1({}, new Set(), () => after.push(outputs().length))
    p.trigger("ses_a")
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The session goes idle while its extraction is still running: that trigger waits for the pass.
    p.trigger("ses_a")
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(after).toEqual([])
    release!()
    // The trigger that found the pass busy gets a pass of its own after it: phase 2 follows both.
    await vi.waitFor(() => expect(after).toEqual([1, 1]))
  })

  it("a trigger during a pass gets one more pass after it, which claims what became due meanwhile", async () => {
    host.addSession({ id: "ses_slow", updatedAt: clock - 7 * HOUR }, conversation("slow"))
    let release: (() => void) | undefined
    host.responder = () => new Promise((resolve) => (release = () => resolve(memoryAnswer("slow fact"))))
    const { p } = phase1()
    p.trigger()
    await vi.waitFor(() => expect(release).toBeDefined())
    // Due now, but the pass under way listed the sessions before it was.
    host.addSession({ id: "ses_late", updatedAt: clock - 7 * HOUR }, conversation("late"))
    host.responder = () => memoryAnswer("late fact")
    p.trigger()
    p.trigger()
    clock += 60_000
    release!()
    await vi.waitFor(() => expect(outputs().map((o) => o.session_id).sort()).toEqual(["ses_late", "ses_slow"]))
  })

  it("judges idleness at the time of the listing: a slow listing does not make sessions due by the clock after it", async () => {
    // Listed a minute before it would be due; the reply arrives two hours later (a moved clock).
    host.addSession({ id: "ses_a", updatedAt: clock - HOUR + 60_000 }, conversation("a"))
    host.listingReply = async () => {
      clock += 2 * HOUR
    }
    const { p } = phase1({ min_rollout_idle_hours: 1 })
    expect(await p.pass()).toMatchObject({ type: "done", eligible: 0, claimed: 0 })
    // No gate was stamped: the next pass lists again and finds it due.
    host.listingReply = undefined
    expect(await p.pass()).toMatchObject({ type: "done", eligible: 1, claimed: 1 })
  })

  it("counts one idle moment once, though OpenCode reports it twice", () => {
    const { p } = phase1()
    let passes = 0
    const original = p.trigger.bind(p)
    p.trigger = (id?: string) => {
      passes++
      original(id)
    }
    p.onIdle("ses_a")
    p.onIdle("ses_a")
    p.onChatMessage("ses_b")
    p.onChatMessage("ses_b")
    expect(passes).toBe(2)
  })
})

describe("phase 1 on a host whose only model call is a tool-less completion", () => {
  class CompletionHost extends FakeHost {
    readonly completions: Array<{ prompt: string; model?: unknown }> = []
    reply: (prompt: string) => { text: string; error?: { name: string; message: string; status?: number } } = () => ({ text: "" })
    async generateText(input: { prompt: string; model?: unknown }) {
      this.completions.push(input)
      return this.reply(input.prompt)
    }
  }

  it("sends one prompt (instructions, transcript, reminder, schema), creates no helper session, and stores the record in the reply", async () => {
    const completion = new CompletionHost(() => clock)
    host = completion
    completion.addSession({ id: "ses_a", directory: "/p/a", updatedAt: clock - 7 * HOUR }, conversation("the deploy uses make ship"))
    completion.reply = () => ({ text: "```json\n" + JSON.stringify(memoryAnswer("deploys").structured) + "\n```" })
    const { p } = phase1()
    expect(await p.pass()).toMatchObject({ type: "done", claimed: 1 })
    expect(completion.created).toEqual([])
    expect(completion.prompts).toEqual([])
    const [sent] = completion.completions
    expect(sent?.prompt.startsWith(templates.system.text.slice(0, 60))).toBe(true)
    expect(sent?.prompt).toContain("the deploy uses make ship")
    expect(sent?.prompt.indexOf("the deploy uses make ship")).toBeLessThan(sent!.prompt.indexOf("----- END OF THE SESSION -----"))
    expect(sent?.prompt).toContain('"raw_memory"')
    expect(outputs()).toMatchObject([{ session_id: "ses_a", rollout_summary: "Session about deploys.", rollout_slug: "fact-topic" }])
  })

  it("fails the job with a clear reason when the reply is not the record, and pauses a rate-limited model", async () => {
    const completion = new CompletionHost(() => clock)
    host = completion
    completion.addSession({ id: "ses_a", directory: "/p/a", updatedAt: clock - 7 * HOUR }, conversation("a"))
    completion.reply = () => ({ text: "Sorry, I cannot help with that." })
    const { p } = phase1()
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "failed", detail: "the extractor's answer is not valid JSON" }] })
    expect(outputs()).toEqual([])
    completion.addSession({ id: "ses_b", directory: "/p/b", updatedAt: clock - 7 * HOUR }, conversation("b"))
    completion.reply = () => ({ text: "", error: { name: "APIError", message: "rate limit reached", status: 429 } })
    clock += 60_000
    const limited = phase1()
    expect(await limited.p.pass()).toMatchObject({ results: [{ sessionId: "ses_b", outcome: "failed" }] })
    clock += 60_000
    expect(await limited.p.pass()).toEqual({ type: "skipped", reason: "rate_limited" })
  })
})
