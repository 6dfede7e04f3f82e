import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import { SegmentCaptures } from "../../../src/store/segment-captures.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { VersionStore } from "../../../src/store/version-store.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { v1Extraction } from "../../../src/write/phase1/extraction-strategy.js"
import { Phase1 } from "../../../src/write/phase1/phase1.js"
import { packParts, segmentKey, sessionOfKey, splitSegments } from "../../../src/write/phase1/segments.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000
const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))

let clock: number
let db: SqlDatabase
let host: FakeHost
let root: string
let seq = 0
const disposers: Array<() => Promise<void> | void> = []

const user = (text: string, at = clock) => ({ info: { id: `msg_${++seq}`, role: "user", time: { created: at } }, parts: [{ type: "text", text }] })
const assistant = (text: string) => ({ info: { id: `msg_${++seq}`, role: "assistant" }, parts: [{ type: "text", text }] })
const compaction = (at: number) => ({ info: { id: `msg_${++seq}`, role: "user", time: { created: at } }, parts: [{ type: "compaction", auto: false }] })
const summary = (text: string) => ({ info: { id: `msg_${++seq}`, role: "assistant", summary: true }, parts: [{ type: "text", text }] })

/** The extractor remembers the words after "fact:" in what it was given, so each record says which text it saw. */
function rememberFacts() {
  host.responder = (_id, prompt) => {
    const text = Array.isArray(prompt.text) ? prompt.text.join("\n") : String(prompt.text)
    const facts = [...text.matchAll(/fact:(\w+)/g)].map((m) => m[1])
    return { text: "", structured: { rollout_summary: `saw ${facts.join(" ")}`, raw_memory: `---\ndescription: d\n---\n- ${facts.join(" ")}`, rollout_slug: "s" } }
  }
}

function phase1(options: Record<string, unknown> = {}, hold?: () => string | undefined) {
  const jobs = new Stage1Jobs(db, () => clock)
  const captures = new SegmentCaptures(db, () => clock)
  const p = new Phase1({
    ...(hold ? { hold } : {}),
    host,
    options: parseOptions(options).options,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    strategy: v1Extraction(templates),
    memoryRoot: root,
    jobs: () => jobs,
    captures: () => captures,
    excludedSessions: () => new Set(),
    helperSessions: new Set(),
    extractionModel: () => undefined,
    workerId: "test-worker",
    breaker: new RateLimitBreaker(() => clock),
  })
  disposers.push(() => p.dispose())
  return { p, jobs, captures }
}

const records = () =>
  db.prepare("SELECT session_id, rollout_summary, source_updated_at FROM stage1_outputs ORDER BY session_id").all<{ session_id: string; rollout_summary: string; source_updated_at: number }>()
const captureRow = () => db.prepare("SELECT status, retry_remaining, last_error FROM jobs WHERE kind = 'memory_segment_capture'").get<{ status: string; retry_remaining: number; last_error: string | null }>()

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-seg-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(root)
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
  rememberFacts()
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
})

describe("splitSegments", () => {
  it("cuts at each compaction, leaves the summaries out, and keeps the rest as the open segment", () => {
    const a = user("fact:alpha", 100)
    const b = assistant("ok")
    const c = user("fact:beta", 300)
    const d = user("fact:gamma", 500)
    const split = splitSegments([a, b, compaction(200), summary("recap of alpha"), c, compaction(400), summary("recap"), d])
    expect(split.closed.map((s) => ({ ordinal: s.ordinal, closedAt: s.closedAt, n: s.messages.length }))).toEqual([
      { ordinal: 1, closedAt: 200, n: 2 },
      { ordinal: 2, closedAt: 400, n: 1 },
    ])
    expect(split.closed[0]!.messages).toEqual([a, b])
    expect(split.open).toEqual([d])
    expect(splitSegments([a, b])).toEqual({ closed: [], open: [a, b] })
  })

  it("never moves a boundary backwards when a clock did", () => {
    const split = splitSegments([user("x"), compaction(500), user("y"), compaction(300)])
    expect(split.closed.map((s) => s.closedAt)).toEqual([500, 500])
  })
})

