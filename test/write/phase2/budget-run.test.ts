// A consolidation that leaves MEMORY.md or a skill over the size budget gets the consolidator once
// more at once, on its own attempt and told which files to shorten; still over, the run fails with the
// ordinary backoff and the folder goes back as it was (issue 39, D31).
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { SpendLedger } from "../../../src/store/ledger.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { v1Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { Phase2 } from "../../../src/write/phase2/phase2.js"
import { hasWholeSnapshot } from "../../../src/write/phase2/run-snapshot.js"
import { FakeHost } from "../../fakes/host.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const HOUR = 3_600_000
const MODEL = { providerID: "local", modelID: "mid-100k" }
const GOOD_SUMMARY = "v1\n## What's in memory\n- deploys use make ship\n"
const GOOD_HANDBOOK = "# Task group: deploys\n- make ship\n"
const RECORDS = 2
const raw = (i: number) => `- fact ${i}: the deploy of service ${i} runs make ship from its folder after the tests pass.\n`.repeat(110).slice(0, 10_000)
const summary = (i: number) => `Session ${i}: the user set up the deploy of service ${i} and its checks. `.repeat(120).slice(0, 8_000)

let clock: number
let dir: string
let root: string
let db: SqlDatabase
let host: FakeHost

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-budget-"))
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

async function run(options: Record<string, unknown> = { memory_max_lines: 20, skill_max_bytes: 400 }) {
  const templates = loadConsolidationTemplates(templatesDir)
  const diagnostics = new Diagnostics(host, () => clock)
  const ledger = new SpendLedger(db, () => clock)
  const p = new Phase2({
    host,
    options: parseOptions(options).options,
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

const job = () => db.prepare("SELECT status, retry_remaining, retry_at, last_error FROM jobs WHERE kind = 'memory_consolidate_global'").get<Record<string, unknown>>()
const selected = () => Number(db.prepare("SELECT COUNT(*) AS n FROM stage1_outputs WHERE selected_for_phase2 = 1").get<{ n: number }>()?.n)
const lines = (n: number) => Array.from({ length: n }, (_, i) => `- learned fact ${i}`).join("\n") + "\n"
const OLD_HANDBOOK = "# Task group: old\n- the old fact\n"

/** A first consolidation that succeeds, so the folder holds an old memory to keep. */
async function seedOldMemory(handbook = OLD_HANDBOOK, options?: Record<string, unknown>): Promise<void> {
  host.responder = (_id, prompt) => {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), handbook)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), GOOD_SUMMARY)
    return { text: "done" }
  }
  expect((await run(options)).outcome).toMatchObject({ type: "succeeded" })
  host.prompts.length = 0
  clock += 7 * HOUR
  db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ('ses_new', $t, '- a new fact', 'Session new.', 'new', '/p', $t)",
  ).run({ t: clock - HOUR })
  new Stage1Jobs(db, () => clock).enqueuePhase2(clock - HOUR)
}

