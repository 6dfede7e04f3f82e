// Codex's own cases for the memory state runtime, run against our stores. Source:
// openai/codex codex-rs/state/src/runtime/memories.rs at 0c608ae6146997ae13341ac1f36ddc55a05354ca
// (its 39 #[tokio::test] cases, named in each comment). Inputs and expected outputs are Codex's;
// where we differ on purpose the case asserts our behaviour and names the divergence.
// Codex counts seconds, we count milliseconds: watermarks like 100 are kept as they are (they are
// only compared), durations are in our units.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { JOBS, STAGE_ONE, STAGE_TWO } from "../../src/constants.js"
import type { HostSession } from "../../src/host.js"
import { markPolluted } from "../../src/store/pollution.js"
import { opencodeBinary } from "../e2e/support/opencode.js"
import { eligibleSessions } from "../../src/write/phase1/phase1.js"
import {
  DAY,
  HOUR,
  NO_WINDOW_DAYS,
  WORKER,
  claimed,
  claimedPhase2,
  closeAll,
  consolidate,
  count,
  output,
  persist,
  phase2Row,
  record,
  runtime,
  setUsage,
  snapshots,
  stage1Row,
  type Runtime,
} from "./support.js"

afterEach(closeAll)

const COOLDOWN = JOBS.PHASE2_COOLDOWN_MS
const ids = (rows: ReadonlyArray<{ sessionId: string }>) => rows.map((row) => row.sessionId)

function session(id: string, updatedAt: number): HostSession {
  return { id, title: id, directory: `/work/${id}`, createdAt: updatedAt, updatedAt }
}

/** Phase 1's own order of steps (phase1.ts run): eligible, not up to date, then claimed. */
function phase1Claims(rt: Runtime, sessions: HostSession[], options: { current?: string; maxClaims: number; maxAgeDays?: number; minIdleHours?: number }) {
  const eligible = eligibleSessions(sessions, {
    now: rt.clock.now,
    currentSessionId: options.current,
    maxAgeDays: options.maxAgeDays ?? 30,
    minIdleHours: options.minIdleHours ?? 12,
    excluded: rt.catalog.sessionsNotEnabled(),
  }).filter((s) => !rt.stage1.isUpToDate(s.id, s.updatedAt))
  return rt.stage1.claimMany(
    eligible.map((s) => ({ sessionId: s.id, updatedAt: s.updatedAt })),
    { workerId: "worker-a", maxClaims: options.maxClaims, maxRunning: options.maxClaims },
  )
}

/** Starts one claim-one-worker per entry at the same instant; returns each outcome's type, in order. */
async function race(file: string, claims: Array<{ sessionId: string; updatedAt: number; maxRunning: number }>): Promise<string[]> {
  const opencode = opencodeBinary()
  const worker = fileURLToPath(new URL("./claim-one-worker.ts", import.meta.url))
  const startAt = Date.now() + 1_500
  const results = await Promise.all(
    claims.map(
      (claim) =>
        new Promise<{ code: number | null; output: string }>((resolve) => {
          const args = [worker, file, String(startAt), claim.sessionId, String(claim.updatedAt), String(claim.maxRunning), String(claims.length)]
          const child = spawn(opencode, args, { env: { ...process.env, BUN_BE_BUN: "1" }, stdio: ["ignore", "pipe", "pipe"] })
          let out = ""
          child.stdout.on("data", (chunk) => (out += chunk))
          child.stderr.on("data", (chunk) => (out += chunk))
          child.on("close", (code) => resolve({ code, output: out }))
          child.on("error", (error) => resolve({ code: -1, output: String(error) }))
        }),
    ),
  )
  return results.map((result) => {
    expect(result.code, result.output).toBe(0)
    return (JSON.parse(result.output.trim().split("\n").pop()!) as { type: string }).type
  })
}