describe("packParts and record keys", () => {
  it("packs whole messages in order within the budget; an oversized message stands alone", () => {
    expect(packParts([3, 3, 3, 9, 1, 1], 6, (n) => n)).toEqual([[3, 3], [3], [9], [1, 1]])
    expect(packParts([], 6, (n: number) => n)).toEqual([])
  })

  it("names segments after their session, and finds the session of any key", () => {
    expect(segmentKey("ses_a", 2)).toBe("ses_a#2")
    expect(segmentKey("ses_a", 2, 3)).toBe("ses_a#2.3")
    expect(sessionOfKey("ses_a#2.3")).toBe("ses_a")
    expect(sessionOfKey("ses_a")).toBe("ses_a")
  })
})

describe("segment capture", () => {
  it("learns from a compacted segment at once, even in a busy session, and never twice", async () => {
    const start = clock - HOUR
    const messages: unknown[] = [user("fact:alpha", start), assistant("noted"), compaction(start + 10), summary("fact:recap")]
    // Active a minute ago: the idle gate would hold it back for hours.
    host.addSession({ id: "ses_busy", updatedAt: clock - 60_000 }, messages)
    const { p } = phase1()
    p.onCompacted("ses_busy")
    await p.capturesSettled()
    expect(records()).toEqual([{ session_id: "ses_busy#1", rollout_summary: "saw alpha", source_updated_at: start + 10 }])
    expect(captureRow()?.status).toBe("done")
    // The summary is not part of any segment.
    expect(host.prompts.map((entry) => String(entry.prompt.text))).not.toContainEqual(expect.stringContaining("recap"))

    // A second compaction: only the new segment is extracted.
    messages.push(user("fact:beta", start + 20), compaction(start + 30), summary("recap"))
    clock += 60_000
    p.onCompacted("ses_busy")
    await p.capturesSettled()
    expect(records().map((r) => [r.session_id, r.rollout_summary])).toEqual([
      ["ses_busy#1", "saw alpha"],
      ["ses_busy#2", "saw beta"],
    ])
    expect(host.prompts).toHaveLength(2)
  })

  it("keeps a failed capture queued and retries it after the backoff", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock }, [user("fact:alpha", clock - 100), compaction(clock - 50)])
    host.responder = () => ({ text: "", error: { name: "APIError", message: "model unavailable" } })
    const { p } = phase1()
    p.onCompacted("ses_a")
    await p.capturesSettled()
    expect(records()).toEqual([])
    expect(captureRow()).toMatchObject({ status: "failed", retry_remaining: 2 })
    expect(captureRow()?.last_error).toContain("ses_a#1")

    // Before the backoff nothing runs; after it, any pass picks the capture up again.
    rememberFacts()
    p.triggerCaptures()
    await p.capturesSettled()
    expect(records()).toEqual([])
    clock += 2 * HOUR
    p.triggerCaptures()
    await p.capturesSettled()
    expect(records().map((r) => r.session_id)).toEqual(["ses_a#1"])
    expect(captureRow()?.status).toBe("done")
  })

  it("keeps a capture queued when the host cannot load the session", async () => {
    host.addSession({ id: "ses_gone", updatedAt: clock }, [])
    host.messages.delete("ses_gone")
    const { p } = phase1()
    p.onCompacted("ses_gone")
    await p.capturesSettled()
    expect(captureRow()).toMatchObject({ status: "failed" })
  })

  it("packs a segment larger than the extraction budget into parts, so no text of it is cut", async () => {
    // A 10,000-token budget, parts filled to 9,000; each message is about 6,300 tokens, so two never share a part.
    host.contextLimits.set("p/m", 20_000)
    const big = "word ".repeat(6_000)
    const messages = [user(`fact:one ${big}`, 1), user(`fact:two ${big}`, 2), user(`fact:three ${big}`, 3), compaction(10)]
    host.addSession({ id: "ses_big", updatedAt: clock }, messages)
    const { p } = phase1({ extract_model: "p/m" })
    // Phase1 takes the extraction model from its deps.
    ;(p as unknown as { deps: { extractionModel: () => unknown } }).deps.extractionModel = () => ({ providerID: "p", modelID: "m" })
    p.onCompacted("ses_big")
    await p.capturesSettled()
    expect(records().map((r) => [r.session_id, r.rollout_summary])).toEqual([
      ["ses_big#1.1", "saw one"],
      ["ses_big#1.2", "saw two"],
      ["ses_big#1.3", "saw three"],
    ])
    for (const { prompt } of host.prompts) expect(String(prompt.text)).not.toMatch(/characters cut|\) truncated/)
  })

  it("has the session's own record cover only what followed the last compaction", async () => {
    const at = clock - 10 * HOUR
    host.addSession({ id: "ses_s", updatedAt: at }, [user("fact:before", at - 100), compaction(at - 50), summary("fact:recap"), user("fact:after", at - 10)])
    const { p } = phase1()
    await p.pass()
    expect(records().map((r) => [r.session_id, r.rollout_summary])).toEqual([["ses_s", "saw after"]])
  })

  it("drops the session's older record once the segment it covered is stored, and forgets every segment with the session", async () => {
    const { jobs, captures } = phase1()
    const claim = (key: string, at: number) => {
      // Recent watermarks: selection leaves out records unused for 30 days.
      const outcome = jobs.claim({ sessionId: key, updatedAt: clock - 1_000 + at }, { workerId: "w", maxRunning: 9 })
      if (outcome.type !== "claimed") throw new Error(outcome.type)
      return outcome
    }
    const output = { rawMemory: "m", rolloutSummary: "s", slug: null, cwd: null }
    jobs.succeed("ses_x", claim("ses_x", 100).token, output)
    jobs.succeed("ses_x#1", claim("ses_x#1", 150).token, output)
    expect(records().map((r) => r.session_id)).toEqual(["ses_x#1"])
    // An open-segment record newer than the segment stays.
    jobs.succeed("ses_x", claim("ses_x", 300).token, output)
    jobs.succeed("ses_x#2", claim("ses_x#2", 250).token, output)
    jobs.succeed("ses_xy", claim("ses_xy", 100).token, output)
    expect(records().map((r) => r.session_id)).toEqual(["ses_x", "ses_x#1", "ses_x#2", "ses_xy"])

    // Usage of a session counts for its segments; excluded sessions keep their segments out.
    new VersionStore("v1", db, () => clock).bumpUsage(["ses_x"])
    expect(db.prepare("SELECT COUNT(*) AS n FROM stage1_outputs WHERE usage_count = 1").get<{ n: number }>()?.n).toBe(3)
    const phase2 = new Phase2Jobs(db, () => clock)
    expect(phase2.selectInputs(10, 30, new Set(["ses_x"])).map((i) => i.sessionId)).toEqual(["ses_xy"])

    captures.enqueue("ses_x", 1)
    expect(phase2.forgetSession("ses_x")).toMatchObject({ deleted: true })
    expect(records().map((r) => r.session_id)).toEqual(["ses_xy"])
    expect(db.prepare("SELECT job_key FROM jobs WHERE kind <> 'memory_consolidate_global' ORDER BY job_key").all<{ job_key: string }>().map((r) => r.job_key)).toEqual(["ses_xy"])
  })
})

describe("a hold on background learning", () => {
  it("skips passes and keeps captures queued while held, and runs them once it ends", async () => {
    host.addSession({ id: "ses_h", updatedAt: clock }, [user("fact:alpha", clock - 100), compaction(clock - 50)])
    let hold: string | undefined = "paused"
    const { p } = phase1({}, () => hold)
    expect(await p.pass()).toEqual({ type: "skipped", reason: "held" })
    p.onCompacted("ses_h")
    await p.capturesSettled()
    expect(records()).toEqual([])
    expect(captureRow()?.status).toBe("pending")
    hold = undefined
    p.triggerCaptures()
    await p.capturesSettled()
    expect(records().map((r) => r.session_id)).toEqual(["ses_h#1"])
  })
})
