// An extraction request too large for the model's window is a cue, not a failure: it is built again
// at once with two thirds of the transcript budget, at most three times, spending no retry, and each
// shrink is logged, noted on the job and counted in the ledger. Driven through Phase1 on the fake host.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import type { GenerateInput, GenerateReply, HelperReply } from "../../../src/host.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { SpendLedger, type SpendPhase, type Usage } from "../../../src/store/ledger.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { transcriptBudget } from "../../../src/write/phase1/extraction-job.js"
import { v1Extraction, type ExtractionStrategy } from "../../../src/write/phase1/extraction-strategy.js"
import { Phase1 } from "../../../src/write/phase1/phase1.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000
const MODEL = { providerID: "local", modelID: "small-16k" }
const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
const conversation = (text: string) => [
  { info: { id: "msg_1", role: "user", sessionID: "s" }, parts: [{ id: "prt_1", type: "text", text }] },
  { info: { id: "msg_2", role: "assistant", sessionID: "s" }, parts: [{ id: "prt_2", type: "text", text: "Done." }] },
]
const record = { rollout_summary: "Session about deploys.", raw_memory: "---\ndescription: deploys\n---\n- the deploy uses make ship", rollout_slug: "deploys" }
/** How OpenCode 1.18.33 reports a helper session that outgrew the model. */
const OVERFLOW: HelperReply = { text: "", error: { name: "ContextOverflowError", message: "Session too large to compact - context exceeds model limit even after stripping media" } }

let clock: number
let db: SqlDatabase
let host: FakeHost
let root: string
const disposers: Array<() => Promise<void> | void> = []

/** Phase 1 on the fake host, with the strategy's builds watched for the budget each was given. */
function phase1() {
  const jobs = new Stage1Jobs(db, () => clock)
  const ledger = new SpendLedger(db, () => clock)
  const usages: Array<{ phase: SpendPhase; usage: Usage }> = []
  const budgets: number[] = []
  const real = v1Extraction(templates)
  const strategy: ExtractionStrategy = {
    ...real,
    build: (input) => {
      budgets.push(input.budgetTokens)
      return real.build(input)
    },
  }
  const diagnostics = new Diagnostics(host, () => clock)
  const p = new Phase1({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    diagnostics,
    strategy,
    memoryRoot: root,
    jobs: () => jobs,
    excludedSessions: () => new Set(),
    helperSessions: new Set(),
    extractionModel: () => MODEL,
    workerId: "test-worker",
    breaker: new RateLimitBreaker(() => clock),
    recordUsage: (phase, usage) => {
      usages.push({ phase, usage })
      ledger.record(phase, usage)
    },
  })
  disposers.push(() => p.dispose())
  return { p, budgets, usages, ledger, diagnostics }
}

const job = (id: string) =>
  db.prepare("SELECT status, retry_remaining, retry_at, last_error, overflow_budgets FROM jobs WHERE kind = 'memory_stage1' AND job_key = $id").get<Record<string, unknown>>({ id })
const stored = () => db.prepare("SELECT session_id, rollout_summary FROM stage1_outputs ORDER BY session_id").all<Record<string, unknown>>()
const shrinkLines = (diagnostics: Diagnostics) => diagnostics.recent().filter((d) => d.level === "info" && /too large for the model/.test(d.message)).map((d) => d.message)

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-overflow-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(root)
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
  // A 16,000-token window: 70% less the prompt's reserve is a 7,200-token transcript budget.
  host.contextLimits.set(`${MODEL.providerID}/${MODEL.modelID}`, 16_000)
  host.addSession({ id: "ses_a", directory: "/p/a", updatedAt: clock - 7 * HOUR }, conversation("the deploy uses make ship ".repeat(2_000)))
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
})

