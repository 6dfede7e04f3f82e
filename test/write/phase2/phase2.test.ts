import { v1Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { VersionStore } from "../../../src/store/version-store.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import git from "isomorphic-git"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { Phase2 } from "../../../src/write/phase2/phase2.js"
import { helperSessionRules, memoryRootForms } from "../../../src/write/helpers/helper-sandbox.js"
import { FakeHost } from "../../fakes/host.js"
import { addNote } from "../../../src/backend/notes.js"
import { redact } from "../../../src/redact/redact.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { markPolluted } from "../../../src/store/pollution.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const templates = loadConsolidationTemplates(templatesDir)
const HOUR = 3_600_000

let clock: number
let db: SqlDatabase
let host: FakeHost
let root: string
let consolidated: number
const disposers: Array<() => Promise<void>> = []

let breaker: RateLimitBreaker
let diagnostics: Diagnostics
let model: { providerID: string; modelID: string } | undefined

function phase2(jobs: Phase2Jobs = new Phase2Jobs(db, () => clock), extra: Partial<ConstructorParameters<typeof Phase2>[0]> = {}) {
  const p = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    strategy: v1Consolidation(templates),
    templatesDir,
    excludedSessions: () => new MemoryStore(db, () => clock).sessionsNotEnabled(),
    memoryRoot: root,
    jobs: () => jobs,
    helperSessions: new Set(),
    consolidationModel: () => model,
    onConsolidated: () => consolidated++,
    diagnostics,
    breaker,
    workerId: "test",
    ...extra,
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

/** The workspace diff each consolidator was given, in order. */
let diffs: string[] = []

/** A consolidator that writes valid artifacts through the file system, as the agent's tools would. */
function writingConsolidator(summary = "v1\n## What's in memory\n- deploys\n") {
  host.responder = (_id, prompt) => {
    diffs.push(fs.readFileSync(path.join(prompt.directory, "phase2_workspace_diff.md"), "utf8"))
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `# Task group: deploys\n- make ship\n- run ${diffs.length}\n`)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), summary)
    return { text: "done" }
  }
}

/** The status lines of a workspace diff ("A path", "D path"). */
const statusOf = (diff: string) => diff.split("\n").filter((line) => /^- [AMD] /.test(line)).map((line) => line.slice(2))

const note = (title: string, text: string) => addNote({ root, now: () => new Date(clock), redact }, { title, note: text })