describe("a consolidation over the size budget", () => {
  it("runs the consolidator once more on its own attempt, told which files to shorten, and succeeds when it does", async () => {
    await seedOldMemory()
    const seen: string[] = []
    host.responder = (_id, prompt) => {
      const d = prompt.directory
      seen.push(fs.readFileSync(path.join(d, "MEMORY.md"), "utf8"))
      if (seen.length === 1) {
        fs.writeFileSync(path.join(d, "MEMORY.md"), lines(25))
        fs.mkdirSync(path.join(d, "skills", "deploy"), { recursive: true })
        fs.writeFileSync(path.join(d, "skills", "deploy", "SKILL.md"), "x".repeat(500) + "\n")
      } else {
        fs.writeFileSync(path.join(d, "MEMORY.md"), lines(20))
        fs.writeFileSync(path.join(d, "skills", "deploy", "SKILL.md"), "x".repeat(399) + "\n")
      }
      return { text: "done" }
    }
    const { outcome, diagnostics } = await run()
    expect(outcome).toMatchObject({ type: "succeeded" })
    expect(host.prompts).toHaveLength(2)
    // The retry starts from the first attempt, not from the old memory.
    expect(seen).toEqual([OLD_HANDBOOK, lines(25)])
    expect(host.prompts[0]!.prompt.system).not.toContain("Size budget")
    const retry = host.prompts[1]!.prompt.system
    expect(retry).toContain("## Size budget: shorten before you finish")
    expect(retry).toContain("- MEMORY.md is 25 lines (limit 20, 5 over)")
    expect(retry).toContain("- skills/deploy/SKILL.md is 501 bytes (limit 400, 101 over)")
    expect(fs.readFileSync(path.join(root, "MEMORY.md"), "utf8")).toBe(lines(20))
    expect(hasWholeSnapshot(root)).toBe(false)
    expect(job()).toMatchObject({ status: "done", retry_remaining: 3, last_error: null })
    expect(selected()).toBe(RECORDS + 1)
    expect(diagnostics.recent().some((d) => /over the size budget \(MEMORY\.md is 25 lines/.test(d.message))).toBe(true)
  })

  it("fails with the ordinary backoff when the retry is still over, the old memory intact", async () => {
    await seedOldMemory()
    const oldSelected = selected()
    host.responder = (_id, prompt) => {
      const file = path.join(prompt.directory, "MEMORY.md")
      fs.writeFileSync(file, fs.readFileSync(file, "utf8") + lines(30))
      fs.writeFileSync(path.join(prompt.directory, "stray.md"), "half done")
      return { text: "done" }
    }
    const { outcome } = await run()
    expect(outcome).toMatchObject({ type: "failed" })
    expect(host.prompts).toHaveLength(2)
    expect(host.prompts[1]!.prompt.system).toContain("- MEMORY.md is 32 lines (limit 20, 12 over)")
    expect(fs.readFileSync(path.join(root, "MEMORY.md"), "utf8")).toBe(OLD_HANDBOOK)
    expect(fs.existsSync(path.join(root, "stray.md"))).toBe(false)
    expect(hasWholeSnapshot(root)).toBe(false)
    expect(job()).toMatchObject({
      status: "failed",
      retry_remaining: 2,
      retry_at: clock + HOUR,
      last_error: "over the size budget after a retry asked to shorten it: MEMORY.md is 62 lines (limit 20, 42 over)",
    })
    expect(selected()).toBe(oldSelected)
  })

  it("shows the consolidator MEMORY.md's repeated entries to merge", async () => {
    await seedOldMemory("# Task group: deploys\n- run make ship after the tests pass\n- Run `make ship` after the tests pass.\n- something else entirely different here\n")
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), OLD_HANDBOOK)
      return { text: "done" }
    }
    expect((await run()).outcome).toMatchObject({ type: "succeeded" })
    const system = host.prompts[0]!.prompt.system
    expect(system).toContain("## Repeated entries in MEMORY.md")
    expect(system).toContain('- lines 2, 3 (exact): "run make ship after the tests pass"')
    expect(system).not.toContain("Size budget")
  })

  it("names a handbook already over budget to the run's first attempt", async () => {
    await seedOldMemory(lines(30), { memory_max_lines: 0 })
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), lines(10))
      return { text: "done" }
    }
    expect((await run()).outcome).toMatchObject({ type: "succeeded" })
    expect(host.prompts).toHaveLength(1)
    const system = host.prompts[0]!.prompt.system
    expect(system).toContain("These files are already over their size budget")
    expect(system).toContain("- MEMORY.md is 30 lines (limit 20, 10 over)")
  })

  it("is not checked when its bounds are off", async () => {
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), lines(5_000))
      fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), GOOD_SUMMARY)
      return { text: "done" }
    }
    const { outcome } = await run({ memory_max_lines: 0, memory_max_bytes: 0 })
    expect(outcome).toMatchObject({ type: "succeeded" })
    expect(host.prompts).toHaveLength(1)
  })
})