describe("stage-1 claims (Codex memories.rs)", () => {
  // stage1_claim_skips_when_up_to_date
  it("skips a claim at the watermark a success covers, and claims a newer one", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw", "sum"))
    expect(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, { ...WORKER, workerId: "worker-b" })).toEqual({ type: "skipped_up_to_date" })
    expect(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 101 }, { ...WORKER, workerId: "worker-b" }).type).toBe("claimed")
  })

  // stage1_running_stale_can_be_stolen_but_fresh_running_is_skipped
  it("skips a session another owner holds a live lease on, and takes it over once the lease is stale", () => {
    const rt = runtime()
    const b = rt.connect().stage1
    claimed(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, WORKER))
    expect(b.claim({ sessionId: "ses_a", updatedAt: 100 }, { ...WORKER, workerId: "worker-b" })).toEqual({ type: "skipped_running" })
    rt.db.prepare("UPDATE jobs SET lease_until = 0 WHERE kind = $kind AND job_key = 'ses_a'").run({ kind: JOBS.STAGE1 })
    expect(b.claim({ sessionId: "ses_a", updatedAt: 100 }, { ...WORKER, workerId: "worker-b" }).type).toBe("claimed")
  })

  // stage1_concurrent_claim_for_same_thread_is_conflict_safe: two processes claim one session at once.
  it("gives a session claimed by two processes at once to exactly one of them", async () => {
    const rt = runtime()
    const outcomes = await race(rt.file, [
      { sessionId: "ses_a", updatedAt: 100, maxRunning: 64 },
      { sessionId: "ses_a", updatedAt: 100, maxRunning: 64 },
    ])
    expect(outcomes.sort()).toEqual(["claimed", "skipped_running"])
  })

  // stage1_concurrent_claims_respect_running_cap. Codex reports the throttled claim as
  // SkippedRunning; ours names the cap (skipped_running_cap), a more precise outcome.
  it("lets only one of two concurrent claims of different sessions run under a cap of one", async () => {
    const rt = runtime()
    const outcomes = await race(rt.file, [
      { sessionId: "ses_a", updatedAt: 100, maxRunning: 1 },
      { sessionId: "ses_b", updatedAt: 101, maxRunning: 1 },
    ])
    expect(outcomes.sort()).toEqual(["claimed", "skipped_running_cap"])
  })

  // claim_stage1_jobs_filters_by_age_idle_and_current_thread (30 days, 12 h idle)
  it("leaves out the current session, one idle under 12 h and one older than 30 days", () => {
    const rt = runtime()
    const now = rt.clock.now
    const sessions = [
      session("ses_current", now),
      session("ses_fresh", now - HOUR),
      session("ses_just_under_idle", now - 12 * HOUR + 60_000),
      session("ses_eligible_idle", now - 12 * HOUR - 60_000),
      session("ses_old", now - 31 * DAY),
    ]
    const claims = phase1Claims(rt, sessions, { current: "ses_current", maxClaims: 5 })
    expect(claims.map((c) => c.sessionId)).toEqual(["ses_eligible_idle"])
  })

  // claim_stage1_jobs_bounds_state_scan_before_memory_probes. Codex cuts the eligible list to
  // scan_limit (THREAD_SCAN_LIMIT = 5,000) before the up-to-date probes, so with scan_limit 1 an
  // up-to-date newest session hides an older stale one (0 claims). Deliberately different: we have
  // no such cut (the listing is bounded at discovery), so the stale session is claimed at once,
  // which is Codex's result with scan_limit 2.
  it("claims an older stale session even when the newest eligible one is up to date", () => {
    const rt = runtime()
    const now = rt.clock.now
    const upToDate = session("ses_up_to_date", now - 13 * HOUR)
    persist(rt, upToDate.id, upToDate.updatedAt, output("raw", "summary"))
    const claims = phase1Claims(rt, [session("ses_current", now), upToDate, session("ses_stale", now - 14 * HOUR)], { current: "ses_current", maxClaims: 1 })
    expect(claims.map((c) => c.sessionId)).toEqual(["ses_stale"])
  })

  // claim_stage1_jobs_skips_threads_with_disabled_memory_mode
  it("leaves out a session whose memory mode is disabled", () => {
    const rt = runtime()
    const now = rt.clock.now
    rt.catalog.setMode("ses_disabled", "disabled")
    const claims = phase1Claims(rt, [session("ses_current", now), session("ses_disabled", now - 13 * HOUR), session("ses_enabled", now - 13 * HOUR)], {
      current: "ses_current",
      maxClaims: 10,
    })
    expect(claims.map((c) => c.sessionId)).toEqual(["ses_enabled"])
  })

  // claim_stage1_jobs_enforces_global_running_cap: 80 candidates, 10 already running, cap 64.
  it("claims only up to the running cap across owners, and nothing once it is reached", () => {
    const rt = runtime()
    const candidates = Array.from({ length: 80 }, (_, i) => ({ sessionId: `ses_${String(i).padStart(3, "0")}`, updatedAt: 10_000 - i }))
    const seed = rt.db.prepare(
      `INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at, lease_until, retry_remaining, input_watermark)
       VALUES ($kind, $id, 'running', 'other', $token, $now, $lease, 3, $at)`,
    )
    for (const candidate of candidates.slice(0, 10)) {
      seed.run({ kind: JOBS.STAGE1, id: candidate.sessionId, token: `t-${candidate.sessionId}`, now: rt.clock.now, lease: rt.clock.now + HOUR, at: candidate.updatedAt })
    }
    const options = { workerId: "worker-a", maxClaims: 64, maxRunning: 64 }
    expect(rt.stage1.claimMany(candidates, options)).toHaveLength(54)
    expect(rt.stage1.runningCount()).toBe(64)
    expect(rt.stage1.claimMany(candidates, options)).toHaveLength(0)
  })

  // claim_stage1_jobs_processes_two_full_batches_across_startup_passes
  it("claims a second full batch once the first one succeeded", () => {
    const rt = runtime()
    const candidates = Array.from({ length: 200 }, (_, i) => ({ sessionId: `ses_${String(i).padStart(3, "0")}`, updatedAt: 10_000 - i }))
    const options = { workerId: "worker-a", maxClaims: 64, maxRunning: 64 }
    const first = rt.stage1.claimMany(candidates, options)
    expect(first).toHaveLength(64)
    for (const claim of first) expect(rt.stage1.succeed(claim.sessionId, claim.token, output("raw", "summary"))).toBe(true)
    const second = rt.stage1.claimMany(candidates, options)
    expect(second).toHaveLength(64)
    // The second batch is the next 64 sessions, not a repeat of the first.
    expect(second[0]!.sessionId).toBe("ses_064")
  })

  // stage1_retry_exhaustion_does_not_block_newer_watermark (Codex fails with a 0 s delay; ours is
  // the fixed 1 h backoff, so the clock moves past it).
  it("refuses a session whose retries are spent until newer activity restores them", () => {
    const rt = runtime()
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = claimed(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, WORKER))
      expect(rt.stage1.fail("ses_a", claim.token, "boom")).toBe(true)
      rt.clock.now += STAGE_ONE.RETRY_DELAY_MS
    }
    expect(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, WORKER)).toEqual({ type: "skipped_retry_exhausted" })
    expect(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 101 }, WORKER).type).toBe("claimed")
    expect(stage1Row(rt, "ses_a")).toMatchObject({ retry_remaining: 3, input_watermark: 101 })
  })
})