const row = () => db.prepare("SELECT status, last_error, last_success_at, lease_until FROM jobs WHERE kind = 'memory_consolidate_global'").get<Record<string, unknown>>()

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p2-"))
  root = path.join(dir, "memories")
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
  consolidated = 0
  diffs = []
  breaker = new RateLimitBreaker(() => clock)
  diagnostics = new Diagnostics(host, () => clock)
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

  it("does nothing, leaves the folder alone and starts no cooldown when there is nothing to consolidate yet", async () => {
    expect(await phase2().run()).toEqual({ type: "nothing_to_do" })
    expect(host.prompts).toHaveLength(0)
    expect(fs.existsSync(root)).toBe(false)
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

  it("deletes a symlink the consolidator left when its run failed", async () => {
    seedOutput("ses_a")
    host.responder = (_id, prompt) => {
      fs.symlinkSync("/etc/hostname", path.join(prompt.directory, "leak.md"))
      return { text: "", error: { name: "APIError", message: "the model gave up" } }
    }
    expect(await phase2().run()).toMatchObject({ type: "failed" })
    expect(fs.lstatSync(path.join(root, "leak.md"), { throwIfNoEntry: false })).toBeUndefined()
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
    let prompted: () => void = () => undefined
    const consolidating = new Promise<void>((resolve) => (prompted = resolve))
    host.responder = (_id, prompt) =>
      new Promise((resolve) => {
        release = () => {
          fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# m\n")
          fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n")
          resolve({ text: "done" })
        }
        prompted()
      })
    const first = phase2().run()
    // Wait for the consolidator itself rather than for a time, which a busy machine can outlast.
    await consolidating
    expect(await phase2().run()).toEqual({ type: "skipped", reason: "skipped_running" })
    release()
    expect((await first).type).toBe("succeeded")
  })

  it("a trigger while a run is under way is not dropped: one more run follows it", async () => {
    // The run under way may have looked before the record that triggered was stored.
    let runs = 0
    let release: () => void = () => undefined
    let looking: () => void = () => undefined
    const looked = new Promise<void>((resolve) => (looking = resolve))
    const gate = new Promise<void>((resolve) => (release = resolve))
    const p = phase2(undefined, {
      hold: () => (runs++, undefined),
      beforeSelect: async () => {
        looking()
        await gate
      },
    })
    p.trigger()
    await looked
    p.trigger()
    p.trigger()
    release()
    await p.settled()
    expect(runs).toBe(2)
  })

  it("gives no record room to crowd the others out: one OpenCode read of raw_memories.md shows every session", async () => {
    // A record stored before the caps: megabytes of raw memory, ranked first by its recent update.
    db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ('ses_huge', $t, $raw, $raw, 'huge', '/p', $t)",
    ).run({ t: clock - 60_000, raw: "junk line\n".repeat(300_000) })
    for (const id of ["ses_one", "ses_two", "ses_three"]) seedOutput(id)
    let firstPage = ""
    host.responder = (_id, prompt) => {
      // What OpenCode 1.18.33's read tool returns at most: 2,000 lines or 51,200 bytes.
      const bytes = fs.readFileSync(path.join(prompt.directory, "raw_memories.md"))
      firstPage = bytes.subarray(0, 51_200).toString("utf8").split("\n").slice(0, 2_000).join("\n")
      fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "# Task group: all\n")
      fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\n")
      return { text: "done" }
    }
    expect(await phase2().run()).toMatchObject({ type: "succeeded" })
    for (const id of ["ses_huge", "ses_one", "ses_two", "ses_three"]) expect(firstPage).toContain(`## Session \`${id}\``)
    expect(firstPage).toMatch(/Sessions are listed in ascending session id order: 4 sessions, \d+ lines in all/)
  })

  it("waits for this instance's extractions in flight, so their records are in the run that follows them", async () => {
    seedOutput("ses_a")
    writingConsolidator()
    let stored: () => void = () => undefined
    const extraction = new Promise<void>((resolve) => (stored = resolve))
    const p = phase2(undefined, { extractionsSettled: () => extraction })
    const run = p.run()
    // The record lands while the run waits; without the wait the run would consolidate ses_a alone.
    await new Promise((resolve) => setTimeout(resolve, 20))
    seedOutput("ses_b")
    stored()
    expect(await run).toMatchObject({ type: "succeeded" })
    expect(statusOf(diffs[0]!).filter((line) => line.startsWith("A rollout_summaries/"))).toHaveLength(2)
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
    let prompted: () => void = () => undefined
    const consolidating = new Promise<void>((resolve) => (prompted = resolve))
    host.responder = (_id, _prompt, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason))
        prompted()
      })
    const p = phase2()
    const run = p.run()
    await consolidating
    await p.dispose()
    expect(await run).toEqual({ type: "released" })
    expect(row()).toMatchObject({ status: "pending", lease_until: null })
    expect(host.aborted).toHaveLength(1)
  })
})

