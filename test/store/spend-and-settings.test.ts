import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { SpendLedger, utcDay } from "../../src/store/ledger.js"
import { ConsolidationReviews, REVIEW_DIFF_MAX_CHARS, REVIEWS_KEPT } from "../../src/store/reviews.js"
import { HomeSettings } from "../../src/store/settings.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { summarizeConsolidation } from "../../src/write/phase2/consolidation-review.js"
import { helperUsage, recordHelperUsage } from "../../src/write/helpers/helper-usage.js"
import { RateLimitBreaker } from "../../src/write/helpers/breaker.js"
import { Diagnostics } from "../../src/diagnostics.js"
import { FakeHost } from "../fakes/host.js"

const DAY = 86_400_000
let clock: number
let db: SqlDatabase

beforeEach(() => {
  clock = Date.UTC(2026, 11, 1, 12)
  db = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-ledger-")), "memory.db")).db
})
afterEach(() => db.close())

const usage = (input: number, output = 0, cost = 0) => ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost })

describe("the spend ledger", () => {
  it("sums helper sessions per UTC day and phase, and reports today, the last 7 days and the per-session average", () => {
    const ledger = new SpendLedger(db, () => clock)
    ledger.record("extraction", usage(100, 10, 0.01))
    ledger.record("extraction", usage(300, 30, 0.03))
    ledger.record("consolidation", { input: 1000, output: 100, reasoning: 50, cacheRead: 200, cacheWrite: 20, cost: 0.5 })
    clock -= 3 * DAY
    ledger.record("extraction", usage(600, 60))
    clock -= 10 * DAY
    ledger.record("extraction", usage(9_999))
    clock += 13 * DAY
    const report = ledger.report()
    expect(report.today).toMatchObject({ sessions: 3, input: 1400, output: 140, reasoning: 50, cacheRead: 200, cacheWrite: 20, tokens: 1810 })
    expect(report.today.cost).toBeCloseTo(0.54)
    expect(report.last7Days).toMatchObject({ sessions: 4, input: 2000, tokens: 2470 })
    expect(report.perSession.tokens).toBeCloseTo(2470 / 4)
    expect(report.byDay.map((row) => [row.day, row.phase])).toEqual([
      [utcDay(clock), "consolidation"],
      [utcDay(clock), "extraction"],
      [utcDay(clock - 3 * DAY), "extraction"],
    ])
    expect(ledger.tokensToday()).toBe(1810)
  })

  it("counts the requests refused as too large for the model, and a refused completion as no helper session", () => {
    const ledger = new SpendLedger(db, () => clock)
    ledger.record("extraction", { ...usage(100), overflows: 1 })
    ledger.record("extraction", { ...usage(0), sessions: 0, overflows: 1 })
    ledger.record("extraction", usage(50))
    ledger.record("consolidation", { ...usage(900), overflows: 1 })
    const report = ledger.report()
    expect(report.today).toMatchObject({ sessions: 3, input: 1050, overflows: 3 })
    expect(report.byDay.map((row) => [row.phase, row.sessions, row.overflows])).toEqual([
      ["consolidation", 1, 1],
      ["extraction", 2, 2],
    ])
  })

  it("keeps odd numbers from a host out of the sums", () => {
    const ledger = new SpendLedger(db, () => clock)
    ledger.record("extraction", { input: Number.NaN, output: -5, reasoning: 2.6, cacheRead: Infinity, cacheWrite: 1, cost: Number.NaN })
    expect(ledger.report().today).toMatchObject({ input: 0, output: 0, reasoning: 3, cacheRead: 0, cacheWrite: 1, cost: 0, sessions: 1 })
  })

  it("reads a helper session's cost from its assistant messages", () => {
    const messages = [
      { info: { role: "user" } },
      { info: { role: "assistant", cost: 0.002, tokens: { input: 120, output: 30, reasoning: 5, cache: { read: 40, write: 8 } } } },
      { info: { role: "assistant", cost: 0.001, tokens: { input: 80, output: 20, reasoning: 0, cache: { read: 0, write: 0 } } } },
      { info: { role: "assistant" } },
      "junk",
    ]
    const total = helperUsage(messages)
    expect(total).toMatchObject({ input: 200, output: 50, reasoning: 5, cacheRead: 40, cacheWrite: 8 })
    expect(total.cost).toBeCloseTo(0.003)
  })
})

describe("home settings", () => {
  it("pauses and resumes learning for every process sharing the file", () => {
    const a = new HomeSettings(db, () => clock)
    expect(a.pausedSince()).toBeUndefined()
    expect(a.setPaused(true)).toBe(false)
    expect(a.setPaused(true)).toBe(true)
    expect(new HomeSettings(db).pausedSince()).toBe(clock)
    expect(a.setPaused(false)).toBe(true)
    expect(a.pausedSince()).toBeUndefined()
  })
})

