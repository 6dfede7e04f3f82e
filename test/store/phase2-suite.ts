// The phase-2 job rules on a real SQLite file. Like stage1-suite.ts, it runs under Node with
// better-sqlite3 (phase2-jobs.test.ts) and under Bun with bun:sqlite (bun-runner.ts), so it uses
// only node:assert. Each case has its own file and clock; "processes" share the clock but each
// has its own connection, as separate OpenCode processes would.
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { JOBS, STAGE_TWO } from "../../src/constants.js"
import { openDatabase } from "../../src/store/database.js"
import { leaseBoot, leaseOwners, type LeaseOwners } from "../../src/store/lease-owner.js"
import { MemoryStore, type MemoryMode } from "../../src/store/memory-store.js"
import { VersionStore } from "../../src/store/version-store.js"
import { Phase2Jobs, type Phase2Claim, type Phase2ClaimOutcome } from "../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { capRecord, RAW_MEMORY_MAX_BYTES, ROLLOUT_SUMMARY_MAX_BYTES } from "../../src/store/record-caps.js"
import { estimateTokens } from "../../src/util/token-estimate.js"
import { deadPid, fakeOwners } from "./stage1-suite.js"

export interface Phase2Context {
  /** Starts `count` processes that each run phase2-claim-worker.ts on `file` at the same moment. */
  claimInProcesses(file: string, count: number): Promise<{ code: number | null; output: string }[]>
}

export interface Phase2Case {
  name: string
  run(context: Phase2Context): void | Promise<void>
}

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR
const START = 400 * DAY
const COOLDOWN = JOBS.PHASE2_COOLDOWN_MS

interface Fixture {
  file: string
  clock: { now: number }
  /** A new connection to the case's file, as another process would have; `owners` defaults to this process. */
  connect(owners?: LeaseOwners): Phase2Jobs
  /** Phase 1's queue, on the connection `jobs` uses. */
  enqueue(jobs: Phase2Jobs, watermark: number): void
  /** The catalog and V1's version store on the connection `jobs` uses, wired as the plugin wires them. */
  store(jobs: Phase2Jobs): CatalogAndVersion
  stage1(jobs: Phase2Jobs): Stage1Jobs
}

interface CatalogAndVersion {
  setMode(sessionId: string, mode: MemoryMode): MemoryMode
  sessionsNotEnabled(): Set<string>
  reset: VersionStore["reset"]
}

/** What Memory.setMode does: the catalog records the mode, and the version queues phase 2 when a record moved. */
function catalogAndVersion(db: SqlDatabase, now: () => number): CatalogAndVersion {
  const catalog = new MemoryStore(db, now)
  const version = new VersionStore("v1", db, now)
  return {
    setMode(sessionId, mode) {
      const previous = catalog.setMode(sessionId, mode)
      if ((previous === "enabled") !== (mode === "enabled")) version.queueIfHasOutput(sessionId)
      return previous
    },
    sessionsNotEnabled: () => catalog.sessionsNotEnabled(),
    reset: () => version.reset(),
  }
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

interface Seed {
  at: number
  raw?: string
  summary?: string
  usage?: number
  lastUsage?: number | null
  selectedAt?: number | null
  /** The host column: NULL (the default) is a record from before hosts were recorded. */
  host?: string | null
}

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-phase2-")), "memory.db")
}

/** Runs `body` on a fresh file and closes every connection it opened. */
function scenario(body: (fixture: Fixture) => void): () => void {
  return () => {
    const file = tempFile()
    const clock = { now: START }
    const opened: SqlDatabase[] = []
    const now = () => clock.now
    const connect = (owners?: LeaseOwners) => {
      const { db } = openDatabase(file)
      opened.push(db)
      return new Phase2Jobs(db, now, owners)
    }
    try {
      body({
        file,
        clock,
        connect,
        enqueue: (jobs, watermark) => new Stage1Jobs(jobs.db, now).enqueuePhase2(watermark),
        store: (jobs) => catalogAndVersion(jobs.db, now),
        stage1: (jobs) => new Stage1Jobs(jobs.db, now),
      })
    } finally {
      for (const db of opened) db.close()
    }
  }
}

const phase2Job = (jobs: Phase2Jobs) =>
  jobs.db.prepare("SELECT * FROM jobs WHERE kind = $kind AND job_key = $key").get<JobRecord>({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY })

const stage1Job = (jobs: Phase2Jobs, sessionId: string) =>
  jobs.db.prepare("SELECT status FROM jobs WHERE kind = $kind AND job_key = $id").get<{ status: string }>({ kind: JOBS.STAGE1, id: sessionId })

/** session id -> [selected_for_phase2, selected_for_phase2_source_updated_at, source_updated_at] */
const selection = (jobs: Phase2Jobs) =>
  Object.fromEntries(
    jobs.db
      .prepare("SELECT session_id, selected_for_phase2 AS s, selected_for_phase2_source_updated_at AS at, source_updated_at AS src FROM stage1_outputs ORDER BY session_id")
      .all<{ session_id: string; s: number; at: number | null; src: number }>()
      .map((row) => [row.session_id, [row.s, row.at, row.src]]),
  )

const outputIds = (jobs: Phase2Jobs) =>
  jobs.db
    .prepare("SELECT session_id FROM stage1_outputs ORDER BY session_id")
    .all<{ session_id: string }>()
    .map((row) => row.session_id)

function seedOutput(jobs: Phase2Jobs, sessionId: string, seed: Seed): void {
  jobs.db
    .prepare(
      `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at,
                                   usage_count, last_usage, selected_for_phase2, selected_for_phase2_source_updated_at, host)
       VALUES ($id, $at, $raw, $summary, 'slug', '/work/app', $at, $usage, $lastUsage, $selected, $selectedAt, $host)`,
    )
    .run({
      id: sessionId,
      at: seed.at,
      raw: seed.raw ?? `raw ${sessionId}`,
      summary: seed.summary ?? `summary ${sessionId}`,
      usage: seed.usage ?? 0,
      lastUsage: seed.lastUsage ?? null,
      selected: seed.selectedAt === undefined || seed.selectedAt === null ? 0 : 1,
      selectedAt: seed.selectedAt ?? null,
      host: seed.host ?? null,
    })
}

/** Seeds a done stage-1 job, as a successful extraction leaves it. */
function seedStage1Done(jobs: Phase2Jobs, sessionId: string, watermark: number): void {
  jobs.db
    .prepare(
      `INSERT INTO jobs (kind, job_key, status, finished_at, retry_remaining, input_watermark, last_success_watermark, last_success_at)
       VALUES ($kind, $id, 'done', 1, 3, $watermark, $watermark, 1)`,
    )
    .run({ kind: JOBS.STAGE1, id: sessionId, watermark })
}

/** Seeds a pending job of any kind (a queued extraction, a segment capture). */
function seedJob(jobs: Phase2Jobs, kind: string, key: string): void {
  jobs.db.prepare("INSERT INTO jobs (kind, job_key, status, retry_remaining) VALUES ($kind, $key, 'pending', 3)").run({ kind, key })
}

/** Compares only the fields `expected` names. */
function assertFields(row: object | undefined, expected: Record<string, unknown>): void {
  assert.ok(row, "row is missing")
  const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, (row as Record<string, unknown>)[key]]))
  assert.deepEqual(actual, expected)
}

function claimed(outcome: Phase2ClaimOutcome): Phase2Claim {
  assert.equal(outcome.type, "claimed", `expected a claim, got ${JSON.stringify(outcome)}`)
  return outcome as Phase2Claim
}

const ids = (inputs: Array<{ sessionId: string }>) => inputs.map((input) => input.sessionId)

