// A consolidation whose inputs are too large for the model's window runs again at once with two
// thirds of the input budget, at most three times, spending no retry: the folder is put back as it
// was before each failed attempt, the smaller selection synced over it, and each shrink is logged,
// noted on the job and counted in the ledger. Only then does it fail with the ordinary backoff.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import type { HelperReply } from "../../../src/host.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { SpendLedger } from "../../../src/store/ledger.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { estimateTokens } from "../../../src/util/token-estimate.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { v1Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { consolidationInputBudget, Phase2 } from "../../../src/write/phase2/phase2.js"
import { hasWholeSnapshot } from "../../../src/write/phase2/run-snapshot.js"
import { FakeHost } from "../../fakes/host.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const HOUR = 3_600_000
const MODEL = { providerID: "local", modelID: "mid-100k" }
const GOOD_SUMMARY = "v1\n## What's in memory\n- deploys use make ship\n"
const GOOD_HANDBOOK = "# Task group: deploys\n- make ship\n"
/** How OpenCode 1.18.33 ends a consolidator's session that outgrew the model. */
const OVERFLOW: HelperReply = { text: "", error: { name: "ContextOverflowError", message: "Session too large to compact - context exceeds model limit even after stripping media" } }
const RECORDS = 10
const raw = (i: number) => `- fact ${i}: the deploy of service ${i} runs make ship from its folder after the tests pass.\n`.repeat(110).slice(0, 10_000)
const summary = (i: number) => `Session ${i}: the user set up the deploy of service ${i} and its checks. `.repeat(120).slice(0, 8_000)

let clock: number
let dir: string
let root: string
let db: SqlDatabase
let host: FakeHost

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-overflow2-"))
  root = path.join(dir, "memories")
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
  host.contextLimits.set(`${MODEL.providerID}/${MODEL.modelID}`, 100_000)
  // Ten records of some 4,500 tokens each, newest first in rank.
  for (let i = 0; i < RECORDS; i++) {
    db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ($id, $t, $raw, $summary, $slug, '/p', $t)",
    ).run({ id: `ses_${i}`, t: clock - (i + 1) * HOUR, raw: raw(i), summary: summary(i), slug: `deploy-${i}` })
  }
  new Stage1Jobs(db, () => clock).enqueuePhase2(clock - HOUR)
})
afterEach(() => {
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

async function run() {
  const templates = loadConsolidationTemplates(templatesDir)
  const diagnostics = new Diagnostics(host, () => clock)
  const ledger = new SpendLedger(db, () => clock)
  const p = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    strategy: v1Consolidation(templates),
    templatesDir,
    excludedSessions: () => new MemoryStore(db, () => clock).sessionsNotEnabled(),
    memoryRoot: root,
    jobs: () => new Phase2Jobs(db, () => clock),
    helperSessions: new Set(),
    consolidationModel: () => MODEL,
    onConsolidated: () => undefined,
    diagnostics,
    breaker: new RateLimitBreaker(() => clock),
    workerId: "test",
    recordUsage: (phase, usage) => ledger.record(phase, usage),
  })
  try {
    return { outcome: await p.run(), diagnostics, ledger }
  } finally {
    await p.dispose()
  }
}

/** How many records, in rank order, fit `budget` estimated tokens. */
function fits(budget: number): number {
  let total = 0
  for (let i = 0; i < RECORDS; i++) {
    total += estimateTokens(raw(i)) + estimateTokens(summary(i))
    if (total > budget) return i
  }
  return RECORDS
}

const summaries = () => fs.readdirSync(path.join(root, "rollout_summaries")).filter((name) => name.endsWith(".md")).length
const job = () => db.prepare("SELECT status, retry_remaining, retry_at, last_error, overflow_budgets FROM jobs WHERE kind = 'memory_consolidate_global'").get<Record<string, unknown>>()
const selected = () => Number(db.prepare("SELECT COUNT(*) AS n FROM stage1_outputs WHERE selected_for_phase2 = 1").get<{ n: number }>()?.n)
const shrinkLines = (diagnostics: Diagnostics) => diagnostics.recent().filter((d) => d.level === "info" && /too large for the model/.test(d.message)).map((d) => d.message)

