// The phase-1 job rules on a real SQLite file. Like storage-suite.ts, it runs under Node with
// better-sqlite3 (stage1-jobs.test.ts) and under Bun with bun:sqlite (bun-runner.ts), so it uses
// only node:assert. Each case has its own file and clock; "processes" share the clock but each
// has its own connection, as separate OpenCode processes would.
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { JOBS, STAGE_ONE } from "../../src/constants.js"
import { openDatabase } from "../../src/store/database.js"
import { leaseBoot, leaseOwners, type LeaseOwners } from "../../src/store/lease-owner.js"
import { MIGRATIONS } from "../../src/store/migrations.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import { Stage1Jobs, type Stage1Candidate, type Stage1Claim, type Stage1Output } from "../../src/store/stage1-jobs.js"

export interface Stage1Context {
  /** Starts `count` processes that each run claim-worker.ts on `file` over `sessions` candidates at the same moment. */
  claimInProcesses(file: string, sessions: number, count: number): Promise<{ code: number | null; output: string }[]>
}

export interface Stage1Case {
  name: string
  run(context: Stage1Context): void | Promise<void>
}

/** The candidates every racer claims from: `count` sessions, newest first. */
export function raceCandidates(count: number): Stage1Candidate[] {
  return Array.from({ length: count }, (_, i) => ({ sessionId: `ses_${String(i).padStart(3, "0")}`, updatedAt: 10_000 - i }))
}

const START = 1_000_000
const HOUR = 60 * 60 * 1000
const OPTIONS = { workerId: "worker-a", maxRunning: 8 }
const OUTPUT: Stage1Output = { rawMemory: "raw", rolloutSummary: "summary", slug: "fix-the-build", cwd: "/work/app" }

interface Fixture {
  file: string
  clock: { now: number }
  /** A new connection to the case's file, as another process would have; `owners` defaults to this process. */
  connect(owners?: LeaseOwners): Stage1Jobs
}

interface JobRecord {
  status: string
  owner_pid: number | null
  owner_boot: string | null
  worker_id: string | null
  ownership_token: string | null
  started_at: number | null
  finished_at: number | null
  lease_until: number | null
  retry_at: number | null
  retry_remaining: number
  last_error: string | null
  input_watermark: number | null
  last_success_watermark: number | null
  last_success_at: number | null
}

/** The id of a process that ran on this machine and has exited (and been reaped). */
export function deadPid(): number {
  const child = spawnSync("sh", ["-c", "exit 0"])
  assert.equal(child.status, 0, String(child.error ?? child.stderr))
  assert.ok(child.pid)
  return child.pid
}

/** Owners with injected liveness: process ids in `dead` are gone, every other one is alive. */
export function fakeOwners(pid: number, boot = "boot-a", dead: readonly number[] = []): LeaseOwners {
  return leaseOwners({ self: { pid, boot }, exists: (candidate) => !dead.includes(candidate) })
}

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-stage1-")), "memory.db")
}

/** Runs `body` on a fresh file and closes every connection it opened. */
function scenario(body: (fixture: Fixture) => void): () => void {
  return () => {
    const file = tempFile()
    const clock = { now: START }
    const opened: SqlDatabase[] = []
    const connect = (owners?: LeaseOwners) => {
      const { db } = openDatabase(file)
      opened.push(db)
      return new Stage1Jobs(db, () => clock.now, owners)
    }
    try {
      body({ file, clock, connect })
    } finally {
      for (const db of opened) db.close()
    }
  }
}

const stage1Job = (jobs: Stage1Jobs, sessionId: string) =>
  jobs.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $id").get<JobRecord>({ kind: JOBS.STAGE1, id: sessionId })

const phase2Job = (jobs: Stage1Jobs) =>
  jobs.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $key").get<JobRecord>({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY })

const output = (jobs: Stage1Jobs, sessionId: string) =>
  jobs.db
    .prepare(
      `SELECT source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at, usage_count, selected_for_phase2,
              selected_for_phase2_source_updated_at
       FROM stage1_outputs WHERE session_id = $id`,
    )
    .get<Record<string, unknown>>({ id: sessionId })

function seedOutput(jobs: Stage1Jobs, sessionId: string, sourceUpdatedAt: number, raw = "old raw"): void {
  jobs.db
    .prepare(
      `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at)
       VALUES ($id, $at, $raw, 'old summary', 1)`,
    )
    .run({ id: sessionId, at: sourceUpdatedAt, raw })
}