describe("phase 2 wakes for every change the workspace would show", () => {
  /** A first consolidation of `ses_a` (and any other seeded output), then `hours` later. */
  async function consolidatedThenLater(hours: number) {
    writingConsolidator()
    expect((await phase2().run()).type).toBe("succeeded")
    const succeededAt = clock
    clock += hours * HOUR
    return succeededAt
  }

  it("a note alone, with no session, is consolidated once the cooldown allows", async () => {
    seedOutput("ses_a")
    await consolidatedThenLater(1)
    const written = note("Deploy day", "Never deploy acme-api on Fridays.")
    const p = phase2()
    p.wake()
    await p.settled()
    // Within 6 h of the last consolidation the note waits, as any input does in Codex.
    expect(row()).toMatchObject({ status: "pending" })
    expect(host.prompts).toHaveLength(1)
    clock += 5 * HOUR
    expect(await phase2().run()).toMatchObject({ type: "succeeded" })
    expect(statusOf(diffs[1]!)).toEqual([`A ${written.path}`])
    expect(consolidated).toBe(2)
  })

  it("a note on a fresh install is consolidated with nothing else selected", async () => {
    note("Editor", "The user prefers tabs.")
    writingConsolidator()
    const p = phase2()
    p.wake()
    await p.settled()
    expect(host.prompts).toHaveLength(1)
    expect(host.prompts[0]!.prompt.system).toContain("every extension's files (notes included)")
    expect(row()).toMatchObject({ status: "done" })
  })

  it("a disabled session's record leaving the selection is forgotten at the next consolidation, even right after a check that found nothing", async () => {
    seedOutput("ses_a")
    seedOutput("ses_b", "A session about builds.")
    await consolidatedThenLater(7)
    expect(await phase2().run()).toEqual({ type: "succeeded_no_changes" })
    const summaries = fs.readdirSync(path.join(root, "rollout_summaries"))
    new MemoryStore(db, () => clock).setMode("ses_a", "disabled")
    expect(new VersionStore("v1", db, () => clock).queueIfHasOutput("ses_a")).toBe(true)
    expect(await phase2().run()).toMatchObject({ type: "succeeded" })
    const gone = summaries.filter((name) => !fs.readdirSync(path.join(root, "rollout_summaries")).includes(name))
    expect(gone).toHaveLength(1)
    expect(statusOf(diffs[1]!)).toEqual(["M raw_memories.md", `D rollout_summaries/${gone[0]}`])
    expect(diffs[1]).toContain("-session_id: ses_a")
  })

  it("a polluted session's record leaving the selection is forgotten at the next consolidation", async () => {
    seedOutput("ses_a")
    seedOutput("ses_b", "A session about builds.")
    await consolidatedThenLater(7)
    expect(await phase2().run()).toEqual({ type: "succeeded_no_changes" })
    expect(markPolluted(db, "ses_a", clock)).toEqual({ changed: true })
    expect(new VersionStore("v1", db, () => clock).queueIfHasOutput("ses_a", { selectedOnly: true })).toBe(true)
    expect(await phase2().run()).toMatchObject({ type: "succeeded" })
    expect(statusOf(diffs[1]!)).toContainEqual(expect.stringMatching(/^D rollout_summaries\//))
    expect(diffs[1]).toContain("-session_id: ses_a")
  })

  it("a record ageing out of the selection window is forgotten with nothing queued, once the last check is 6 h old", async () => {
    // 29 days old: selected now, out of the 30-day window a day later.
    db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ('ses_old', $t, '- old fact', 'old', 'old', '/p', $t)",
    ).run({ t: clock - 29 * 24 * HOUR })
    seedOutput("ses_a")
    await consolidatedThenLater(7)
    expect(await phase2().run()).toEqual({ type: "succeeded_no_changes" })
    clock += 3 * HOUR
    // Nothing was queued and the check is recent: no look at the folder at all.
    expect(await phase2().run()).toEqual({ type: "skipped", reason: "skipped_unchanged" })
    clock += 20 * HOUR
    expect(row()).toMatchObject({ status: "done" })
    expect(await phase2().run()).toMatchObject({ type: "succeeded" })
    expect(diffs[1]).toContain("-session_id: ses_old")
    expect(statusOf(diffs[1]!)).toContainEqual(expect.stringMatching(/^D rollout_summaries\//))
  })

  it("nothing changed: no model call, no cooldown, and the next real change is consolidated at once", async () => {
    seedOutput("ses_a")
    const succeededAt = await consolidatedThenLater(7)
    const checks = phase2()
    expect(await checks.run()).toEqual({ type: "succeeded_no_changes" })
    expect(host.prompts).toHaveLength(1)
    expect(row()).toMatchObject({ status: "done", last_success_at: succeededAt })
    expect(consolidated).toBe(1)
    // A repeated trigger does not hash the folder again while nothing is queued.
    fs.writeFileSync(path.join(root, "MEMORY.md"), "edited by hand, seen at the next unqueued look\n")
    expect(await checks.run()).toEqual({ type: "skipped", reason: "skipped_unchanged" })
    clock += 60_000
    note("Shell", "The user's shell is fish.")
    checks.wake()
    await checks.settled()
    expect(host.prompts).toHaveLength(2)
    expect(statusOf(diffs[1]!)).toEqual(["M MEMORY.md", expect.stringMatching(/^A extensions\/ad_hoc\/notes\/.*-shell\.md$/)])
  })

  it("a mark-done that lost ownership reports no success and leaves the read path alone", async () => {
    seedOutput("ses_a")
    writingConsolidator()
    class TakenOver extends Phase2Jobs {
      override succeed(): boolean {
        return false
      }
    }
    const outcome = await phase2(new TakenOver(db, () => clock)).run()
    expect(outcome).toMatchObject({ type: "lost_ownership", reason: expect.stringContaining("marking the consolidation done") })
    expect(consolidated).toBe(0)
    expect(host.logs.map((log) => log.message).join("\n")).not.toMatch(/consolidated \d+ input/)
    expect(host.logs).toContainEqual(expect.objectContaining({ level: "warn", message: expect.stringContaining("lost the consolidation job") }))
  })

  it("an unchanged check that lost ownership is reported, not recorded", async () => {
    seedOutput("ses_a")
    await consolidatedThenLater(7)
    class TakenOver extends Phase2Jobs {
      override finishUnchanged(): boolean {
        return false
      }
    }
    expect(await phase2(new TakenOver(db, () => clock)).run()).toMatchObject({ type: "lost_ownership" })
    expect(row()).toMatchObject({ status: "running" })
    expect(consolidated).toBe(1)
  })
})