describe("stage-1 outcomes (Codex memories.rs)", () => {
  // mark_stage1_job_succeeded_no_output_skips_phase2_when_output_was_already_absent
  it("stores nothing and queues no consolidation when there was nothing to remember and no output before", () => {
    const rt = runtime()
    const claim = claimed(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, WORKER))
    expect(rt.stage1.succeedNoOutput("ses_a", claim.token)).toBe(true)
    expect(record(rt, "ses_a")).toBeUndefined()
    expect(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 100 }, { ...WORKER, workerId: "worker-b" })).toEqual({ type: "skipped_up_to_date" })
    expect(phase2Row(rt)).toBeUndefined()
  })

  // mark_stage1_job_succeeded_no_output_enqueues_phase2_when_deleting_output
  it("deletes the old output and queues a consolidation at the new watermark when a rerun finds nothing", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw", "sum"))
    const first = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(first.watermark).toBe(100)
    expect(rt.phase2.succeed(first.token, first.watermark, [])).toBe(true)
    const rerun = claimed(rt.stage1.claim({ sessionId: "ses_a", updatedAt: 101 }, { ...WORKER, workerId: "worker-b" }))
    expect(rt.stage1.succeedNoOutput("ses_a", rerun.token)).toBe(true)
    expect(record(rt, "ses_a")).toBeUndefined()
    rt.clock.now += COOLDOWN + 1
    const second = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(second.watermark).toBe(101)
    expect(rt.phase2.succeed(second.token, second.watermark, [])).toBe(true)
  })

  // mark_stage1_job_succeeded_enqueues_global_consolidation
  it("queues a consolidation at the newest watermark phase 1 stored", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    persist(rt, "ses_b", 101)
    expect(claimedPhase2(rt.phase2.claim("worker-a")).watermark).toBe(101)
  })

  // delete_thread_removes_stage1_output_and_enqueues_phase2_when_selected. Ours also puts the
  // session in the forget queue (not in Codex: it lets the next consolidation come within minutes).
  it("deletes a consolidated session's output and job and queues a consolidation to forget it", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw", "sum"))
    consolidate(rt, ["ses_a"])
    const beforeDelete = rt.clock.now
    expect(rt.phase2.forgetSession("ses_a")).toEqual({ deleted: true, queued: true })
    expect(record(rt, "ses_a")).toBeUndefined()
    expect(stage1Row(rt, "ses_a")).toBeUndefined()
    const row = phase2Row(rt)!
    expect(row.status).toBe("pending")
    expect(row.input_watermark).toBeGreaterThanOrEqual(beforeDelete)
    expect(rt.phase2.selectInputs(10, NO_WINDOW_DAYS)).toEqual([])
    expect(rt.phase2.pendingForgets().map((f) => f.sessionId)).toEqual(["ses_a"])
  })

  // clear_memory_data_clears_rows_and_preserves_thread_memory_modes. Codex leaves no job row;
  // deliberately (codex-map src/store/memory-store.ts) ours leaves the phase-2 row done at the
  // reset with no success, so an empty folder is not consolidated at once.
  it("clears outputs and jobs on reset and keeps every session's memory mode", () => {
    const rt = runtime()
    persist(rt, "ses_enabled", 100)
    rt.stage1.enqueuePhase2(100)
    rt.catalog.setMode("ses_disabled", "disabled")
    expect(rt.version.reset()).toEqual({ type: "reset", outputs: 1, jobs: 2 })
    expect(count(rt, "SELECT COUNT(*) AS n FROM stage1_outputs")).toBe(0)
    expect(count(rt, "SELECT COUNT(*) AS n FROM jobs WHERE kind = $kind", { kind: JOBS.STAGE1 })).toBe(0)
    expect(rt.db.prepare("SELECT status, last_success_at FROM jobs WHERE kind = $kind").all({ kind: JOBS.PHASE2 })).toEqual([{ status: "done", last_success_at: null }])
    expect(rt.catalog.mode("ses_enabled")).toBe("enabled")
    expect(rt.catalog.mode("ses_disabled")).toBe("disabled")
  })
})