/** Compares only the fields `expected` names. */
function assertFields(row: object | undefined, expected: Record<string, unknown>): void {
  assert.ok(row, "row is missing")
  const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, (row as Record<string, unknown>)[key]]))
  assert.deepEqual(actual, expected)
}

function claimed(outcome: ReturnType<Stage1Jobs["claim"]>): Stage1Claim {
  assert.equal(outcome.type, "claimed", `expected a claim, got ${outcome.type}`)
  return outcome as Stage1Claim
}

/** Fails the claim of `sessionId` at `updatedAt`, then moves the clock past the backoff. */
function failOnce(jobs: Stage1Jobs, clock: { now: number }, sessionId: string, updatedAt: number): void {
  const { token } = claimed(jobs.claim({ sessionId, updatedAt }, OPTIONS))
  assert.equal(jobs.fail(sessionId, token, "model error"), true)
  clock.now += STAGE_ONE.RETRY_DELAY_MS
}

export const stage1Cases: Stage1Case[] = [
  {
    name: "the budgets an overflow refused are noted on the owned job, kept through its outcome, and cleared by the next claim",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const first = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.noteOverflow("ses_a", first.token, [7_200]), true)
      assert.equal(jobs.noteOverflow("ses_a", first.token, [7_200, 4_800]), true)
      assert.equal(jobs.noteOverflow("ses_a", "not-the-token", [1]), false)
      assert.equal(jobs.succeed("ses_a", first.token, OUTPUT), true)
      assertFields(stage1Job(jobs, "ses_a"), { status: "done", overflow_budgets: "[7200,4800]", retry_remaining: JOBS.RETRIES })
      // A finished job's note is not the token's to change any more.
      assert.equal(jobs.noteOverflow("ses_a", first.token, [1]), false)
      clock.now += 1_000
      const second = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 600 }, OPTIONS))
      assertFields(stage1Job(jobs, "ses_a"), { status: "running", overflow_budgets: null })
      assert.equal(jobs.noteOverflow("ses_a", second.token, [7_200, 4_800, 3_200, 2_133]), true)
      assert.equal(jobs.fail("ses_a", second.token, "too large at every budget"), true)
      assertFields(stage1Job(jobs, "ses_a"), { status: "failed", overflow_budgets: "[7200,4800,3200,2133]" })
    }),
  },
  {
    name: "a claim then a success stores the output, marks the job done and enqueues phase 2",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const claim = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(claim.sessionId, "ses_a")
      assert.equal(claim.watermark, 500)
      assertFields(stage1Job(jobs, "ses_a"), {
          status: "running",
          worker_id: "worker-a",
          ownership_token: claim.token,
          started_at: START,
          lease_until: START + STAGE_ONE.JOB_LEASE_MS,
          retry_remaining: JOBS.RETRIES,
          input_watermark: 500,
      })
      assert.equal(jobs.runningCount(), 1)

      clock.now += 5_000
      assert.equal(jobs.succeed("ses_a", claim.token, OUTPUT), true)
      assert.deepEqual(output(jobs, "ses_a"), {
        source_updated_at: 500,
        raw_memory: "raw",
        rollout_summary: "summary",
        rollout_slug: "fix-the-build",
        cwd: "/work/app",
        generated_at: START + 5_000,
        usage_count: 0,
        selected_for_phase2: 0,
        selected_for_phase2_source_updated_at: null,
      })
      const job = stage1Job(jobs, "ses_a")
      assert.equal(job?.status, "done")
      assert.equal(job?.last_success_watermark, 500)
      assert.equal(job?.last_success_at, START + 5_000)
      assert.equal(job?.finished_at, START + 5_000)
      assert.equal(job?.lease_until, null)
      assert.equal(job?.ownership_token, null)
      assert.equal(jobs.runningCount(), 0)
      assert.equal(phase2Job(jobs)?.status, "pending")
      assert.equal(phase2Job(jobs)?.input_watermark, 500)
      assert.equal(phase2Job(jobs)?.last_success_at, null)

      // The same watermark is covered now, by the job and by the output.
      assert.equal(jobs.isUpToDate("ses_a", 500), true)
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_up_to_date" })
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 400 }, OPTIONS), { type: "skipped_up_to_date" })
      // A finished claim's token changes nothing any more.
      assert.equal(jobs.succeed("ses_a", claim.token, { ...OUTPUT, rawMemory: "again" }), false)
      assert.equal(output(jobs, "ses_a")?.raw_memory, "raw")
    }),
  },
  {
    name: "a record keeps the git branch it was made with, phase 2 reads it, and a newer record without one clears it",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const branchOf = () => jobs.db.prepare("SELECT git_branch FROM stage1_outputs WHERE session_id = 'ses_a'").get<{ git_branch: string | null }>()?.git_branch
      const first = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.succeed("ses_a", first.token, { ...OUTPUT, gitBranch: "feature/x" }), true)
      assert.equal(branchOf(), "feature/x")
      const inputs = new Phase2Jobs(jobs.db, () => clock.now).selectInputs(10, 3650)
      assert.deepEqual(inputs.map((input) => [input.sessionId, input.gitBranch]), [["ses_a", "feature/x"]])
      clock.now += HOUR
      const second = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 900 }, OPTIONS))
      assert.equal(jobs.succeed("ses_a", second.token, OUTPUT), true)
      assert.equal(branchOf(), null)
    }),
  },
  {
    name: "a record keeps the project it was made in, phase 2 reads it, and a newer record without one clears it",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const projectOf = () => jobs.db.prepare("SELECT project_key, project_name FROM stage1_outputs WHERE session_id = 'ses_a'").get<{ project_key: string | null; project_name: string | null }>()
      const first = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.succeed("ses_a", first.token, { ...OUTPUT, project: { key: "git:/src/app/.git", name: "github.com/acme/app" } }), true)
      assert.deepEqual({ ...projectOf() }, { project_key: "git:/src/app/.git", project_name: "github.com/acme/app" })
      const inputs = new Phase2Jobs(jobs.db, () => clock.now).selectInputs(10, 3650)
      assert.deepEqual(inputs.map((input) => [input.sessionId, input.projectKey, input.projectName]), [["ses_a", "git:/src/app/.git", "github.com/acme/app"]])
      clock.now += HOUR
      const second = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 900 }, OPTIONS))
      assert.equal(jobs.succeed("ses_a", second.token, OUTPUT), true)
      assert.deepEqual({ ...projectOf() }, { project_key: null, project_name: null })
    }),
  },
  {
    name: "a session that changed after its last success is claimed again and its output replaced, keeping usage and selection",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const first = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      jobs.succeed("ses_a", first.token, OUTPUT)
      jobs.db
        .prepare("UPDATE stage1_outputs SET usage_count = 4, selected_for_phase2 = 1, selected_for_phase2_source_updated_at = 500 WHERE session_id = 'ses_a'")
        .run()
      assert.equal(jobs.isUpToDate("ses_a", 501), false)

      clock.now += HOUR
      const second = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 900 }, OPTIONS))
      assert.notEqual(second.token, first.token)
      assert.equal(jobs.succeed("ses_a", second.token, { rawMemory: "new raw", rolloutSummary: "new summary", slug: null, cwd: null }), true)
      assert.deepEqual(output(jobs, "ses_a"), {
        source_updated_at: 900,
        raw_memory: "new raw",
        rollout_summary: "new summary",
        rollout_slug: null,
        cwd: null,
        generated_at: START + HOUR,
        usage_count: 4,
        selected_for_phase2: 1,
        selected_for_phase2_source_updated_at: 500,
      })
      assert.equal(stage1Job(jobs, "ses_a")?.last_success_watermark, 900)
      assert.equal(phase2Job(jobs)?.input_watermark, 900)
    }),
  },
  {
    name: "a success never replaces an output stored from a newer watermark",
    run: scenario(({ connect }) => {
      const jobs = connect()
      const claim = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      // Written meanwhile by another path (an import, an older plugin's run): newer than this claim.
      seedOutput(jobs, "ses_a", 700, "newer raw")
      assert.equal(jobs.succeed("ses_a", claim.token, OUTPUT), true)
      assert.equal(output(jobs, "ses_a")?.raw_memory, "newer raw")
      assert.equal(output(jobs, "ses_a")?.source_updated_at, 700)
      assert.equal(stage1Job(jobs, "ses_a")?.status, "done")
    }),
  },
  {
    name: "a stored output alone makes a session up to date for its watermark",
    run: scenario(({ connect }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", 500)
      assert.equal(jobs.isUpToDate("ses_a", 500), true)
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_up_to_date" })
      assert.equal(stage1Job(jobs, "ses_a"), undefined)
      assert.equal(jobs.isUpToDate("ses_a", 501), false)
      claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 501 }, OPTIONS))
      assert.equal(jobs.hasOutput("ses_a"), true)
      assert.equal(jobs.hasOutput("ses_b"), false)
    }),
  },
  {
    name: "a success with nothing to remember deletes a stored output and enqueues phase 2 only then",
    run: scenario(({ connect }) => {
      const jobs = connect()
      const empty = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.succeedNoOutput("ses_a", empty.token), true)
      assert.equal(stage1Job(jobs, "ses_a")?.status, "done")
      assert.equal(stage1Job(jobs, "ses_a")?.last_success_watermark, 500)
      assert.equal(phase2Job(jobs), undefined)
      assert.equal(jobs.isUpToDate("ses_a", 500), true)

      seedOutput(jobs, "ses_b", 300)
      const stale = claimed(jobs.claim({ sessionId: "ses_b", updatedAt: 800 }, OPTIONS))
      assert.equal(jobs.succeedNoOutput("ses_b", stale.token), true)
      assert.equal(output(jobs, "ses_b"), undefined)
      assert.equal(phase2Job(jobs)?.status, "pending")
      assert.equal(phase2Job(jobs)?.input_watermark, 800)
      assert.equal(jobs.succeedNoOutput("ses_b", stale.token), false)
    }),
  },
  {
    name: "a failure spends a retry, clears the lease and holds the session back for an hour",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const claim = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.fail("ses_a", claim.token, "model error"), true)
      const job = stage1Job(jobs, "ses_a")
      assert.equal(job?.status, "failed")
      assert.equal(job?.retry_remaining, JOBS.RETRIES - 1)
      assert.equal(job?.retry_at, START + STAGE_ONE.RETRY_DELAY_MS)
      assert.equal(job?.last_error, "model error")
      assert.equal(job?.lease_until, null)
      assert.equal(job?.ownership_token, null)
      assert.equal(jobs.runningCount(), 0)
      assert.equal(phase2Job(jobs), undefined)

      clock.now += STAGE_ONE.RETRY_DELAY_MS - 1
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_retry_backoff" })
      clock.now += 1
      const retry = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      // A retry at the same watermark does not get its budget back.
      assert.equal(stage1Job(jobs, "ses_a")?.retry_remaining, JOBS.RETRIES - 1)
      assert.equal(stage1Job(jobs, "ses_a")?.retry_at, null)
      assert.equal(jobs.fail("ses_a", retry.token, "again"), true)
      assert.equal(stage1Job(jobs, "ses_a")?.retry_remaining, JOBS.RETRIES - 2)
    }),
  },
  {
    name: "three failures at one watermark exhaust the retries for good",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      for (let i = 0; i < JOBS.RETRIES; i++) failOnce(jobs, clock, "ses_a", 500)
      assert.equal(stage1Job(jobs, "ses_a")?.retry_remaining, 0)
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_retry_exhausted" })
      clock.now += 100 * HOUR
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_retry_exhausted" })
      assert.equal(stage1Job(jobs, "ses_a")?.status, "failed")
    }),
  },
  {
    name: "newer activity restores the retries and skips the backoff",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      for (let i = 0; i < JOBS.RETRIES; i++) failOnce(jobs, clock, "ses_a", 500)
      // Exhausted, then a newer watermark is claimed; fail it so that a backoff is pending.
      const { token } = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 600 }, OPTIONS))
      assert.equal(jobs.fail("ses_a", token, "still failing"), true)
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 600 }, OPTIONS), { type: "skipped_retry_backoff" })
      const restored = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 601 }, OPTIONS))
      assert.equal(restored.watermark, 601)
      const job = stage1Job(jobs, "ses_a")
      assert.equal(job?.retry_remaining, JOBS.RETRIES)
      assert.equal(job?.input_watermark, 601)
      assert.equal(job?.retry_at, null)
      // The last error stays visible until a success.
      assert.equal(job?.last_error, "still failing")
    }),
  },
  {
    name: "a failure that spends no retry keeps the count but still backs off",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const claim = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.fail("ses_a", claim.token, "429 rate limited", { spendRetry: false }), true)
      assert.equal(stage1Job(jobs, "ses_a")?.retry_remaining, JOBS.RETRIES)
      assert.equal(stage1Job(jobs, "ses_a")?.retry_at, START + STAGE_ONE.RETRY_DELAY_MS)
      assert.deepEqual(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_retry_backoff" })
      clock.now += STAGE_ONE.RETRY_DELAY_MS
      claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
    }),
  },
  {
    name: "a failure keeps at most 4,000 characters of the error, never half a character",
    run: scenario(({ connect }) => {
      const jobs = connect()
      const first = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      jobs.fail("ses_a", first.token, "e".repeat(10_000), { spendRetry: false })
      assert.equal(stage1Job(jobs, "ses_a")?.last_error, "e".repeat(STAGE_ONE.LAST_ERROR_MAX_CHARS))
      const second = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 501 }, OPTIONS))
      // A surrogate pair straddling the limit is dropped whole.
      jobs.fail("ses_a", second.token, `${"e".repeat(STAGE_ONE.LAST_ERROR_MAX_CHARS - 1)}\u{1F600}tail`)
      assert.equal(stage1Job(jobs, "ses_a")?.last_error, "e".repeat(STAGE_ONE.LAST_ERROR_MAX_CHARS - 1))
    }),
  },
  {
    name: "a live lease keeps other owners out, even with newer activity",
    run: scenario(({ clock, connect }) => {
      const mine = connect()
      const theirs = connect()
      claimed(mine.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.deepEqual(theirs.claim({ sessionId: "ses_a", updatedAt: 500 }, { ...OPTIONS, workerId: "worker-b" }), { type: "skipped_running" })
      clock.now += STAGE_ONE.JOB_LEASE_MS - 1
      assert.deepEqual(theirs.claim({ sessionId: "ses_a", updatedAt: 900 }, { ...OPTIONS, workerId: "worker-b" }), { type: "skipped_running" })
      assert.equal(stage1Job(theirs, "ses_a")?.worker_id, "worker-a")
    }),
  },
  {
    name: "an expired lease is taken over with a new token, and the old owner can no longer change the job",
    run: scenario(({ clock, connect }) => {
      const old = connect()
      const next = connect()
      const stale = claimed(old.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      clock.now += STAGE_ONE.JOB_LEASE_MS
      const fresh = claimed(next.claim({ sessionId: "ses_a", updatedAt: 500 }, { ...OPTIONS, workerId: "worker-b" }))
      assert.notEqual(fresh.token, stale.token)
      const taken = stage1Job(next, "ses_a")
      assert.equal(taken?.worker_id, "worker-b")
      assert.equal(taken?.lease_until, clock.now + STAGE_ONE.JOB_LEASE_MS)
      // Losing a lease (a crashed process) costs no retry.
      assert.equal(taken?.retry_remaining, JOBS.RETRIES)

      seedOutput(old, "ses_a", 100)
      assert.equal(old.succeed("ses_a", stale.token, OUTPUT), false)
      assert.equal(old.succeedNoOutput("ses_a", stale.token), false)
      assert.equal(old.fail("ses_a", stale.token, "late failure"), false)
      assert.equal(old.release("ses_a", stale.token), false)
      assert.deepEqual(stage1Job(old, "ses_a"), taken)
      assert.equal(output(old, "ses_a")?.raw_memory, "old raw")
      assert.equal(phase2Job(old), undefined)

      assert.equal(next.succeed("ses_a", fresh.token, OUTPUT), true)
      assert.equal(output(old, "ses_a")?.raw_memory, "raw")
    }),
  },
  {
    name: "the running cap counts live leases across connections and ignores expired ones",
    run: scenario(({ clock, connect }) => {
      const a = connect()
      const b = connect()
      const capped = { workerId: "worker-a", maxRunning: 2 }
      claimed(a.claim({ sessionId: "ses_1", updatedAt: 500 }, capped))
      clock.now += 10_000
      claimed(b.claim({ sessionId: "ses_2", updatedAt: 500 }, capped))
      assert.equal(a.runningCount(), 2)
      assert.deepEqual(b.claim({ sessionId: "ses_3", updatedAt: 500 }, capped), { type: "skipped_running_cap" })
      assert.deepEqual(a.claimMany([{ sessionId: "ses_3", updatedAt: 500 }, { sessionId: "ses_4", updatedAt: 400 }], { ...capped, maxClaims: 2 }), [])
      assert.equal(stage1Job(a, "ses_3"), undefined)
      // ses_1's lease runs out first; ses_2's is still live.
      clock.now = START + STAGE_ONE.JOB_LEASE_MS
      assert.equal(b.runningCount(), 1)
      const more = a.claimMany(
        [
          { sessionId: "ses_3", updatedAt: 500 },
          { sessionId: "ses_4", updatedAt: 400 },
        ],
        { ...capped, maxClaims: 2 },
      )
      assert.deepEqual(
        more.map((claim) => claim.sessionId),
        ["ses_3"],
      )
    }),
  },
  {
    name: "a released job is claimable at once with its retries unchanged",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const fresh = claimed(jobs.claim({ sessionId: "ses_new", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.release("ses_new", fresh.token), true)
      assert.equal(stage1Job(jobs, "ses_new")?.status, "pending")
      assert.equal(jobs.release("ses_new", fresh.token), false)

      failOnce(jobs, clock, "ses_a", 500)
      const retry = claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(jobs.release("ses_a", retry.token), true)
      const job = stage1Job(jobs, "ses_a")
      // It failed before this claim, and still reads so.
      assert.equal(job?.status, "failed")
      assert.equal(job?.retry_remaining, JOBS.RETRIES - 1)
      assert.equal(job?.retry_at, clock.now)
      assert.equal(job?.lease_until, null)
      assert.equal(job?.ownership_token, null)
      assert.equal(jobs.runningCount(), 0)
      claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assert.equal(stage1Job(jobs, "ses_a")?.retry_remaining, JOBS.RETRIES - 1)
      claimed(jobs.claim({ sessionId: "ses_new", updatedAt: 500 }, OPTIONS))
    }),
  },
  {
    name: "claimMany claims in the given order up to maxClaims and passes over covered and blocked sessions",
    run: scenario(({ connect }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_done", 900)
      const held = connect()
      claimed(held.claim({ sessionId: "ses_held", updatedAt: 850 }, { ...OPTIONS, workerId: "worker-b" }))
      const claims = jobs.claimMany(
        [
          { sessionId: "ses_done", updatedAt: 900 },
          { sessionId: "ses_held", updatedAt: 850 },
          { sessionId: "ses_c", updatedAt: 800 },
          { sessionId: "ses_d", updatedAt: 700 },
          { sessionId: "ses_e", updatedAt: 600 },
        ],
        { ...OPTIONS, maxClaims: 2 },
      )
      assert.deepEqual(
        claims.map((claim) => [claim.sessionId, claim.watermark]),
        [
          ["ses_c", 800],
          ["ses_d", 700],
        ],
      )
      assert.equal(stage1Job(jobs, "ses_e"), undefined)
    }),
  },
  {
    name: "a claim repeats the up-to-date check inside its transaction",
    run: scenario(({ connect }) => {
      const late = connect()
      const early = connect()
      // The cheap check passes, then another process finishes the session before the claim.
      assert.equal(late.isUpToDate("ses_a", 500), false)
      const claim = claimed(early.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      early.succeed("ses_a", claim.token, OUTPUT)
      assert.deepEqual(late.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_up_to_date" })
    }),
  },
  {
    name: "enqueuing phase 2 while it runs only raises the input watermark",
    run: scenario(({ connect }) => {
      const jobs = connect()
      jobs.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at, finished_at, lease_until, retry_at,
                             retry_remaining, input_watermark, last_success_at)
           VALUES ($kind, $key, 'running', 'consolidator', 'tok', 10, 5, $lease, NULL, 1, 500, 4)`,
        )
        .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, lease: START + HOUR })
      const before = phase2Job(jobs)
      jobs.enqueuePhase2(700)
      assert.deepEqual(phase2Job(jobs), { ...before, input_watermark: 700 })
      // An older watermark (a session finished out of order) still moves it, by one, so the
      // consolidator sees input arrived while it ran.
      jobs.enqueuePhase2(100)
      assert.deepEqual(phase2Job(jobs), { ...before, input_watermark: 701 })
    }),
  },
  {
    name: "enqueuing phase 2 sets a finished or failed consolidation pending and leaves its cooldown alone",
    run: scenario(({ connect }) => {
      const jobs = connect()
      jobs.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, finished_at, last_success_at, retry_at, retry_remaining, last_error, input_watermark, last_success_watermark)
           VALUES ($kind, $key, 'failed', 20, 10, $retryAt, 2, 'agent failed', NULL, 300)`,
        )
        .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, retryAt: START + HOUR })
      const before = phase2Job(jobs)
      jobs.enqueuePhase2(400)
      assert.deepEqual(phase2Job(jobs), { ...before, status: "pending", retry_at: null, input_watermark: 400 })
      jobs.db.prepare("UPDATE jobs SET status = 'done', last_error = NULL WHERE kind = $kind").run({ kind: JOBS.PHASE2 })
      jobs.enqueuePhase2(450)
      assert.equal(phase2Job(jobs)?.status, "pending")
      assert.equal(phase2Job(jobs)?.input_watermark, 450)
      assert.equal(phase2Job(jobs)?.last_success_at, 10)
      assert.equal(phase2Job(jobs)?.finished_at, 20)
    }),
  },
  {
    name: "a claim records its owner's process id and boot",
    run: scenario(({ connect }) => {
      const jobs = connect(fakeOwners(4242, "boot-a"))
      claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      assertFields(stage1Job(jobs, "ses_a"), { owner_pid: 4242, owner_boot: "boot-a" })
      // The default owner is this very process on this boot.
      claimed(connect().claim({ sessionId: "ses_b", updatedAt: 500 }, OPTIONS))
      assertFields(stage1Job(jobs, "ses_b"), { owner_pid: process.pid, owner_boot: leaseBoot() })
    }),
  },
  {
    name: "a lease whose owner process has exited on this boot is taken over at once",
    run: scenario(({ connect }) => {
      const pid = deadPid()
      const crashed = connect(leaseOwners({ self: { pid, boot: leaseBoot() } }))
      const stale = claimed(crashed.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      const next = connect()
      assert.equal(next.runningCount(), 0)
      const fresh = claimed(next.claim({ sessionId: "ses_a", updatedAt: 500 }, { ...OPTIONS, workerId: "worker-b" }))
      assertFields(stage1Job(next, "ses_a"), { worker_id: "worker-b", ownership_token: fresh.token, owner_pid: process.pid, retry_remaining: JOBS.RETRIES })
      assert.equal(crashed.succeed("ses_a", stale.token, OUTPUT), false)
    }),
  },
  {
    name: "a live owner's lease is respected, and so is one from another boot until it expires",
    run: scenario(({ clock, connect }) => {
      // Process 3 is not running here, but it ran on another boot (or machine): its id says nothing.
      const taker = connect(fakeOwners(1, "boot-a", [3]))
      claimed(connect(fakeOwners(2, "boot-a")).claim({ sessionId: "ses_live", updatedAt: 500 }, OPTIONS))
      claimed(connect(fakeOwners(3, "boot-b")).claim({ sessionId: "ses_other_boot", updatedAt: 500 }, OPTIONS))
      assert.deepEqual(taker.claim({ sessionId: "ses_live", updatedAt: 900 }, OPTIONS), { type: "skipped_running" })
      assert.deepEqual(taker.claim({ sessionId: "ses_other_boot", updatedAt: 500 }, OPTIONS), { type: "skipped_running" })
      assert.equal(taker.runningCount(), 2)
      clock.now += STAGE_ONE.JOB_LEASE_MS
      claimed(taker.claim({ sessionId: "ses_other_boot", updatedAt: 500 }, OPTIONS))
    }),
  },
  {
    name: "a lease claimed before owners were recorded waits for its expiry",
    run: scenario(({ clock, connect }) => {
      const jobs = connect(fakeOwners(1, "boot-a", [2]))
      claimed(jobs.claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
      jobs.db.prepare("UPDATE jobs SET owner_pid = NULL, owner_boot = NULL").run()
      assert.deepEqual(connect(fakeOwners(2, "boot-a", [1])).claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS), { type: "skipped_running" })
      clock.now += STAGE_ONE.JOB_LEASE_MS
      claimed(connect(fakeOwners(2, "boot-a", [1])).claim({ sessionId: "ses_a", updatedAt: 500 }, OPTIONS))
    }),
  },
  {
    name: "the running cap does not count leases whose owner is gone",
    run: scenario(({ connect }) => {
      const capped = { workerId: "worker-a", maxRunning: 2 }
      const crashed = connect(fakeOwners(7, "boot-a"))
      claimed(crashed.claim({ sessionId: "ses_1", updatedAt: 500 }, capped))
      claimed(crashed.claim({ sessionId: "ses_2", updatedAt: 500 }, capped))
      assert.deepEqual(crashed.claim({ sessionId: "ses_3", updatedAt: 500 }, capped), { type: "skipped_running_cap" })
      // Process 7 is gone as far as this owner can tell: its two leases hold no slot.
      const survivor = connect(fakeOwners(8, "boot-a", [7]))
      assert.equal(survivor.runningCount(), 0)
      const claims = survivor.claimMany(
        [
          { sessionId: "ses_3", updatedAt: 500 },
          { sessionId: "ses_4", updatedAt: 500 },
          { sessionId: "ses_5", updatedAt: 500 },
        ],
        { ...capped, maxClaims: 3 },
      )
      assert.deepEqual(
        claims.map((claim) => claim.sessionId),
        ["ses_3", "ses_4"],
      )
      // A live owner's leases do count: the cap is full again.
      assert.equal(survivor.runningCount(), 2)
      assert.deepEqual(survivor.claim({ sessionId: "ses_5", updatedAt: 500 }, capped), { type: "skipped_running_cap" })
    }),
  },
  {
    name: "migration 3 dates the last success of jobs that had finished cleanly",
    run() {
      const file = tempFile()
      const old = openDatabase(file, { migrations: MIGRATIONS.slice(0, 2) }).db
      const insert = old.prepare(
        `INSERT INTO jobs (kind, job_key, status, finished_at, retry_remaining, last_error) VALUES ($kind, $key, $status, 77, 3, $error)`,
      )
      insert.run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, status: "done", error: null })
      insert.run({ kind: JOBS.STAGE1, key: "ses_failed", status: "failed", error: "boom" })
      old.close()
      const { db, migrated } = openDatabase(file)
      try {
        assert.deepEqual(migrated, { from: 2, to: MIGRATIONS.length })
        const rows = db.prepare("SELECT job_key, last_success_at FROM jobs ORDER BY job_key").all()
        assert.deepEqual(rows, [
          { job_key: JOBS.PHASE2_KEY, last_success_at: 77 },
          { job_key: "ses_failed", last_success_at: null },
        ])
      } finally {
        db.close()
      }
    },
  },
  {
    name: "two connections interleaving claimMany over the same 20 sessions claim each exactly once",
    run: scenario(({ connect }) => {
      const racers = [connect(), connect()]
      const candidates = raceCandidates(20)
      const claims: Array<{ racer: number; claim: Stage1Claim }> = []
      for (let round = 0; round < 40; round++) {
        const racer = round % 2
        const batch = racers[racer]!.claimMany(candidates, { workerId: `racer-${racer}`, maxClaims: 3, maxRunning: 128 })
        for (const claim of batch) claims.push({ racer, claim })
      }
      const sessions = claims.map(({ claim }) => claim.sessionId).sort()
      assert.deepEqual(sessions, candidates.map((c) => c.sessionId).sort())
      // Both took part, and each row belongs to the connection that reported the claim.
      assert.ok(claims.some(({ racer }) => racer === 0) && claims.some(({ racer }) => racer === 1))
      for (const { racer, claim } of claims) {
        const job = stage1Job(racers[0]!, claim.sessionId)
        assert.equal(job?.ownership_token, claim.token)
        assert.equal(job?.worker_id, `racer-${racer}`)
      }
      assert.equal(racers[1]!.runningCount(), 20)
    }),
  },
  {
    name: "separate processes claiming the same 100 sessions at once claim each exactly once",
    async run(context) {
      const file = tempFile()
      openDatabase(file).db.close()
      const results = await context.claimInProcesses(file, 100, 4)
      for (const result of results) assert.equal(result.code, 0, result.output)
      const claims = results.flatMap((result) => JSON.parse(result.output.trim().split("\n").at(-1) ?? "[]") as Array<{ sessionId: string; token: string }>)
      assert.deepEqual(claims.map((claim) => claim.sessionId).sort(), raceCandidates(100).map((c) => c.sessionId).sort())
      const { db } = openDatabase(file)
      try {
        const tokens = new Map(
          db
            .prepare("SELECT job_key, ownership_token FROM jobs WHERE kind = $kind AND status = 'running'")
            .all<{ job_key: string; ownership_token: string }>({ kind: JOBS.STAGE1 })
            .map((row) => [row.job_key, row.ownership_token]),
        )
        assert.equal(tokens.size, 100)
        for (const claim of claims) assert.equal(tokens.get(claim.sessionId), claim.token, claim.sessionId)
      } finally {
        db.close()
      }
    },
  },
]
