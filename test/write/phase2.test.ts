import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import git from "isomorphic-git"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../src/diagnostics.js"
import { parseOptions } from "../../src/options.js"
import { openDatabase } from "../../src/store/database.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { loadConsolidationTemplates } from "../../src/write/consolidate-prompt.js"
import { RateLimitBreaker } from "../../src/write/breaker.js"
import { Phase2 } from "../../src/write/phase2.js"
import { helperSessionRules, memoryRootForms } from "../../src/write/helper-sandbox.js"
import { FakeHost } from "../fakes/host.js"

const templatesDir = fileURLToPath(new URL("../../templates", import.meta.url))
const templates = loadConsolidationTemplates(templatesDir)
const HOUR = 3_600_000

let clock: number
let db: SqlDatabase
let host: FakeHost
let root: string
let consolidated: number
const disposers: Array<() => Promise<void>> = []

let breaker: RateLimitBreaker
let model: { providerID: string; modelID: string } | undefined

function phase2() {
  const jobs = new Phase2Jobs(db, () => clock)
  const p = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    templates,
    templatesDir,
    memoryRoot: root,
    jobs: () => jobs,
    helperSessions: new Set(),
    consolidationModel: () => model,
    onConsolidated: () => consolidated++,
    breaker,
    workerId: "test",
  })
  disposers.push(() => p.dispose())
  return p
}

function seedOutput(sessionId: string, summary = "A session about deploys.") {
  db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ($id, $t, '- deploy with make ship', $summary, 'deploys', '/p', $t)",
  ).run({ id: sessionId, t: clock - HOUR, summary })
  new Stage1Jobs(db, () => clock).enqueuePhase2(clock - HOUR)
}

/** A consolidator that writes valid artifacts through the file system, as the agent's tools would. */
function writingConsolidator(summary = "v1\n## What's in memory\n- deploys\n") {
  host.responder = (_id, prompt) => {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# Task group: deploys\n- make ship\n")
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), summary)
    return { text: "done" }
  }
}

const row = () => db.prepare("SELECT status, last_error, last_success_at, lease_until FROM jobs WHERE kind = 'memory_consolidate_global'").get<Record<string, unknown>>()

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p2-"))
  root = path.join(dir, "memories")
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
  consolidated = 0
  breaker = new RateLimitBreaker(() => clock)
  model = undefined
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
})

describe("phase 2", () => {
  it("consolidates with the memorize agent in the memory folder, then resets the baseline to one commit", async () => {
    seedOutput("ses_a")
    writingConsolidator()
    expect(await phase2().run()).toEqual({ type: "succeeded", changes: expect.any(Number) })
    const call = host.prompts[0]!
    expect(call.prompt).toMatchObject({ agent: "memorize", directory: root })
    // The helper session carries its own deny-first rules, confined to the memory folder.
    expect(host.created.map((c) => c.input.permission)).toEqual([helperSessionRules("consolidate", memoryRootForms(root))])
    expect(call.prompt.system).toContain("This is the first consolidation")
    expect(fs.existsSync(path.join(root, "phase2_workspace_diff.md"))).toBe(false)
    expect(await git.log({ fs, dir: root })).toHaveLength(1)
    expect(row()).toMatchObject({ status: "done", last_success_at: clock })
    expect(db.prepare("SELECT selected_for_phase2 FROM stage1_outputs").get()).toEqual({ selected_for_phase2: 1 })
    expect(consolidated).toBe(1)
    expect(host.deleted).toHaveLength(1)
  })

  it("succeeds without any model call when nothing changed and the artifacts are valid", async () => {
    seedOutput("ses_a")
    writingConsolidator()
    await phase2().run()
    clock += 7 * HOUR
    new Stage1Jobs(db, () => clock).enqueuePhase2(clock)
    expect(await phase2().run()).toEqual({ type: "succeeded_no_changes" })
    expect(host.prompts).toHaveLength(1)
  })

  it("does nothing and starts no cooldown when there is nothing to consolidate yet", async () => {
    new Stage1Jobs(db, () => clock).enqueuePhase2(1)
    expect(await phase2().run()).toEqual({ type: "nothing_to_do" })
    expect(host.prompts).toHaveLength(0)
    expect(row()?.last_success_at).toBeNull()
    // The first real memory is consolidated at once, not 6 h later.
    seedOutput("ses_a")
    writingConsolidator()
    expect((await phase2().run()).type).toBe("succeeded")
  })

  it("fails on invalid artifacts and keeps the baseline and its diff for the next run", async () => {
    seedOutput("ses_a")
    writingConsolidator("no version line\n")
    expect(await phase2().run()).toMatchObject({ type: "failed", reason: expect.stringContaining("invalid artifacts") })
    expect(row()).toMatchObject({ status: "failed", last_success_at: null })
    const head = await git.resolveRef({ fs, dir: root, ref: "HEAD" })
    const log = await git.log({ fs, dir: root })
    expect(log).toHaveLength(1)
    expect(log[0]!.oid).toBe(head)
    expect(consolidated).toBe(0)
  })

  it("keeps the lease when the helper session cannot be confirmed deleted", async () => {
    seedOutput("ses_a")
    writingConsolidator()
    host.deleteSession = async () => false
    expect(await phase2().run()).toMatchObject({ type: "failed", reason: expect.stringContaining("could not be confirmed deleted") })
    expect(row()).toMatchObject({ status: "running", lease_until: clock + HOUR })
  })

  it("runs one consolidation at a time across instances", async () => {
    seedOutput("ses_a")
    let release: () => void = () => undefined
    host.responder = (_id, prompt) =>
      new Promise((resolve) => {
        release = () => {
          fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# m\n")
          fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n")
          resolve({ text: "done" })
        }
      })
    const first = phase2().run()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await phase2().run()).toEqual({ type: "skipped", reason: "skipped_running" })
    release()
    expect((await first).type).toBe("succeeded")
  })

  it("pauses a rate-limited model for an hour without spending a retry", async () => {
    seedOutput("ses_a")
    model = { providerID: "acme", modelID: "big" }
    host.responder = () => ({ text: "", error: { name: "APIError", message: "Rate limit reached", status: 429 } })
    expect((await phase2().run()).type).toBe("failed")
    expect(db.prepare("SELECT retry_remaining FROM jobs WHERE kind = 'memory_consolidate_global'").get()).toEqual({ retry_remaining: 3 })
    expect(breaker.check("acme/big")).toBeDefined()
    expect(await phase2().run()).toEqual({ type: "skipped", reason: "rate_limited" })
    expect(host.prompts).toHaveLength(1)
    clock += HOUR + 1
    expect(breaker.check("acme/big")).toBeUndefined()
  })

  it("asks for the medium effort, or the nearest one the model lists", async () => {
    seedOutput("ses_a")
    model = { providerID: "acme", modelID: "big" }
    host.variants.set("acme/big", ["low", "high"])
    writingConsolidator()
    await phase2().run()
    expect(host.prompts[0]!.prompt).toMatchObject({ model, variant: "high" })
  })

  it("gives the claim back when disposed mid-run", async () => {
    seedOutput("ses_a")
    host.responder = (_id, _prompt, signal) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    const p = phase2()
    const run = p.run()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await p.dispose()
    expect(await run).toEqual({ type: "released" })
    expect(row()).toMatchObject({ status: "pending", lease_until: null })
    expect(host.aborted).toHaveLength(1)
  })
})