describe("phase-2 lock (Codex memories.rs)", () => {
  // phase2_global_lock_respects_success_cooldown
  it("holds the lock back for 6 h after a success, even with new input queued", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(100)
    const claim = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(rt.phase2.succeed(claim.token, claim.watermark, [])).toBe(true)
    expect(rt.phase2.claim("worker-a").type).toBe("skipped_cooldown")
    rt.stage1.enqueuePhase2(101)
    expect(rt.phase2.claim("worker-a").type).toBe("skipped_cooldown")
    rt.clock.now += COOLDOWN + 1
    expect(rt.phase2.claim("worker-a").type).toBe("claimed")
  })

  // phase2_global_lock_can_be_claimed_after_retry_budget_is_exhausted (Codex fails with a 0 s
  // delay; ours backs off 1 h, so the clock moves past it)
  it("still grants the lock after three failures spent every retry", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(100)
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = claimedPhase2(rt.phase2.claim("worker-a"))
      expect(rt.phase2.fail(claim.token, "boom")).toBe(true)
      rt.clock.now += STAGE_TWO.RETRY_DELAY_MS
    }
    expect(phase2Row(rt)!.retry_remaining).toBe(0)
    expect(rt.phase2.claim("worker-a").type).toBe("claimed")
  })

  // phase2_global_lock_allows_only_one_fresh_runner
  it("refuses a second runner while the first holds a fresh lease", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(200)
    claimedPhase2(rt.phase2.claim("worker-a"))
    expect(rt.connect().phase2.claim("worker-b")).toEqual({ type: "skipped_running" })
  })

  // phase2_global_lock_creates_missing_job_row
  it("creates the missing row already claimed at watermark 0, and cools down after its success", () => {
    const rt = runtime()
    const claim = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(claim.watermark).toBe(0)
    const b = rt.connect().phase2
    expect(b.claim("worker-b")).toEqual({ type: "skipped_running" })
    expect(rt.phase2.succeed(claim.token, 0, [])).toBe(true)
    expect(b.claim("worker-b").type).toBe("skipped_cooldown")
  })

  // phase2_global_lock_stale_lease_allows_takeover
  it("hands a stale lease to a new owner, whose success counts and the old owner's does not", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(300)
    const a = claimedPhase2(rt.phase2.claim("worker-a"))
    rt.db.prepare("UPDATE jobs SET lease_until = $at WHERE kind = $kind").run({ at: rt.clock.now - 1, kind: JOBS.PHASE2 })
    const other = rt.connect().phase2
    const b = claimedPhase2(other.claim("worker-b"))
    expect(b.token).not.toBe(a.token)
    expect(b.watermark).toBe(300)
    expect(rt.phase2.succeed(a.token, 300, [])).toBe(false)
    expect(other.succeed(b.token, 300, [])).toBe(true)
  })

  // enqueue_global_consolidation_keeps_phase2_input_watermark_monotonic
  it("moves the input watermark past the last one even when older input is queued", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(500)
    const first = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(first.watermark).toBe(500)
    expect(rt.phase2.succeed(first.token, 500, [])).toBe(true)
    rt.stage1.enqueuePhase2(400)
    rt.clock.now += COOLDOWN + 1
    expect(claimedPhase2(rt.phase2.claim("worker-b")).watermark).toBeGreaterThan(500)
  })

  // phase2_failure_fallback_updates_unowned_running_job. Codex's fallback
  // (mark_global_phase2_job_failed_if_unowned) fails a running row whose token is NULL, so the next
  // claim meets the 1 h retry backoff. Deliberately different: ours has no such fallback, because a
  // running row without a token is what failKeepingLease leaves on purpose (a consolidator that may
  // still be writing); it stays running until its lease ends, then is claimable with no backoff.
  it("does not fail a running job whose token is gone, and frees it when its lease ends", () => {
    const rt = runtime()
    rt.stage1.enqueuePhase2(400)
    const claim = claimedPhase2(rt.phase2.claim("worker-a"))
    rt.db.prepare("UPDATE jobs SET ownership_token = NULL WHERE kind = $kind").run({ kind: JOBS.PHASE2 })
    expect(rt.phase2.fail(claim.token, "lost")).toBe(false)
    expect(rt.phase2.claim("worker-b")).toEqual({ type: "skipped_running" })
    rt.clock.now += STAGE_TWO.JOB_LEASE_MS + 1
    expect(rt.phase2.claim("worker-b").type).toBe("claimed")
  })
})