export const phase2Cases: Phase2Case[] = [
  {
    name: "the input budgets an overflow refused are noted on the owned job, kept through its outcome, and cleared by the next claim",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const first = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.noteOverflow(first.token, [40_000, 26_666]), true)
      assert.equal(jobs.noteOverflow("not-the-token", [1]), false)
      assert.equal(jobs.succeed(first.token, first.watermark, []), true)
      assertFields(phase2Job(jobs), { status: "done", overflow_budgets: "[40000,26666]", retry_remaining: JOBS.RETRIES })
      clock.now += COOLDOWN + 1
      jobs.enqueue(clock.now)
      const second = claimed(jobs.claim("worker-a"))
      assertFields(phase2Job(jobs), { status: "running", overflow_budgets: null })
      assert.equal(jobs.noteOverflow(second.token, [40_000, 26_666, 17_777, 11_851]), true)
      assert.equal(jobs.fail(second.token, "too large at every budget"), true)
      assertFields(phase2Job(jobs), { status: "failed", overflow_budgets: "[40000,26666,17777,11851]" })
    }),
  },
  {
    name: "phase 2 is claimed with nothing queued: a missing row is created already claimed, as in Codex",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      const claim = claimed(jobs.claim("worker-a"))
      assert.equal(claim.watermark, 0)
      assertFields(phase2Job(jobs), {
        status: "running",
        worker_id: "worker-a",
        ownership_token: claim.token,
        started_at: START,
        lease_until: START + STAGE_TWO.JOB_LEASE_MS,
        retry_remaining: JOBS.RETRIES,
        input_watermark: 0,
        owner_pid: process.pid,
        last_success_at: null,
      })
      assert.deepEqual(connect().claim("worker-b"), { type: "skipped_running" })
      // After a success and its cooldown, a finished row is claimable with nothing queued since.
      assert.equal(jobs.succeed(claim.token, claim.watermark, []), true)
      clock.now += COOLDOWN
      assert.equal(phase2Job(jobs)?.status, "done")
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a check that found nothing starts no cooldown: it holds back unqueued checks for 6 hours, and queued input not at all",
    run: scenario(({ clock, connect, enqueue, store }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      const first = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(first.token, first.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      const succeededAt = clock.now

      clock.now = succeededAt + COOLDOWN
      const check = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      const checkedAt = clock.now
      assert.equal(jobs.finishUnchanged(check.token, check.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      assertFields(phase2Job(jobs), {
        status: "done",
        ownership_token: null,
        lease_until: null,
        finished_at: checkedAt,
        // The last success, and so the cooldown, is the real consolidation's.
        last_success_at: succeededAt,
      })
      assert.deepEqual(selection(jobs), { ses_a: [1, START - HOUR, START - HOUR] })
      assert.equal(jobs.finishUnchanged(check.token, check.watermark, []), false)

      // Nothing queued: the next look waits 6 h from the check.
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_unchanged", until: checkedAt + COOLDOWN })
      // A note (or any queued change) is looked at right away.
      jobs.enqueue(clock.now)
      const noted = claimed(jobs.claim("worker-a"))
      assert.equal(noted.watermark, clock.now)
      assert.equal(jobs.finishUnchanged(noted.token, noted.watermark, []), true)
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_unchanged", until: clock.now + COOLDOWN })
      // So is a mode change that moves a record out of the inputs.
      assert.equal(store(jobs).setMode("ses_a", "disabled"), "enabled")
      const disabled = claimed(jobs.claim("worker-a"))
      // Input queued while a check runs leaves the job pending.
      enqueue(jobs, clock.now + 5)
      assert.equal(jobs.finishUnchanged(disabled.token, disabled.watermark, []), true)
      assert.equal(phase2Job(jobs)?.status, "pending")
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a mode change queues phase 2 only when it moves a stored record into or out of the inputs",
    run: scenario(({ connect, store }) => {
      const jobs = connect()
      const memory = store(jobs)
      memory.setMode("ses_none", "disabled")
      assert.equal(phase2Job(jobs), undefined, "a session without a record changes no input")
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      memory.setMode("ses_a", "enabled")
      assert.equal(phase2Job(jobs), undefined, "enabled to enabled changes nothing")
      memory.setMode("ses_a", "polluted")
      assertFields(phase2Job(jobs), { status: "pending", input_watermark: START })
      jobs.db.prepare("UPDATE jobs SET status = 'done'").run()
      memory.setMode("ses_a", "disabled")
      assert.equal(phase2Job(jobs)?.status, "done", "polluted to disabled keeps it out either way")
      memory.setMode("ses_a", "enabled")
      assertFields(phase2Job(jobs), { status: "pending", input_watermark: START + 1 })
    }),
  },
  {
    name: "a queued job is claimed with a new token, a one-hour lease and its input watermark, and keeps others out while the lease lives",
    run: scenario(({ clock, connect, enqueue }) => {
      const mine = connect()
      const theirs = connect()
      enqueue(mine, 500)
      enqueue(mine, 100)
      const claim = claimed(mine.claim("worker-a"))
      assert.equal(claim.watermark, 501)
      assertFields(phase2Job(mine), {
        status: "running",
        worker_id: "worker-a",
        ownership_token: claim.token,
        started_at: START,
        lease_until: START + STAGE_TWO.JOB_LEASE_MS,
        retry_at: null,
        retry_remaining: JOBS.RETRIES,
        input_watermark: 501,
        last_success_at: null,
      })
      assert.deepEqual(theirs.claim("worker-b"), { type: "skipped_running" })
      // New input while it runs does not open the door either.
      enqueue(theirs, 900)
      clock.now += STAGE_TWO.JOB_LEASE_MS - 1
      assert.deepEqual(theirs.claim("worker-b"), { type: "skipped_running" })
      assert.equal(phase2Job(theirs)?.worker_id, "worker-a")
      assert.equal(phase2Job(theirs)?.ownership_token, claim.token)
    }),
  },
  {
    name: "an expired lease is taken over with a new token, and the old owner is locked out of every transition",
    run: scenario(({ clock, connect, enqueue }) => {
      const old = connect()
      const next = connect()
      seedOutput(old, "ses_a", { at: START - HOUR })
      enqueue(old, 500)
      const stale = claimed(old.claim("worker-a"))
      clock.now += STAGE_TWO.JOB_LEASE_MS
      const fresh = claimed(next.claim("worker-b"))
      assert.notEqual(fresh.token, stale.token)
      assert.equal(fresh.watermark, 500)
      const taken = phase2Job(next)
      assertFields(taken, { status: "running", worker_id: "worker-b", lease_until: clock.now + STAGE_TWO.JOB_LEASE_MS, retry_remaining: JOBS.RETRIES })

      assert.equal(old.heartbeat(stale.token), false)
      assert.equal(old.succeed(stale.token, stale.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), false)
      assert.equal(old.finishUnchanged(stale.token, stale.watermark, []), false)
      assert.equal(old.fail(stale.token, "late failure"), false)
      assert.equal(old.release(stale.token), false)
      assert.equal(old.failKeepingLease(stale.token, "late helper"), false)
      assert.deepEqual(phase2Job(old), taken)
      assert.deepEqual(selection(old), { ses_a: [0, null, START - HOUR] })

      assert.equal(next.succeed(fresh.token, fresh.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      assert.deepEqual(selection(old), { ses_a: [1, START - HOUR, START - HOUR] })
    }),
  },
  {
    name: "a consolidation lease whose owner process has exited on this boot is taken over at once",
    run: scenario(({ connect, enqueue }) => {
      const pid = deadPid()
      const crashed = connect(leaseOwners({ self: { pid, boot: leaseBoot() } }))
      enqueue(crashed, 500)
      const stale = claimed(crashed.claim("worker-a"))
      assertFields(phase2Job(crashed), { owner_pid: pid, owner_boot: leaseBoot() })
      const next = connect()
      const fresh = claimed(next.claim("worker-b"))
      assert.equal(fresh.watermark, 500)
      assertFields(phase2Job(next), { worker_id: "worker-b", ownership_token: fresh.token, owner_pid: process.pid, retry_remaining: JOBS.RETRIES })
      assert.equal(crashed.heartbeat(stale.token), false)
    }),
  },
  {
    name: "a live owner's consolidation lease is respected, and one from another boot waits for its expiry",
    run: scenario(({ clock, connect, enqueue }) => {
      const live = connect(fakeOwners(2, "boot-a"))
      enqueue(live, 500)
      const claim = claimed(live.claim("worker-a"))
      assert.deepEqual(connect(fakeOwners(1, "boot-a")).claim("worker-b"), { type: "skipped_running" })
      assert.equal(live.succeed(claim.token, claim.watermark, []), true)

      clock.now += COOLDOWN
      enqueue(live, 600)
      claimed(connect(fakeOwners(3, "boot-b")).claim("worker-c"))
      // Process 3 is not running here, but it ran on another boot (or machine): its id says nothing.
      const taker = connect(fakeOwners(1, "boot-a", [3]))
      assert.deepEqual(taker.claim("worker-b"), { type: "skipped_running" })
      clock.now += STAGE_TWO.JOB_LEASE_MS
      claimed(taker.claim("worker-b"))
    }),
  },
  {
    name: "a lease kept for an undeleted helper session ends with its owner process",
    run: scenario(({ connect, enqueue }) => {
      const mine = connect(fakeOwners(2, "boot-a"))
      enqueue(mine, 500)
      const claim = claimed(mine.claim("worker-a"))
      assert.equal(mine.failKeepingLease(claim.token, "helper session not deleted"), true)
      assert.deepEqual(connect(fakeOwners(1, "boot-a")).claim("worker-b"), { type: "skipped_running" })
      // The helper ran inside process 2; with that process gone, nothing can still be editing.
      const taken = claimed(connect(fakeOwners(1, "boot-a", [2])).claim("worker-b"))
      assertFields(phase2Job(mine), { status: "running", ownership_token: taken.token, owner_pid: 1, last_error: "helper session not deleted" })
    }),
  },
  {
    name: "a heartbeat extends the lease by an hour and fails once the job was taken over",
    run: scenario(({ clock, connect, enqueue }) => {
      const mine = connect()
      const theirs = connect()
      enqueue(mine, 500)
      const claim = claimed(mine.claim("worker-a"))
      clock.now += 30 * 60 * 1000
      assert.equal(mine.heartbeat(claim.token), true)
      const extended = clock.now + STAGE_TWO.JOB_LEASE_MS
      assert.equal(phase2Job(mine)?.lease_until, extended)
      // Past the lease the claim started with, but not past the extended one.
      clock.now = START + STAGE_TWO.JOB_LEASE_MS
      assert.deepEqual(theirs.claim("worker-b"), { type: "skipped_running" })
      clock.now = extended
      const taken = claimed(theirs.claim("worker-b"))
      assert.equal(mine.heartbeat(claim.token), false)
      assert.equal(phase2Job(mine)?.lease_until, clock.now + STAGE_TWO.JOB_LEASE_MS)
      assert.equal(theirs.heartbeat(taken.token), true)
    }),
  },
  {
    name: "a failure records the error, spends a retry, clears the lease and backs off for an hour",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      const claim = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      assert.equal(jobs.fail(claim.token, "agent failed"), true)
      const retryAt = clock.now + STAGE_TWO.RETRY_DELAY_MS
      assertFields(phase2Job(jobs), {
        status: "failed",
        ownership_token: null,
        lease_until: null,
        finished_at: clock.now,
        retry_at: retryAt,
        retry_remaining: JOBS.RETRIES - 1,
        last_error: "agent failed",
        last_success_at: null,
      })
      assert.equal(jobs.fail(claim.token, "twice"), false)

      clock.now = retryAt - 1
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_retry_backoff", until: retryAt })
      clock.now = retryAt
      const retry = claimed(jobs.claim("worker-a"))
      // The error stays visible until a success.
      assertFields(phase2Job(jobs), { status: "running", retry_at: null, last_error: "agent failed", retry_remaining: JOBS.RETRIES - 1 })
      // At most 4,000 characters, never half a character.
      jobs.fail(retry.token, `${"e".repeat(STAGE_TWO.LAST_ERROR_MAX_CHARS - 1)}\u{1F600}tail`)
      assert.equal(phase2Job(jobs)?.last_error, "e".repeat(STAGE_TWO.LAST_ERROR_MAX_CHARS - 1))
    }),
  },
  {
    name: "phase 2 is claimable again after the backoff even with no retries left",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      for (let i = 0; i <= JOBS.RETRIES; i++) {
        const claim = claimed(jobs.claim("worker-a"))
        assert.equal(jobs.fail(claim.token, `failure ${i}`), true)
        clock.now += STAGE_TWO.RETRY_DELAY_MS
      }
      assert.equal(phase2Job(jobs)?.retry_remaining, 0)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a failure that spends no retry keeps the count but still backs off",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      const claim = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.fail(claim.token, "429 rate limited", { spendRetry: false }), true)
      assertFields(phase2Job(jobs), { status: "failed", retry_remaining: JOBS.RETRIES, retry_at: START + STAGE_TWO.RETRY_DELAY_MS })
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_retry_backoff", until: START + STAGE_TWO.RETRY_DELAY_MS })
      clock.now += STAGE_TWO.RETRY_DELAY_MS
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a run that takes in no new record (a note, a forgetting) keeps the cooldown's start, so records extracted after it are not held back",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      const first = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(first.token, first.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      const learnedAt = clock.now
      // Past the cooldown a note is consolidated: the same record, nothing new.
      clock.now = learnedAt + COOLDOWN + HOUR
      jobs.enqueue(clock.now)
      const noted = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(noted.token, noted.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      assert.equal(phase2Job(jobs)?.last_success_at, learnedAt)
      // A session extracted a minute later is consolidated at once, and that run restarts it.
      clock.now += 60_000
      seedOutput(jobs, "ses_b", { at: clock.now - 1 })
      enqueue(jobs, clock.now)
      const next = claimed(jobs.claim("worker-a"))
      const inputs = [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }, { sessionId: "ses_b", sourceUpdatedAt: clock.now - 1 }]
      assert.equal(jobs.succeed(next.token, next.watermark, inputs), true)
      assert.equal(phase2Job(jobs)?.last_success_at, clock.now)
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_cooldown", until: clock.now + COOLDOWN })
    }),
  },
  {
    name: "the cooldown runs 6 hours from the last clean success, and a later failure neither restarts nor extends it",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      const first = claimed(jobs.claim("worker-a"))
      clock.now += 10 * 60 * 1000
      const succeededAt = clock.now
      jobs.succeed(first.token, first.watermark, [])
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_cooldown", until: succeededAt + COOLDOWN })
      // Queued input waits for the cooldown too.
      enqueue(jobs, 600)
      clock.now = succeededAt + COOLDOWN - 1
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_cooldown", until: succeededAt + COOLDOWN })

      clock.now = succeededAt + COOLDOWN
      const second = claimed(jobs.claim("worker-a"))
      clock.now += 5 * 60 * 1000
      jobs.fail(second.token, "agent failed")
      const retryAt = clock.now + STAGE_TWO.RETRY_DELAY_MS
      clock.now = retryAt
      // finished_at is the failure's, one hour ago; the cooldown still counts from the success.
      assert.equal(phase2Job(jobs)?.finished_at, retryAt - STAGE_TWO.RETRY_DELAY_MS)
      assert.equal(phase2Job(jobs)?.last_success_at, succeededAt)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a failed job whose last clean success is recent waits for that success's cooldown",
    run: scenario(({ connect }) => {
      const jobs = connect()
      // A success 2 h ago, then (a takeover's run) a failure whose backoff has passed.
      jobs.db
        .prepare(
          `INSERT INTO jobs (kind, job_key, status, finished_at, retry_at, retry_remaining, last_error, input_watermark, last_success_at)
           VALUES ($kind, $key, 'failed', $finished, $retryAt, 2, 'agent failed', 700, $success)`,
        )
        .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, finished: START - HOUR, retryAt: START, success: START - 2 * HOUR })
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_cooldown", until: START - 2 * HOUR + COOLDOWN })
    }),
  },
  {
    name: "a reset starts no cooldown: nothing is looked at for 6 hours unless input arrives, which is consolidated at once",
    run: scenario(({ clock, connect, enqueue, store }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR, selectedAt: START - HOUR })
      jobs.forgetSession("ses_a")
      assert.equal(jobs.pendingForgets().length, 1)
      // The phase-2 row the forgetting queued is the one job there was.
      assert.deepEqual(store(jobs).reset(), { type: "reset", outputs: 0, jobs: 1 })
      // The reset emptied the folder: nothing is left to forget, and nothing to look at.
      assert.deepEqual(jobs.pendingForgets(), [])
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_unchanged", until: START + COOLDOWN })
      assert.equal(jobs.hasConsolidatedBefore(), false)
      // What is learned after the reset (phase 1 queues it) is consolidated without waiting.
      clock.now = START + HOUR
      enqueue(jobs, START + HOUR)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "selection keeps non-blank outputs of enabled sessions used, or if never used updated, within the window",
    run: scenario(({ connect, store }) => {
      const jobs = connect()
      const cutoff = START - 30 * DAY
      seedOutput(jobs, "ses_blank", { at: START, raw: " \n\t", summary: "\r\n " })
      seedOutput(jobs, "ses_summary_only", { at: START, raw: "  ", summary: "a summary" })
      seedOutput(jobs, "ses_disabled", { at: START })
      seedOutput(jobs, "ses_polluted", { at: START })
      seedOutput(jobs, "ses_enabled", { at: START })
      seedOutput(jobs, "ses_no_meta", { at: START })
      seedOutput(jobs, "ses_new_at_cutoff", { at: cutoff })
      seedOutput(jobs, "ses_new_too_old", { at: cutoff - 1 })
      seedOutput(jobs, "ses_used_recently", { at: cutoff - 100 * DAY, lastUsage: cutoff, usage: 1 })
      // Last use decides once there is one, even when the output itself is recent.
      seedOutput(jobs, "ses_used_long_ago", { at: START, lastUsage: cutoff - 1, usage: 9 })
      store(jobs).setMode("ses_disabled", "disabled")
      store(jobs).setMode("ses_polluted", "polluted")
      store(jobs).setMode("ses_enabled", "enabled")

      const excluded = store(jobs).sessionsNotEnabled()
      assert.deepEqual(ids(jobs.selectInputs(100, 30, excluded)), ["ses_enabled", "ses_new_at_cutoff", "ses_no_meta", "ses_summary_only", "ses_used_recently"])
      // A window of 0 days keeps only what was used or updated this very moment.
      assert.deepEqual(ids(jobs.selectInputs(100, 0, excluded)), ["ses_enabled", "ses_no_meta", "ses_summary_only"])
      assert.deepEqual(jobs.selectInputs(0, 30), [])
    }),
  },
  {
    name: "selection ranks by usage, last use or update, update and id, keeps the top N and returns them in id order",
    run: scenario(({ connect }) => {
      const jobs = connect()
      const x = START - 5 * HOUR
      seedOutput(jobs, "ses_a", { at: START - 9 * DAY, usage: 2, lastUsage: START - DAY })
      seedOutput(jobs, "ses_b", { at: START - 3 * HOUR })
      seedOutput(jobs, "ses_c", { at: START - 9 * DAY, usage: 2, lastUsage: START - 2 * DAY })
      seedOutput(jobs, "ses_d", { at: START - 20 * DAY, usage: 5, lastUsage: START - 10 * DAY })
      seedOutput(jobs, "ses_e", { at: START - HOUR })
      // Ties ses_b on both times: the larger id ranks first.
      seedOutput(jobs, "ses_f", { at: START - 3 * HOUR })
      // ses_g and ses_h tie on usage and on last use or update; ses_h's own update is newer.
      seedOutput(jobs, "ses_g", { at: START - 20 * DAY, usage: 1, lastUsage: x })
      seedOutput(jobs, "ses_h", { at: x, usage: 1, lastUsage: x })
      // Rank: d, a, c, h, g, e, f, b.
      assert.deepEqual(ids(jobs.selectInputs(8, 30)), ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e", "ses_f", "ses_g", "ses_h"])
      assert.deepEqual(ids(jobs.selectInputs(7, 30)), ["ses_a", "ses_c", "ses_d", "ses_e", "ses_f", "ses_g", "ses_h"])
      assert.deepEqual(ids(jobs.selectInputs(5, 30)), ["ses_a", "ses_c", "ses_d", "ses_g", "ses_h"])
      assert.deepEqual(ids(jobs.selectInputs(4, 30)), ["ses_a", "ses_c", "ses_d", "ses_h"])
      assert.deepEqual(ids(jobs.selectInputs(1, 30)), ["ses_d"])
      assert.deepEqual(jobs.selectInputs(1, 30)[0], {
        sessionId: "ses_d",
        sourceUpdatedAt: START - 20 * DAY,
        rawMemory: "raw ses_d",
        rolloutSummary: "summary ses_d",
        slug: "slug",
        cwd: "/work/app",
        gitBranch: null,
        projectKey: null,
        projectName: null,
        usageCount: 5,
        lastUsage: START - 10 * DAY,
        generatedAt: START - 20 * DAY,
      })
    }),
  },
  {
    name: "selection stops before the token budget in rank order, and holds records stored before the caps to them",
    run: scenario(({ connect }) => {
      const jobs = connect()
      const kb = (n: number, fill: string) => fill.repeat(n * 1_000)
      // What a record counts for: its capped fields' estimated tokens, whatever the estimator's rule.
      const cost = (raw: string, summary: string) => {
        const capped = capRecord(raw, summary)
        return estimateTokens(capped.rawMemory) + estimateTokens(capped.rolloutSummary)
      }
      // Rank: ses_used (used), then ses_new, ses_mid, ses_old by update.
      seedOutput(jobs, "ses_used", { at: START - 9 * DAY, usage: 3, lastUsage: START - DAY, raw: kb(4, "u"), summary: kb(1, "U") })
      seedOutput(jobs, "ses_new", { at: START - HOUR, raw: kb(3, "n"), summary: kb(1, "N") })
      seedOutput(jobs, "ses_mid", { at: START - 2 * HOUR, raw: kb(3, "m"), summary: kb(1, "M") })
      seedOutput(jobs, "ses_old", { at: START - 3 * HOUR, raw: kb(1, "o"), summary: "" })
      const used = cost(kb(4, "u"), kb(1, "U"))
      const fresh = cost(kb(3, "n"), kb(1, "N"))
      const all = used + fresh + cost(kb(3, "m"), kb(1, "M")) + cost(kb(1, "o"), "")
      // ses_used and ses_new fit; ses_mid would pass the budget, and so ses_old after it is left out too.
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), used + fresh)), ["ses_new", "ses_used"])
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), all)), ["ses_mid", "ses_new", "ses_old", "ses_used"])
      assert.deepEqual(jobs.selectInputs(100, 30, new Set(), used - 1), [])

      // A 3 MB record from before the caps counts, and comes back, at its caps.
      const raw = `HEAD${kb(3_000, "h")}TAIL`
      seedOutput(jobs, "ses_huge", { at: START - 30 * 60_000, raw, summary: kb(3_000, "s") })
      // It ranks second, after ses_used.
      const budget = used + cost(raw, kb(3_000, "s"))
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), budget)), ["ses_huge", "ses_used"])
      const huge = jobs.selectInputs(100, 30, new Set(), budget).find((input) => input.sessionId === "ses_huge")
      assert.ok(huge, "the capped record fits a budget of exactly its caps")
      assert.ok(Buffer.byteLength(huge.rawMemory) <= RAW_MEMORY_MAX_BYTES && Buffer.byteLength(huge.rolloutSummary) <= ROLLOUT_SUMMARY_MAX_BYTES)
      assert.ok(huge.rawMemory.startsWith("HEAD") && huge.rawMemory.endsWith("TAIL") && huge.rawMemory.includes("tokens truncated"))
      // The default budget (STAGE_TWO.DEFAULT_INPUT_TOKENS) holds every record here.
      assert.equal(jobs.selectInputs(100, 30).length, 5)
    }),
  },
  {
    name: "selection counts a record by its estimated tokens, not its bytes: hex and base64 cost what the estimator says",
    run: scenario(({ connect }) => {
      const jobs = connect()
      // Two records of the same 8,000 bytes: prose, and a hex and base64 dump (a hash list, a key
      // blob), which tokenizes far more densely than 4 bytes a token.
      const prose = "The deploy runs make ship from the repository root, after the tests pass. ".repeat(110).slice(0, 8_000)
      const dump = Array.from({ length: 8_000 }, (_, i) => "0123456789abcdef+/AZaz"[(i * 7919) % 22]).join("")
      seedOutput(jobs, "ses_prose", { at: START - HOUR, usage: 2, lastUsage: START - HOUR, raw: prose, summary: "" })
      seedOutput(jobs, "ses_dump", { at: START - 2 * HOUR, usage: 1, lastUsage: START - 2 * HOUR, raw: dump, summary: "" })
      assert.equal(Buffer.byteLength(prose), Buffer.byteLength(dump))
      const byBytes = Buffer.byteLength(prose) / 4 + Buffer.byteLength(dump) / 4
      const byEstimate = estimateTokens(prose) + estimateTokens(dump)
      // A budget of exactly the two estimates holds both; one token less leaves the second-ranked out.
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), byEstimate)), ["ses_dump", "ses_prose"])
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), byEstimate - 1)), ["ses_prose"])
      // What bytes / 4 would allow holds the dump only when the estimator counts it at no more than that.
      const expected = estimateTokens(dump) > Buffer.byteLength(dump) / 4 ? ["ses_prose"] : ["ses_dump", "ses_prose"]
      assert.deepEqual(ids(jobs.selectInputs(100, 30, new Set(), byBytes)), expected)
      // The estimator never counts such text for less than its bytes / 4 (token-estimate.ts's contract).
      assert.ok(estimateTokens(dump) >= Buffer.byteLength(dump) / 4)
    }),
  },
  {
    name: "a success finishes the job cleanly and marks exactly the consumed snapshots as the selection",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: 500 })
      seedOutput(jobs, "ses_b", { at: 600 })
      seedOutput(jobs, "ses_old", { at: 400, selectedAt: 300 })
      seedOutput(jobs, "ses_left", { at: 800 })
      enqueue(jobs, 550)
      // A failed attempt first, so that the success has a retry and an error to restore.
      jobs.fail(claimed(jobs.claim("worker-a")).token, "agent failed")
      clock.now += STAGE_TWO.RETRY_DELAY_MS
      const claim = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      const consumed = [
        { sessionId: "ses_a", sourceUpdatedAt: 500 },
        { sessionId: "ses_b", sourceUpdatedAt: 600 },
        // Forgotten while the run worked: nothing to mark.
        { sessionId: "ses_gone", sourceUpdatedAt: 450 },
      ]
      assert.equal(jobs.succeed(claim.token, claim.watermark, consumed), true)
      assertFields(phase2Job(jobs), {
        status: "done",
        ownership_token: null,
        lease_until: null,
        finished_at: clock.now,
        last_success_at: clock.now,
        last_error: null,
        retry_at: null,
        retry_remaining: JOBS.RETRIES,
        input_watermark: 550,
        // The newest consumed snapshot is past the claimed watermark.
        last_success_watermark: 600,
      })
      assert.deepEqual(selection(jobs), {
        ses_a: [1, 500, 500],
        ses_b: [1, 600, 600],
        ses_left: [0, null, 800],
        ses_old: [0, null, 400],
      })
      assert.equal(jobs.succeed(claim.token, claim.watermark, []), false)
      assert.deepEqual(selection(jobs).ses_a, [1, 500, 500])
    }),
  },
  {
    name: "a success while new input arrived leaves the job pending under the cooldown, and a refreshed output keeps the snapshot that was read",
    run: scenario(({ clock, connect, enqueue, stage1 }) => {
      const jobs = connect()
      const phase1 = connect()
      const [readA, readB, queued, refreshed, ahead] = [START - 3 * HOUR, START - 2 * HOUR, START - HOUR, START - HOUR / 2, START + DAY]
      seedOutput(jobs, "ses_a", { at: readA, usage: 3 })
      seedOutput(jobs, "ses_b", { at: readB })
      enqueue(jobs, queued)
      jobs.db.prepare("UPDATE jobs SET last_success_watermark = $ahead").run({ ahead })
      const claim = claimed(jobs.claim("worker-a"))
      const consumed = jobs.selectInputs(10, 30).map(({ sessionId, sourceUpdatedAt }) => ({ sessionId, sourceUpdatedAt }))
      assert.deepEqual(consumed, [
        { sessionId: "ses_a", sourceUpdatedAt: readA },
        { sessionId: "ses_b", sourceUpdatedAt: readB },
      ])
      // Phase 1 refreshes ses_a meanwhile, and queues phase 2 again.
      const refresh = stage1(phase1).claim({ sessionId: "ses_a", updatedAt: refreshed }, { workerId: "phase1", maxRunning: 8 })
      assert.equal(refresh.type, "claimed")
      if (refresh.type === "claimed") stage1(phase1).succeed("ses_a", refresh.token, { rawMemory: "new", rolloutSummary: "new", slug: null, cwd: null })

      clock.now += 1_000
      assert.equal(jobs.succeed(claim.token, claim.watermark, consumed), true)
      const succeededAt = clock.now
      assertFields(phase2Job(jobs), {
        status: "pending",
        ownership_token: null,
        lease_until: null,
        last_success_at: succeededAt,
        input_watermark: refreshed,
        // Never moves back.
        last_success_watermark: ahead,
      })
      assert.deepEqual(selection(jobs), { ses_a: [1, readA, refreshed], ses_b: [1, readB, readB] })
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_cooldown", until: succeededAt + COOLDOWN })
      clock.now = succeededAt + COOLDOWN
      assert.equal(claimed(jobs.claim("worker-a")).watermark, refreshed)
    }),
  },
  {
    name: "an empty first run finishes without a cooldown, and the first real input is consolidated at once",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      const claim = claimed(jobs.claim("worker-a"))
      assert.deepEqual(jobs.selectInputs(10, 30), [])
      assert.equal(jobs.hasConsolidatedBefore(), false)
      assert.equal(jobs.finishUnchanged(claim.token, claim.watermark, []), true)
      assertFields(phase2Job(jobs), {
        status: "done",
        ownership_token: null,
        lease_until: null,
        retry_at: null,
        retry_remaining: JOBS.RETRIES,
        finished_at: START,
        last_success_at: null,
        input_watermark: 500,
      })
      assert.equal(jobs.hasConsolidatedBefore(), false)
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_unchanged", until: START + COOLDOWN })

      // Phase 1 stores a record: no cooldown to wait for.
      clock.now += 1_000
      enqueue(jobs, 600)
      const again = claimed(jobs.claim("worker-a"))
      jobs.fail(again.token, "agent failed")
      clock.now += STAGE_TWO.RETRY_DELAY_MS
      // After a failure the check's finish keeps the error visible.
      const retry = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.finishUnchanged(retry.token, retry.watermark, []), true)
      assertFields(phase2Job(jobs), { status: "done", last_error: "agent failed", retry_at: null, last_success_at: null })
    }),
  },
  {
    name: "a consolidation happened before once an output was selected or a clean success recorded",
    run: scenario(({ clock, connect, enqueue, store }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: 500 })
      assert.equal(jobs.hasConsolidatedBefore(), false)
      jobs.db.prepare("UPDATE stage1_outputs SET selected_for_phase2 = 1").run()
      assert.equal(jobs.hasConsolidatedBefore(), true)
      jobs.db.prepare("UPDATE stage1_outputs SET selected_for_phase2 = 0").run()

      // A failure is no success.
      enqueue(jobs, 500)
      jobs.fail(claimed(jobs.claim("worker-a")).token, "agent failed")
      assert.equal(jobs.hasConsolidatedBefore(), false)
      clock.now += STAGE_TWO.RETRY_DELAY_MS
      jobs.succeed(claimed(jobs.claim("worker-a")).token, 500, [])
      assert.equal(jobs.hasConsolidatedBefore(), true)

      // A reset erases that history with the folder: the next consolidation is a first one again.
      const other = connect()
      clock.now += COOLDOWN
      store(other).reset()
      assert.equal(other.hasConsolidatedBefore(), false)
    }),
  },
  {
    name: "a shutdown release gives the claim back at once, pending, with no retry spent and no backoff",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      enqueue(jobs, 500)
      jobs.fail(claimed(jobs.claim("worker-a")).token, "agent failed")
      clock.now += STAGE_TWO.RETRY_DELAY_MS
      const claim = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.release(claim.token), true)
      assertFields(phase2Job(jobs), {
        status: "pending",
        ownership_token: null,
        lease_until: null,
        retry_at: null,
        retry_remaining: JOBS.RETRIES - 1,
        last_success_at: null,
      })
      assert.equal(jobs.release(claim.token), false)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a helper session not confirmed deleted keeps the lease until it expires and records the error",
    run: scenario(({ clock, connect, enqueue, store }) => {
      const mine = connect()
      const theirs = connect()
      enqueue(mine, 500)
      const claim = claimed(mine.claim("worker-a"))
      clock.now += 10 * 60 * 1000
      mine.heartbeat(claim.token)
      const leaseUntil = clock.now + STAGE_TWO.JOB_LEASE_MS
      assert.equal(mine.failKeepingLease(claim.token, "helper session not deleted"), true)
      assertFields(phase2Job(mine), {
        status: "running",
        lease_until: leaseUntil,
        ownership_token: null,
        last_error: "helper session not deleted",
        finished_at: clock.now,
        retry_remaining: JOBS.RETRIES - 1,
        last_success_at: null,
      })
      // Nothing shortens or extends the lease now: not a shutdown, not a heartbeat, not a second call.
      assert.equal(mine.release(claim.token), false)
      assert.equal(mine.heartbeat(claim.token), false)
      assert.equal(mine.failKeepingLease(claim.token, "again"), false)
      assert.deepEqual(theirs.claim("worker-b"), { type: "skipped_running" })
      assert.deepEqual(store(theirs).reset(), { type: "refused_consolidation_running", leaseUntil })

      clock.now = leaseUntil
      const taken = claimed(theirs.claim("worker-b"))
      assert.equal(taken.watermark, 500)
      assert.equal(phase2Job(theirs)?.worker_id, "worker-b")
    }),
  },
  {
    name: "forgetting a session deletes its output and stage-1 job, and queues phase 2 only if the output had been consolidated",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_kept_out", { at: 500 })
      seedStage1Done(jobs, "ses_kept_out", 500)
      seedStage1Done(jobs, "ses_no_output", 600)
      seedOutput(jobs, "ses_consolidated", { at: 700, selectedAt: 700 })
      seedStage1Done(jobs, "ses_consolidated", 700)
      seedOutput(jobs, "ses_other", { at: 800, selectedAt: 800 })

      assert.deepEqual(jobs.forgetSession("ses_kept_out"), { deleted: true, queued: false })
      assert.equal(stage1Job(jobs, "ses_kept_out"), undefined)
      assert.deepEqual(jobs.forgetSession("ses_no_output"), { deleted: false, queued: false })
      assert.equal(stage1Job(jobs, "ses_no_output"), undefined)
      assert.deepEqual(jobs.forgetSession("ses_unknown"), { deleted: false, queued: false })
      assert.equal(phase2Job(jobs), undefined)

      clock.now += 1_000
      assert.deepEqual(jobs.forgetSession("ses_consolidated"), { deleted: true, queued: true })
      assert.equal(stage1Job(jobs, "ses_consolidated"), undefined)
      assertFields(phase2Job(jobs), { status: "pending", input_watermark: clock.now })
      assert.deepEqual(outputIds(jobs), ["ses_other"])
      assert.deepEqual(jobs.forgetSession("ses_consolidated"), { deleted: false, queued: false })
    }),
  },
  {
    name: "a session the last consolidation consumed is queued for forgetting even after its record was replaced by a segment's or dropped as empty",
    run: scenario(({ clock, connect, enqueue, stage1 }) => {
      const jobs = connect()
      const phase1 = stage1(jobs)
      seedOutput(jobs, "ses_compacted", { at: 500 })
      seedOutput(jobs, "ses_emptied", { at: 500 })
      enqueue(jobs, 500)
      const run = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(run.token, run.watermark, [{ sessionId: "ses_compacted", sourceUpdatedAt: 500 }, { sessionId: "ses_emptied", sourceUpdatedAt: 500 }]), true)
      // After the consolidation, a compaction's segment supersedes the open record, and a
      // re-extraction of the other session finds nothing worth keeping: no record was selected.
      clock.now += 1_000
      const segment = phase1.claim({ sessionId: "ses_compacted#1", updatedAt: 600 }, { workerId: "w", maxRunning: 9 })
      assert.equal(segment.type === "claimed" && phase1.succeed("ses_compacted#1", segment.token, { rawMemory: "r", rolloutSummary: "s", slug: null, cwd: null }), true)
      const again = phase1.claim({ sessionId: "ses_emptied", updatedAt: 700 }, { workerId: "w", maxRunning: 9 })
      assert.equal(again.type === "claimed" && phase1.succeedNoOutput("ses_emptied", again.token), true)
      assert.deepEqual(outputIds(jobs), ["ses_compacted#1"])
      // The folder still holds both: forgetting either hurries the consolidation that removes it.
      assert.deepEqual(jobs.forgetSession("ses_compacted"), { deleted: true, queued: true })
      assert.deepEqual(jobs.forgetSession("ses_emptied"), { deleted: false, queued: true })
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_compacted", "ses_emptied"])
      // A consolidation that no longer had them settles the queue and no longer counts them.
      clock.now += JOBS.FORGET_INTERVAL_MS
      const forgetting = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(forgetting.token, forgetting.watermark, [], clock.now), true)
      assert.deepEqual(jobs.pendingForgets(), [])
      assert.deepEqual(jobs.forgetSession("ses_emptied"), { deleted: false, queued: false })
    }),
  },
  {
    name: "forgetting a record the last consolidation selected queues its session to be forgotten; an unselected one, or a version told not to queue, leaves the queue alone",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_selected", { at: 500, selectedAt: 500 })
      seedOutput(jobs, "ses_unselected", { at: 600 })
      seedOutput(jobs, "ses_no_queue", { at: 700, selectedAt: 700 })
      // Only one segment of a compacted session was selected: the session still counts as consolidated.
      seedOutput(jobs, "ses_compacted#1", { at: 800, selectedAt: 800 })
      seedOutput(jobs, "ses_compacted#2.1", { at: 900 })

      const firstAt = clock.now
      assert.deepEqual(jobs.forgetSession("ses_selected"), { deleted: true, queued: true })
      assert.deepEqual(jobs.pendingForgets(), [{ sessionId: "ses_selected", queuedAt: firstAt }])

      clock.now += 1_000
      assert.deepEqual(jobs.forgetSession("ses_unselected"), { deleted: true, queued: false })
      assert.deepEqual(jobs.pendingForgets(), [{ sessionId: "ses_selected", queuedAt: firstAt }])

      // A version that no longer learns deletes the record, and no consolidation is hurried for it.
      assert.deepEqual(jobs.forgetSession("ses_no_queue", { queue: false }), { deleted: true, queued: true })
      assert.deepEqual(outputIds(jobs), ["ses_compacted#1", "ses_compacted#2.1"])
      assert.deepEqual(jobs.pendingForgets(), [{ sessionId: "ses_selected", queuedAt: firstAt }])

      // The queue holds the session, not its record keys.
      clock.now += 1_000
      assert.deepEqual(jobs.forgetSession("ses_compacted"), { deleted: true, queued: true })
      assert.deepEqual(outputIds(jobs), [])
      assert.deepEqual(jobs.pendingForgets(), [
        { sessionId: "ses_selected", queuedAt: firstAt },
        { sessionId: "ses_compacted", queuedAt: clock.now },
      ])

      // A session selected again (an import brought its record back) and forgotten again waits from the later forget.
      seedOutput(jobs, "ses_selected", { at: 1_000, selectedAt: 1_000 })
      clock.now += 1_000
      jobs.forgetSession("ses_selected")
      assert.deepEqual(jobs.pendingForgets(), [
        { sessionId: "ses_compacted", queuedAt: clock.now - 1_000 },
        { sessionId: "ses_selected", queuedAt: clock.now },
      ])
    }),
  },
  {
    name: "a session waiting to be forgotten lets a consolidation run 5 minutes after the last success instead of 6 hours",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      enqueue(jobs, START - HOUR)
      const first = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.succeed(first.token, first.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      const succeededAt = clock.now

      clock.now = succeededAt + 60_000
      jobs.forgetSession("ses_a")
      const forgetAt = succeededAt + JOBS.FORGET_INTERVAL_MS
      clock.now = forgetAt - 1
      const early = { type: "skipped_cooldown", until: forgetAt }
      // The look ahead says what the claim says, and claims nothing.
      assert.deepEqual(jobs.wouldSkip(), early)
      assert.equal(phase2Job(jobs)?.status, "pending")
      assert.deepEqual(jobs.claim("worker-a"), early)

      clock.now = forgetAt
      assert.equal(jobs.wouldSkip(), undefined)
      assertFields(phase2Job(jobs), { status: "pending", ownership_token: null })
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a check that found nothing does not hold back a consolidation that has a session to forget",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      enqueue(jobs, START - HOUR)
      const first = claimed(jobs.claim("worker-a"))
      jobs.succeed(first.token, first.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }])
      clock.now += COOLDOWN
      const check = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.finishUnchanged(check.token, check.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }]), true)
      const checkedAt = clock.now
      clock.now += 60_000
      assert.deepEqual(jobs.wouldSkip(), { type: "skipped_unchanged", until: checkedAt + COOLDOWN })

      // Every forget path also queues phase 2; the row is put back to 'done' so that only the
      // forget queue stands between the check and the next claim.
      jobs.forgetSession("ses_a")
      jobs.db.prepare("UPDATE jobs SET status = 'done' WHERE kind = $kind").run({ kind: JOBS.PHASE2 })
      assert.equal(jobs.pendingForgets().length, 1)
      assert.equal(jobs.wouldSkip(), undefined)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a failure's retry backoff still holds back a consolidation that has a session to forget",
    run: scenario(({ clock, connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: START - HOUR })
      enqueue(jobs, START - HOUR)
      const first = claimed(jobs.claim("worker-a"))
      jobs.succeed(first.token, first.watermark, [{ sessionId: "ses_a", sourceUpdatedAt: START - HOUR }])
      clock.now += 60_000
      jobs.forgetSession("ses_a")
      clock.now += JOBS.FORGET_INTERVAL_MS
      const attempt = claimed(jobs.claim("worker-a"))
      assert.equal(jobs.fail(attempt.token, "agent failed"), true)
      const retryAt = clock.now + STAGE_TWO.RETRY_DELAY_MS
      // A failed run settled nothing: the session still waits.
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_a"])

      clock.now += JOBS.FORGET_INTERVAL_MS
      const backoff = { type: "skipped_retry_backoff", until: retryAt }
      assert.deepEqual(jobs.wouldSkip(), backoff)
      assert.deepEqual(jobs.claim("worker-a"), backoff)
      // Another deletion meanwhile does not cut the backoff short: a failing consolidator is not
      // paid for again for every session forgotten.
      seedOutput(jobs, "ses_b", { at: START - HOUR, selectedAt: START - HOUR })
      assert.deepEqual(jobs.forgetSession("ses_b"), { deleted: true, queued: true })
      assert.deepEqual(jobs.wouldSkip(), backoff)
      clock.now = retryAt
      assert.equal(jobs.wouldSkip(), undefined)
      claimed(jobs.claim("worker-a"))
    }),
  },
  {
    name: "a success settles exactly the forgets queued by the time it chose its inputs, and an unchanged finish without that time settles those queued by its claim",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      for (const id of ["ses_a", "ses_b", "ses_c", "ses_d"]) seedOutput(jobs, id, { at: 500, selectedAt: 500 })
      jobs.forgetSession("ses_a")
      clock.now += 1_000
      const claim = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      const selectedAt = clock.now
      // Queued in the very millisecond the inputs were chosen: its record was already gone.
      jobs.forgetSession("ses_b")
      clock.now += 1_000
      // Queued after: the folder this run writes may still hold it.
      jobs.forgetSession("ses_c")
      clock.now += 1_000
      // A run that lost the job settles nothing.
      assert.equal(jobs.succeed("not-the-token", claim.watermark, [], selectedAt), false)
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_a", "ses_b", "ses_c"])
      // ses_d stays selected, so that forgetting it later queues it.
      assert.equal(jobs.succeed(claim.token, claim.watermark, [{ sessionId: "ses_d", sourceUpdatedAt: 500 }], selectedAt), true)
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_c"])

      clock.now += JOBS.FORGET_INTERVAL_MS
      const check = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      jobs.forgetSession("ses_d")
      assert.equal(jobs.finishUnchanged(check.token, check.watermark, []), true)
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_d"])
    }),
  },
  {
    name: "an unchanged finish settles exactly the forgets queued by the time it chose its inputs, and a success without that time settles those queued by its claim",
    run: scenario(({ clock, connect }) => {
      const jobs = connect()
      for (const id of ["ses_a", "ses_b", "ses_c", "ses_d"]) seedOutput(jobs, id, { at: 500, selectedAt: 500 })
      jobs.forgetSession("ses_a")
      const check = claimed(jobs.claim("worker-a"))
      clock.now += 1_000
      const selectedAt = clock.now
      jobs.forgetSession("ses_b")
      clock.now += 1
      jobs.forgetSession("ses_c")
      assert.equal(jobs.finishUnchanged(check.token, check.watermark, [{ sessionId: "ses_d", sourceUpdatedAt: 500 }], selectedAt), true)
      assert.deepEqual(ids(jobs.pendingForgets()), ["ses_c"])

      // The unchanged finish started no cooldown, and the queued forget opens the door at once.
      clock.now += 1_000
      const claim = claimed(jobs.claim("worker-a"))
      const claimedAt = clock.now
      clock.now += 1_000
      jobs.forgetSession("ses_d")
      assert.equal(jobs.succeed(claim.token, claim.watermark, []), true)
      assert.deepEqual(jobs.pendingForgets(), [{ sessionId: "ses_d", queuedAt: claimedAt + 1_000 }])
    }),
  },
  {
    name: "reconciliation knows each session once, from its own host's records only, counting records without a host as OpenCode 1's",
    run: scenario(({ connect }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_legacy", { at: 100 })
      seedOutput(jobs, "ses_one", { at: 200, host: "opencode1" })
      seedOutput(jobs, "ses_one#1", { at: 300, host: "opencode1" })
      seedOutput(jobs, "ses_one#2.1", { at: 400, host: "opencode1" })
      seedOutput(jobs, "ses_segments_only#1", { at: 500, host: "opencode1" })
      seedOutput(jobs, "ses_segments_only#2.1", { at: 600, host: "opencode1" })
      seedOutput(jobs, "ses_two", { at: 700, host: "opencode2" })
      seedOutput(jobs, "ses_two_compacted#3.2", { at: 800, host: "opencode2" })
      // A job without a record is nothing to compare with the host's sessions.
      seedStage1Done(jobs, "ses_job_only", 900)

      const known = (host: string) => jobs.knownSessions(host).sort()
      assert.deepEqual(known("opencode1"), ["ses_legacy", "ses_one", "ses_segments_only"])
      assert.deepEqual(known("opencode2"), ["ses_two", "ses_two_compacted"])
      assert.deepEqual(known("elsewhere"), [])
    }),
  },
  {
    name: "a version holds a session when it has a record or a stage-1 or capture job of it, segments included",
    run: scenario(({ connect, enqueue }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_record", { at: 100 })
      seedOutput(jobs, "ses_segment#2.1", { at: 200 })
      seedStage1Done(jobs, "ses_extracted", 300)
      seedJob(jobs, JOBS.CAPTURE, "ses_capture#1")
      seedOutput(jobs, "ses_not_asked", { at: 400 })
      seedStage1Done(jobs, "ses_not_asked_job", 500)
      // The phase-2 row is keyed too, but by no session.
      enqueue(jobs, 600)

      const held = (sessions: string[]) => jobs.heldOf(new Set(sessions)).sort()
      assert.deepEqual(held(["ses_record", "ses_segment", "ses_extracted", "ses_capture", "ses_unknown", JOBS.PHASE2_KEY]), [
        "ses_capture",
        "ses_extracted",
        "ses_record",
        "ses_segment",
      ])
      // A segment's key is not a session of its own.
      assert.deepEqual(held(["ses_segment#2.1", "ses_unknown"]), [])
      assert.deepEqual(held([]), [])
    }),
  },
  {
    name: "a reset empties the forget queue, so the next look waits the 6-hour recheck again rather than minutes",
    run: scenario(({ clock, connect, store }) => {
      const jobs = connect()
      seedOutput(jobs, "ses_a", { at: 500, selectedAt: 500 })
      seedOutput(jobs, "ses_b#1", { at: 600, selectedAt: 600 })
      jobs.forgetSession("ses_a")
      clock.now += 1_000
      jobs.forgetSession("ses_b")
      assert.equal(jobs.pendingForgets().length, 2)

      const resetAt = clock.now
      // Another process resets.
      const other = connect()
      assert.equal(store(other).reset().type, "reset")
      assert.deepEqual(jobs.pendingForgets(), [])
      assert.deepEqual(other.pendingForgets(), [])
      clock.now = resetAt + JOBS.FORGET_INTERVAL_MS
      assert.deepEqual(jobs.claim("worker-a"), { type: "skipped_unchanged", until: resetAt + COOLDOWN })
    }),
  },
  {
    name: "retention prunes a batch of stale outputs outside the last consolidation, stalest first, and keeps their stage-1 jobs",
    run: scenario(({ connect, stage1 }) => {
      const jobs = connect()
      const cutoff = START - 30 * DAY
      seedOutput(jobs, "ses_selected", { at: cutoff - 50 * DAY, selectedAt: cutoff - 50 * DAY })
      seedOutput(jobs, "ses_stale_2", { at: cutoff - 20 * DAY })
      seedOutput(jobs, "ses_stale_1", { at: cutoff - 100 * DAY, lastUsage: cutoff - 30 * DAY, usage: 4 })
      seedOutput(jobs, "ses_stale_3", { at: cutoff - 1 })
      seedOutput(jobs, "ses_at_cutoff", { at: cutoff })
      seedOutput(jobs, "ses_used", { at: cutoff - 100 * DAY, lastUsage: START, usage: 1 })
      seedStage1Done(jobs, "ses_stale_1", cutoff - 100 * DAY)

      assert.equal(jobs.pruneUnused(30, 2), 2)
      assert.deepEqual(outputIds(jobs), ["ses_at_cutoff", "ses_selected", "ses_stale_3", "ses_used"])
      // The job's watermark keeps phase 1 from extracting the pruned session again.
      assert.equal(stage1Job(jobs, "ses_stale_1")?.status, "done")
      assert.equal(stage1(jobs).isUpToDate("ses_stale_1", cutoff - 100 * DAY), true)
      assert.equal(jobs.pruneUnused(30), 1)
      assert.equal(jobs.pruneUnused(30), 0)
      assert.deepEqual(outputIds(jobs), ["ses_at_cutoff", "ses_selected", "ses_used"])
      assert.equal(phase2Job(jobs), undefined)
    }),
  },
  {
    name: "retention deletes at most 200 outputs a pass by default",
    run: scenario(({ connect }) => {
      const jobs = connect()
      for (let i = 0; i < STAGE_TWO.PRUNE_BATCH + 1; i++) seedOutput(jobs, `ses_${String(i).padStart(3, "0")}`, { at: i })
      assert.equal(jobs.pruneUnused(30), STAGE_TWO.PRUNE_BATCH)
      // The stalest went first.
      assert.deepEqual(outputIds(jobs), [`ses_${STAGE_TWO.PRUNE_BATCH}`])
      assert.equal(jobs.pruneUnused(30), 1)
    }),
  },
  {
    name: "two connections claiming phase 2 at the same moment: exactly one wins",
    run: scenario(({ connect, enqueue }) => {
      const racers = [connect(), connect()]
      enqueue(racers[0]!, 500)
      const outcomes = racers.map((racer, i) => racer.claim(`racer-${i}`))
      const winners = outcomes.filter((outcome) => outcome.type === "claimed")
      assert.equal(winners.length, 1)
      assert.deepEqual(outcomes[1], { type: "skipped_running" })
      assert.equal(phase2Job(racers[1]!)?.ownership_token, (winners[0] as Phase2Claim).token)
    }),
  },
  {
    name: "separate processes claiming phase 2 at once: exactly one wins and owns the row",
    async run(context) {
      const file = tempFile()
      const { db } = openDatabase(file)
      try {
        new Stage1Jobs(db).enqueuePhase2(500)
      } finally {
        db.close()
      }
      const results = await context.claimInProcesses(file, 4)
      for (const result of results) assert.equal(result.code, 0, result.output)
      const outcomes = results.map((result) => JSON.parse(result.output.trim().split("\n").at(-1) ?? "{}") as Phase2ClaimOutcome)
      const winners = outcomes.filter((outcome): outcome is Phase2Claim => outcome.type === "claimed")
      assert.equal(winners.length, 1, JSON.stringify(outcomes))
      assert.deepEqual(
        outcomes.filter((outcome) => outcome.type !== "claimed"),
        Array.from({ length: 3 }, () => ({ type: "skipped_running" })),
      )
      const check = openDatabase(file).db
      try {
        const row = check.prepare("SELECT status, ownership_token FROM jobs WHERE kind = $kind").get({ kind: JOBS.PHASE2 })
        assert.deepEqual(row, { status: "running", ownership_token: winners[0]!.token })
      } finally {
        check.close()
      }
    },
  },
]