describe("an extraction too large for the model (helper sessions, OpenCode 1.x)", () => {
  it("shrinks the budget to two thirds and asks again at once, stores the record, spends no retry, and records each shrink", async () => {
    let calls = 0
    host.responder = () => (++calls <= 2 ? OVERFLOW : { text: "", structured: record })
    const { p, budgets, usages, ledger, diagnostics } = phase1()
    expect(transcriptBudget(16_000)).toBe(7_200)
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "stored" }] })
    expect(budgets).toEqual([7_200, 4_800, 3_200])
    expect(host.prompts).toHaveLength(3)
    // The transcript sent shrank with the budget.
    const sizes = host.prompts.map((call) => (typeof call.prompt.text === "string" ? call.prompt.text.length : 0))
    expect(sizes[1]).toBeLessThan(sizes[0]!)
    expect(sizes[2]).toBeLessThan(sizes[1]!)
    expect(stored()).toEqual([{ session_id: "ses_a", rollout_summary: "Session about deploys." }])
    // No retry spent; the job remembers the budgets the model refused until its next claim.
    expect(job("ses_a")).toMatchObject({ status: "done", retry_remaining: 3, last_error: null, overflow_budgets: "[7200,4800]" })
    // Each helper session is in the ledger, the refused ones counted as overflows.
    expect(usages.map((entry) => entry.usage.overflows ?? 0)).toEqual([1, 1, 0])
    expect(ledger.report().today).toMatchObject({ sessions: 3, overflows: 2 })
    expect(shrinkLines(diagnostics)).toEqual([
      "the extraction request for ses_a was too large for the model (7200 tokens budgeted); retrying with 4800",
      "the extraction request for ses_a was too large for the model (4800 tokens budgeted); retrying with 3200",
    ])
    // memory_inspect shows the budget that answered.
    expect(p.lastBudget()).toMatchObject({ model: "local/small-16k", window: 16_000, transcriptTokens: 3_200, refused: [7_200, 4_800] })
    // Every helper session was deleted.
    expect(host.deleted).toHaveLength(3)
  })

  it("fails with the ordinary backoff after exactly three shrinks, saying it overflowed at every budget", async () => {
    host.responder = () => OVERFLOW
    const { p, budgets, ledger, diagnostics } = phase1()
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "failed" }] })
    expect(budgets).toEqual([7_200, 4_800, 3_200, 2_133])
    expect(host.prompts).toHaveLength(4)
    expect(stored()).toEqual([])
    const row = job("ses_a")
    expect(row).toMatchObject({ status: "failed", retry_remaining: 2, retry_at: clock + HOUR, overflow_budgets: "[7200,4800,3200,2133]" })
    expect(row?.last_error).toBe(
      "extraction model failed: the request was too large for the model at every budget tried (7200, 4800, 3200, 2133 tokens): ContextOverflowError: Session too large to compact - context exceeds model limit even after stripping media",
    )
    expect(shrinkLines(diagnostics)).toHaveLength(3)
    expect(ledger.report().today).toMatchObject({ sessions: 4, overflows: 4 })
    // The backoff holds: nothing is asked again within the hour.
    clock += 31_000
    await p.pass()
    expect(host.prompts).toHaveLength(4)
  })

  it("fails any other error with the backoff at once, at the first budget", async () => {
    host.responder = () => ({ text: "", error: { name: "APIError", message: "Internal Server Error", status: 500 } })
    const { p, budgets, ledger, diagnostics } = phase1()
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "failed" }] })
    expect(budgets).toEqual([7_200])
    expect(host.prompts).toHaveLength(1)
    expect(job("ses_a")).toMatchObject({ status: "failed", retry_remaining: 2, retry_at: clock + HOUR, last_error: "extraction model failed: APIError: Internal Server Error", overflow_budgets: null })
    expect(shrinkLines(diagnostics)).toEqual([])
    expect(ledger.report().today).toMatchObject({ sessions: 1, overflows: 0 })
  })

  it("a new claim starts from the full budget again and clears the last run's note", async () => {
    let calls = 0
    host.responder = () => (++calls === 1 ? OVERFLOW : { text: "", structured: record })
    const { p, budgets } = phase1()
    await p.pass()
    expect(job("ses_a")).toMatchObject({ status: "done", overflow_budgets: "[7200]" })
    // New activity in the session: extracted again, and this time the model takes the full budget.
    host.sessions.get("ses_a")!.updatedAt = clock - 6.5 * HOUR
    clock += 31_000
    await p.pass()
    expect(budgets).toEqual([7_200, 4_800, 7_200])
    expect(job("ses_a")).toMatchObject({ status: "done", overflow_budgets: null })
  })
})

describe("an extraction too large for the model (a tool-less completion, OpenCode 2)", () => {
  class CompletionHost extends FakeHost {
    readonly completions: GenerateInput[] = []
    reply: (call: number) => GenerateReply = () => ({ text: "" })
    async generateText(input: GenerateInput): Promise<GenerateReply> {
      this.completions.push(input)
      return this.reply(this.completions.length)
    }
  }
  /** An OpenAI-compatible provider's refusal: HTTP 400, the code only in the body. */
  const refusal: GenerateReply = {
    text: "",
    error: { name: "AI_APICallError", message: "Bad Request", status: 400, body: '{"error":{"message":"Invalid request","code":"context_length_exceeded"}}' },
  }

  it("shrinks and asks again at once, counting the refused completions in the ledger without a helper session", async () => {
    const completion = new CompletionHost(() => clock)
    completion.contextLimits = host.contextLimits
    completion.addSession({ id: "ses_a", directory: "/p/a", updatedAt: clock - 7 * HOUR }, conversation("the deploy uses make ship ".repeat(2_000)))
    host = completion
    completion.reply = (call) => (call <= 2 ? refusal : { text: JSON.stringify(record) })
    const { p, budgets, ledger, diagnostics } = phase1()
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "stored" }] })
    expect(budgets).toEqual([7_200, 4_800, 3_200])
    expect(completion.completions).toHaveLength(3)
    expect(completion.completions[2]!.prompt.length).toBeLessThan(completion.completions[0]!.prompt.length)
    expect(completion.created).toEqual([])
    expect(job("ses_a")).toMatchObject({ status: "done", retry_remaining: 3, overflow_budgets: "[7200,4800]" })
    expect(ledger.report().today).toMatchObject({ sessions: 0, overflows: 2 })
    expect(shrinkLines(diagnostics)).toHaveLength(2)
  })

  it("fails a 400 that is no overflow at once", async () => {
    const completion = new CompletionHost(() => clock)
    completion.contextLimits = host.contextLimits
    completion.addSession({ id: "ses_a", directory: "/p/a", updatedAt: clock - 7 * HOUR }, conversation("a"))
    host = completion
    completion.reply = () => ({ text: "", error: { name: "AI_APICallError", message: "Invalid 'model': unknown parameter 'reasoning'", status: 400 } })
    const { p, budgets } = phase1()
    expect(await p.pass()).toMatchObject({ results: [{ sessionId: "ses_a", outcome: "failed" }] })
    expect(budgets).toEqual([7_200])
    expect(job("ses_a")).toMatchObject({ status: "failed", retry_remaining: 2, overflow_budgets: null })
  })
})