describe("phase-2 inputs (Codex memories.rs)", () => {
  // list_stage1_outputs_for_global_returns_latest_outputs. Our counterpart is the record listing
  // (VersionStore.records). Codex hydrates cwd and git_branch from the thread; ours stores the cwd
  // on the record and keeps no branch (codex-map src/store/migrations.ts, src/write/phase1/git-branch.ts).
  it("lists records newest first with their slug and folder", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw memory a", "summary a", null, "/work/workspace-a"))
    persist(rt, "ses_b", 101, output("raw memory b", "summary b", "rollout-b", "/work/workspace-b"))
    const rows = rt.version.records(0, 10)
    expect(rows.map((r) => [r.session_id, r.rollout_summary, r.rollout_slug, r.cwd])).toEqual([
      ["ses_b", "summary b", "rollout-b", "/work/workspace-b"],
      ["ses_a", "summary a", null, "/work/workspace-a"],
    ])
  })

  // list_stage1_outputs_for_global_skips_empty_payloads (ported to the selection, which is where
  // we skip blank records; phase 1 never stores one)
  it("skips a blank record even when it is the newest", () => {
    const rt = runtime()
    const insert = rt.db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, $at, $raw, $summary, $at)",
    )
    insert.run({ id: "ses_non_empty", at: 100, raw: "raw memory", summary: "summary" })
    insert.run({ id: "ses_empty", at: 101, raw: "", summary: "" })
    expect(ids(rt.phase2.selectInputs(1, NO_WINDOW_DAYS))).toEqual(["ses_non_empty"])
  })

  // Not a Codex test: its blank check is SQLite's trim(), which strips spaces only, so a record of
  // tabs and newlines is selected there. Ours strips " \t\r\n" and leaves it out.
  it("treats a record of only tabs and newlines as blank", () => {
    const rt = runtime()
    rt.db
      .prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ('ses_ws', 100, '\t\n', ' \r\n', 100)")
      .run()
    expect(rt.phase2.selectInputs(10, NO_WINDOW_DAYS)).toEqual([])
  })

  // list_stage1_outputs_for_global_skips_polluted_threads
  it("leaves a polluted session's record out of the inputs", () => {
    const rt = runtime()
    persist(rt, "ses_enabled", 100)
    persist(rt, "ses_polluted", 100)
    markPolluted(rt.db, "ses_polluted", rt.clock.now)
    expect(ids(rt.phase2.selectInputs(10, NO_WINDOW_DAYS, rt.catalog.sessionsNotEnabled()))).toEqual(["ses_enabled"])
  })

  // get_phase2_input_selection_returns_current_selected_rows
  it("selects the current top records, whatever the last consolidation consumed, in session order", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    persist(rt, "ses_b", 101)
    persist(rt, "ses_c", 102)
    const claim = claimedPhase2(rt.phase2.claim("worker-a"))
    expect(claim.watermark).toBe(102)
    expect(rt.phase2.succeed(claim.token, claim.watermark, snapshots(rt, ["ses_c", "ses_a"]))).toBe(true)
    expect(ids(rt.phase2.selectInputs(2, NO_WINDOW_DAYS))).toEqual(["ses_b", "ses_c"])
  })

  // get_phase2_input_selection_excludes_polluted_previous_selection
  it("drops a consolidated session from the inputs once it is polluted", () => {
    const rt = runtime()
    persist(rt, "ses_enabled", 100)
    persist(rt, "ses_polluted", 101)
    consolidate(rt, ["ses_enabled", "ses_polluted"])
    markPolluted(rt.db, "ses_polluted", rt.clock.now)
    expect(ids(rt.phase2.selectInputs(2, NO_WINDOW_DAYS, rt.catalog.sessionsNotEnabled()))).toEqual(["ses_enabled"])
  })

  // mark_thread_memory_mode_polluted_enqueues_phase2_for_selected_threads. Codex keeps the record
  // (filtered by mode) and the next consolidation comes after the 6 h cooldown. Deliberately
  // different (D23): pollution goes through the forget path, which deletes the record and queues a
  // forget, so the consolidation may come 5 minutes after the last success.
  it("forgets a consolidated session when it is polluted, and lets a consolidation come within minutes", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    consolidate(rt, ["ses_a"])
    expect(markPolluted(rt.db, "ses_a", rt.clock.now)).toEqual({ changed: true })
    expect(rt.phase2.forgetSession("ses_a")).toEqual({ deleted: true, queued: true })
    expect(rt.phase2.claim("worker-a").type).toBe("skipped_cooldown")
    rt.clock.now += JOBS.FORGET_INTERVAL_MS + 1
    expect(rt.phase2.claim("worker-a").type).toBe("claimed")
  })

  // mark_thread_memory_mode_polluted_enqueues_phase2_when_already_polluted: Codex reports no
  // transition but still queues phase 2. Ours reports no transition either (the caller then does
  // nothing), and the sweep every pass makes (Forgetting.sweep) forgets the kept-out session's
  // record, which queues phase 2: the same end, level-triggered.
  it("reports no change for a session already polluted, and the sweep still queues its forgetting", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    consolidate(rt, ["ses_a"])
    rt.catalog.setMode("ses_a", "polluted")
    expect(markPolluted(rt.db, "ses_a", rt.clock.now)).toEqual({ changed: false })
    expect(rt.phase2.heldOf(rt.catalog.sessionsNotEnabled())).toEqual(["ses_a"])
    expect(rt.phase2.forgetSession("ses_a").queued).toBe(true)
    expect(phase2Row(rt)!.status).toBe("pending")
  })

  // Not a Codex test: Codex's mark_thread_memory_mode_polluted updates any mode but 'polluted', so a
  // disabled thread becomes polluted. Ours keeps a session the user disabled disabled.
  it("keeps a disabled session disabled when it would be polluted", () => {
    const rt = runtime()
    rt.catalog.setMode("ses_a", "disabled")
    expect(markPolluted(rt.db, "ses_a", rt.clock.now)).toEqual({ changed: false })
    expect(rt.catalog.mode("ses_a")).toBe("disabled")
  })

  // get_phase2_input_selection_returns_regenerated_selected_rows
  it("selects a consolidated session's refreshed record and keeps the snapshot last consumed", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw-100", "summary-100", "rollout-100"))
    consolidate(rt, ["ses_a"])
    persist(rt, "ses_a", 101, output("raw-101", "summary-101", "rollout-101"))
    const selection = rt.phase2.selectInputs(1, NO_WINDOW_DAYS)
    expect(selection.map((s) => [s.sessionId, s.sourceUpdatedAt])).toEqual([["ses_a", 101]])
    expect(record(rt, "ses_a")).toMatchObject({ selected_for_phase2: 1, selected_for_phase2_source_updated_at: 100 })
  })

  // get_phase2_input_selection_uses_current_ranking_after_refreshes
  it("ranks refreshed records by their new recency, not by the last consolidation", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    persist(rt, "ses_b", 101)
    persist(rt, "ses_c", 99)
    persist(rt, "ses_d", 98)
    expect(ids(rt.phase2.selectInputs(2, NO_WINDOW_DAYS))).toEqual(["ses_a", "ses_b"])
    consolidate(rt, ["ses_b", "ses_a"])
    persist(rt, "ses_a", 102)
    persist(rt, "ses_c", 103)
    persist(rt, "ses_d", 104)
    expect(ids(rt.phase2.selectInputs(2, NO_WINDOW_DAYS))).toEqual(["ses_c", "ses_d"])
  })

  // mark_global_phase2_job_succeeded_updates_selected_snapshot_timestamp
  it("marks the snapshot a later consolidation consumed", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    consolidate(rt, ["ses_a"])
    persist(rt, "ses_a", 101)
    rt.clock.now += COOLDOWN + 1
    consolidate(rt, ["ses_a"])
    expect(ids(rt.phase2.selectInputs(1, NO_WINDOW_DAYS))).toEqual(["ses_a"])
    expect(record(rt, "ses_a")).toMatchObject({ selected_for_phase2: 1, selected_for_phase2_source_updated_at: 101 })
  })

  // mark_global_phase2_job_succeeded_only_marks_exact_selected_snapshots. Codex matches the exact
  // snapshot, so a record refreshed during the run ends unmarked (0, NULL). Deliberately different
  // (codex-map src/store/phase2-jobs.ts): ours marks it by session with the snapshot that was read,
  // so it stays protected from pruning and a later deletion still queues phase 2.
  it("marks a record refreshed during the run with the snapshot the run read", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    const claim = claimedPhase2(rt.phase2.claim("worker-a"))
    const read = rt.phase2.selectInputs(1, NO_WINDOW_DAYS)
    expect(read.map((s) => s.sourceUpdatedAt)).toEqual([100])
    persist(rt, "ses_a", 101)
    expect(rt.phase2.succeed(claim.token, claim.watermark, read)).toBe(true)
    expect(record(rt, "ses_a")).toMatchObject({ selected_for_phase2: 1, selected_for_phase2_source_updated_at: 100 })
    expect(rt.phase2.selectInputs(1, NO_WINDOW_DAYS).map((s) => s.sourceUpdatedAt)).toEqual([101])
  })

  // get_phase2_input_selection_prioritizes_usage_count_then_recent_usage
  it("ranks by usage count, then by the most recent use", () => {
    const rt = runtime()
    const now = rt.clock.now
    persist(rt, "ses_a", now - 3 * DAY)
    persist(rt, "ses_b", now - 2 * DAY)
    persist(rt, "ses_c", now - DAY)
    setUsage(rt, "ses_a", 5, now - 10 * DAY)
    setUsage(rt, "ses_b", 5, now - DAY)
    setUsage(rt, "ses_c", 1, now - HOUR)
    expect(ids(rt.phase2.selectInputs(1, 30))).toEqual(["ses_b"])
  })

  // get_phase2_input_selection_excludes_stale_used_memories_but_keeps_fresh_never_used
  it("leaves out a record last used beyond the window and keeps a recent never-used one", () => {
    const rt = runtime()
    const now = rt.clock.now
    persist(rt, "ses_a", now - 40 * DAY)
    persist(rt, "ses_b", now - 2 * DAY)
    persist(rt, "ses_c", now - 50 * DAY)
    setUsage(rt, "ses_a", 9, now - 31 * DAY)
    setUsage(rt, "ses_c", 1, now - DAY)
    expect(ids(rt.phase2.selectInputs(3, 30))).toEqual(["ses_b", "ses_c"])
  })

  // get_phase2_input_selection_prefers_recent_thread_updates_over_recent_generation
  it("ranks by the session's activity, not by when the record was generated", () => {
    const rt = runtime()
    persist(rt, "ses_older", 100)
    persist(rt, "ses_newer", 200)
    rt.db.prepare("UPDATE stage1_outputs SET generated_at = 300 WHERE session_id = 'ses_older'").run()
    rt.db.prepare("UPDATE stage1_outputs SET generated_at = 150 WHERE session_id = 'ses_newer'").run()
    const selection = rt.phase2.selectInputs(1, NO_WINDOW_DAYS)
    expect(selection.map((s) => [s.sessionId, s.sourceUpdatedAt])).toEqual([["ses_newer", 200]])
  })
})