describe("a consolidation too large for the model", () => {
  it("derives its input budget from the model's window", () => {
    expect(consolidationInputBudget(100_000)).toBe(40_000)
    expect(consolidationInputBudget(16_000)).toBe(4_000)
    expect(consolidationInputBudget(1_000_000)).toBe(580_000)
    expect(consolidationInputBudget(undefined)).toBe(250_000)
  })

  it("runs again at once with two thirds of the inputs' budget, on a folder put back as it was, and succeeds without spending a retry", async () => {
    const seen: Array<{ summaries: number; stray: boolean; handbook: boolean }> = []
    host.responder = (_id, prompt) => {
      const d = prompt.directory
      seen.push({ summaries: summaries(), stray: fs.existsSync(path.join(d, "stray.md")), handbook: fs.existsSync(path.join(d, "MEMORY.md")) })
      if (seen.length <= 2) {
        // What an agent wrote before its session outgrew the model is undone before the next attempt.
        fs.writeFileSync(path.join(d, "stray.md"), "half done")
        fs.writeFileSync(path.join(d, "MEMORY.md"), "half a handbook")
        return OVERFLOW
      }
      fs.writeFileSync(path.join(d, "MEMORY.md"), GOOD_HANDBOOK)
      fs.writeFileSync(path.join(d, "memory_summary.md"), GOOD_SUMMARY)
      return { text: "done" }
    }
    const { outcome, diagnostics, ledger } = await run()
    expect(outcome).toMatchObject({ type: "succeeded" })
    const budgets = [40_000, 26_666, 17_777]
    expect(fits(budgets[0]!)).toBeGreaterThan(fits(budgets[2]!))
    expect(seen).toEqual(budgets.map((budget) => ({ summaries: fits(budget), stray: false, handbook: false })))
    expect(host.prompts).toHaveLength(3)
    expect(host.deleted).toHaveLength(3)
    expect(fs.existsSync(path.join(root, "stray.md"))).toBe(false)
    expect(fs.readFileSync(path.join(root, "MEMORY.md"), "utf8")).toBe(GOOD_HANDBOOK)
    expect(hasWholeSnapshot(root)).toBe(false)
    // The run consumed what the last attempt was given, and spent no retry.
    expect(selected()).toBe(fits(budgets[2]!))
    expect(job()).toMatchObject({ status: "done", retry_remaining: 3, last_error: null, overflow_budgets: "[40000,26666]" })
    expect(ledger.report().today).toMatchObject({ sessions: 3, overflows: 2 })
    expect(shrinkLines(diagnostics)).toEqual([
      `the consolidation's inputs were too large for the model (40000 tokens budgeted, ${fits(40_000)} input(s)); retrying with 26666 (${fits(26_666)} input(s))`,
      `the consolidation's inputs were too large for the model (26666 tokens budgeted, ${fits(26_666)} input(s)); retrying with 17777 (${fits(17_777)} input(s))`,
    ])
  })

  it("fails with the ordinary backoff after exactly three shrinks, with the folder as it was", async () => {
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "stray.md"), "half done")
      return OVERFLOW
    }
    const { outcome, diagnostics, ledger } = await run()
    expect(outcome).toMatchObject({ type: "failed" })
    expect(host.prompts).toHaveLength(4)
    expect(fs.existsSync(path.join(root, "stray.md"))).toBe(false)
    expect(hasWholeSnapshot(root)).toBe(false)
    const row = job()
    expect(row).toMatchObject({ status: "failed", retry_remaining: 2, retry_at: clock + HOUR, overflow_budgets: "[40000,26666,17777,11851]" })
    expect(row?.last_error).toBe(
      "consolidation agent failed: the inputs were too large for the model at every budget tried (40000, 26666, 17777, 11851 tokens): ContextOverflowError: Session too large to compact - context exceeds model limit even after stripping media",
    )
    expect(shrinkLines(diagnostics)).toHaveLength(3)
    expect(ledger.report().today).toMatchObject({ sessions: 4, overflows: 4 })
    expect(selected()).toBe(0)
  })

  it("fails any other error with the backoff at once", async () => {
    host.responder = () => ({ text: "", error: { name: "APIError", message: "Internal Server Error", status: 500 } })
    const { outcome, diagnostics, ledger } = await run()
    expect(outcome).toMatchObject({ type: "failed" })
    expect(host.prompts).toHaveLength(1)
    expect(job()).toMatchObject({ status: "failed", retry_remaining: 2, retry_at: clock + HOUR, last_error: "consolidation agent failed: APIError: Internal Server Error", overflow_budgets: null })
    expect(shrinkLines(diagnostics)).toEqual([])
    expect(ledger.report().today).toMatchObject({ sessions: 1, overflows: 0 })
  })
})