describe("recorded rate-limit breakers", () => {
  it("keeps each process's open breakers for the CLI, and drops them once they expire", () => {
    const settings = new HomeSettings(db, () => clock)
    const breaker = new RateLimitBreaker(() => clock, (open) => settings.recordBreaker(open))
    breaker.trip("openai/gpt-5-mini", "APIError: Rate limit reached")
    expect(new HomeSettings(db, () => clock).openBreakers()).toEqual([{ scope: "openai/gpt-5-mini", until: clock + 3_600_000, reason: "APIError: Rate limit reached" }])
    clock += 2 * 3_600_000
    expect(settings.openBreakers()).toEqual([])
    expect(db.prepare("SELECT COUNT(*) AS n FROM settings").get<{ n: number }>()?.n).toBe(0)
  })
})

describe("consolidation reviews", () => {
  it("keeps the last reviews newest first, each diff bounded", () => {
    const reviews = new ConsolidationReviews(db, () => clock)
    const summary = { inputsAdded: [], inputsRemoved: [], notes: [], changed: ["MEMORY.md"], sessions: 1 }
    for (let i = 0; i < REVIEWS_KEPT + 3; i++) reviews.add(i % 2 ? "v2" : "v1", summary, `diff ${i}`)
    reviews.add("v1", summary, "x".repeat(REVIEW_DIFF_MAX_CHARS * 2))
    const all = reviews.list(100)
    expect(all).toHaveLength(REVIEWS_KEPT)
    expect(all[0]!.diff.length).toBeLessThanOrEqual(REVIEW_DIFF_MAX_CHARS)
    expect(all[0]!.diff).toContain("characters of the diff cut")
    expect(all[1]!.diff).toBe(`diff ${REVIEWS_KEPT + 2}`)
    expect(reviews.list(100, "v2").every((review) => review.version === "v2")).toBe(true)
  })

  it("tells inputs, forgetting, notes and the consolidator's own changes apart", () => {
    const given = [
      { status: "A", path: "rollout_summaries/new.md" },
      { status: "D", path: "rollout_summaries/gone.md" },
      { status: "M", path: "raw_memories.md" },
      { status: "A", path: "extensions/ad_hoc/notes/n.md" },
    ]
    const final = [...given, { status: "M", path: "MEMORY.md" }, { status: "A", path: "skills/deploy/SKILL.md" }]
    expect(summarizeConsolidation(given, final, 3)).toEqual({
      inputsAdded: ["raw_memories.md", "rollout_summaries/new.md"],
      inputsRemoved: ["rollout_summaries/gone.md"],
      notes: ["extensions/ad_hoc/notes/n.md"],
      changed: ["MEMORY.md", "skills/deploy/SKILL.md"],
      sessions: 3,
    })
  })
})

describe("recording a helper session's cost", () => {
  it("reads the session's messages, and falls back to the reply's own usage when the host cannot list them", async () => {
    const host = new FakeHost()
    host.addSession({ id: "ses_helper" }, [{ info: { role: "assistant", cost: 0, tokens: { input: 7, output: 3, reasoning: 0, cache: { read: 0, write: 0 } } } }])
    const recorded: Array<{ phase: string; input: number }> = []
    const ctx = { host, diagnostics: new Diagnostics(host), recordUsage: (phase: string, u: { input: number }) => void recorded.push({ phase, input: u.input }) }
    await recordHelperUsage(ctx as never, "consolidation", "ses_helper")
    await recordHelperUsage(ctx as never, "extraction", "ses_gone", { fallback: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 } })
    await recordHelperUsage(ctx as never, "extraction", "ses_gone")
    expect(recorded).toEqual([{ phase: "consolidation", input: 7 }, { phase: "extraction", input: 10 }])
    expect(ctx.diagnostics.recent().some((d) => /could not record what helper session ses_gone cost/.test(d.message))).toBe(true)
  })

  it("never reads back a helper that was asked for a JSON schema (OpenCode 1.18.33 rejects its own stored format), and counts it even without usage", async () => {
    const host = new FakeHost()
    host.addSession({ id: "ses_helper" }, [{ info: { role: "assistant", cost: 0, tokens: { input: 7, output: 3, reasoning: 0, cache: { read: 0, write: 0 } } } }])
    let reads = 0
    const load = host.loadMessages.bind(host)
    host.loadMessages = async (...args) => (reads++, load(...args))
    const recorded: number[] = []
    const ctx = { host, diagnostics: new Diagnostics(host), recordUsage: (_phase: string, u: { input: number }) => void recorded.push(u.input) }
    await recordHelperUsage(ctx as never, "extraction", "ses_helper", { fallback: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 }, structured: true })
    await recordHelperUsage(ctx as never, "extraction", "ses_helper", { structured: true })
    expect(reads).toBe(0)
    expect(recorded).toEqual([10, 0])
  })

  it("loses only the figure when the ledger cannot be written", async () => {
    const host = new FakeHost()
    const ctx = { host, diagnostics: new Diagnostics(host), recordUsage: () => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }) } }
    await expect(recordHelperUsage(ctx as never, "extraction", "ses_x", { structured: true })).resolves.toBeUndefined()
    expect(ctx.diagnostics.recent().at(-1)?.message).toMatch(/could not record what helper session ses_x cost: database or disk is full \(SQLITE_FULL\)/)
  })
})