describe("retention (Codex memories.rs)", () => {
  // prune_stage1_outputs_for_retention_prunes_stale_unselected_rows_only
  it("prunes stale records outside the last consolidation and keeps their jobs", () => {
    const rt = runtime()
    const now = rt.clock.now
    persist(rt, "ses_stale_unused", now - 60 * DAY)
    persist(rt, "ses_stale_used", now - 50 * DAY)
    persist(rt, "ses_stale_selected", now - 45 * DAY)
    persist(rt, "ses_fresh_used", now - 10 * DAY)
    setUsage(rt, "ses_stale_used", 3, now - 40 * DAY)
    rt.db.prepare("UPDATE stage1_outputs SET selected_for_phase2 = 1, selected_for_phase2_source_updated_at = source_updated_at WHERE session_id = 'ses_stale_selected'").run()
    setUsage(rt, "ses_fresh_used", 8, now - 2 * DAY)
    const jobsBefore = count(rt, "SELECT COUNT(*) AS n FROM jobs WHERE kind = $kind", { kind: JOBS.STAGE1 })
    expect(rt.phase2.pruneUnused(30, 100)).toBe(2)
    expect(rt.db.prepare("SELECT session_id FROM stage1_outputs ORDER BY session_id").all()).toEqual([
      { session_id: "ses_fresh_used" },
      { session_id: "ses_stale_selected" },
    ])
    expect(count(rt, "SELECT COUNT(*) AS n FROM jobs WHERE kind = $kind", { kind: JOBS.STAGE1 })).toBe(jobsBefore)
  })

  // prune_stage1_outputs_for_retention_respects_batch_limit (that the stalest go first is Codex's
  // ORDER BY, not an assertion of its test)
  it("prunes at most the batch, stalest first", () => {
    const rt = runtime()
    const now = rt.clock.now
    persist(rt, "ses_a", now - 60 * DAY)
    persist(rt, "ses_b", now - 50 * DAY)
    persist(rt, "ses_c", now - 40 * DAY)
    expect(rt.phase2.pruneUnused(30, 2)).toBe(2)
    expect(rt.db.prepare("SELECT session_id FROM stage1_outputs").all()).toEqual([{ session_id: "ses_c" }])
  })
})
