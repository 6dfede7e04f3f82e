// Phase 1: find finished sessions, claim a few, and extract each into a memory record, in the
// background. A pass is one linear run:
//   1. skip when disabled, disposed, already running, or within 30 s of a pass that claimed work
//      (a triggered pass skipped by that gate runs once when the gate ends)
//   2. discover root sessions of every project (cached 30 s; any error skips the pass)
//   3. keep the eligible ones, newest first
//   4. claim up to max_rollouts_per_startup in the database (also the cap across processes)
//   5. extract each claimed session; store the record, "nothing to remember", or the failure
// Nothing here is awaited by a user's turn; dispose() aborts it and gives claimed jobs back.
import { SingleFlight } from "../../util/single-flight.js"
import type { Diagnostics } from "../../diagnostics.js"
import { errorMessage } from "../../diagnostics.js"
import type { Host, HostSession, ModelRef, SessionListing } from "../../host.js"
import type { MemoryOptions } from "../../options.js"
import type { SegmentCaptures } from "../../store/segment-captures.js"
import type { Stage1Jobs } from "../../store/stage1-jobs.js"
import { STAGE_ONE } from "../../constants.js"
import { runExtraction, type ExtractionBudget, type ExtractionContext } from "./extraction-job.js"
import type { PassReport } from "./phase1-results.js"
import type { ExtractionStrategy } from "./extraction-strategy.js"
import { isHelperSession } from "../helpers/helper-sessions.js"
import type { OwnFiles } from "../transcript/own-output.js"
import { UnsettledOutcomes } from "../unsettled.js"
import { captureSegments, type CaptureReport } from "./segment-capture.js"
import { breakerScope, type RateLimitBreaker } from "../helpers/breaker.js"
import type { ProjectIdentity } from "./project-identity.js"

export interface Phase1Deps {
  host: Host
  options: MemoryOptions
  now: () => number
  diagnostics: Diagnostics
  /** The version's prompt and answer rules. */
  strategy: ExtractionStrategy
  /** The version's memory root (the helper sessions' folder). */
  memoryRoot: string
  /** The job table, once the database is open. */
  jobs: () => Stage1Jobs | undefined
  /** The capture queue of compacted sessions (same database); without it compactions are not captured. */
  captures?: () => SegmentCaptures | undefined
  /** Sessions whose memory mode is not "enabled". */
  excludedSessions: () => ReadonlySet<string>
  /** Helper sessions this instance started: the read path skips them while they run. */
  helperSessions: Set<string>
  /** extract_model, else OpenCode's small_model; undefined leaves the choice to OpenCode. */
  extractionModel: () => ModelRef | undefined
  /** Identifies this process in job rows. */
  workerId: string
  /** Runs after every triggered pass, whatever it did (phase 2 follows phase 1). */
  afterPass?: () => void
  /** Shared with phase 2: a rate-limited model is left alone for an hour. */
  breaker: RateLimitBreaker
  /** The redaction audit: counts by class for each extraction, never the secrets. */
  recordRedactions?: ExtractionContext["recordRedactions"]
  recordUsage?: ExtractionContext["recordUsage"]
  /** Why background learning is held (paused by the user, or the daily budget spent), if it is. */
  hold?: () => string | undefined
  /**
   * Read once per pass: before when nothing of a session is learned (the last reset, the session's
   * own forget), if ever.
   */
  learningWindow?: () => (sessionId: string) => number | undefined
  /** Memory's own files: transcripts leave out tool calls that read them. */
  ownFiles?: OwnFiles
  /** The project a session belongs to, stored with its records. */
  projectOf?: (session: HostSession) => ProjectIdentity | undefined
  /** OpenCode no longer has a claimed session: memory forgets it (extraction-job.ts). */
  onSessionGone?: (sessionId: string) => void
  /** Each fresh listing of the host's sessions, for reconciliation (the instance throttles it). */
  onDiscovered?: (listing: SessionListing, signal: AbortSignal) => void
  /** Before each pass: the owner opens again a database that could not be opened (a full disk). */
  beforePass?: () => void
}

export class Phase1 {
  private readonly shutdown = new AbortController()
  private readonly flight = new SingleFlight<PassReport>()
  private readonly captureFlight = new SingleFlight<CaptureReport[]>()
  private capturesQueued = false
  private lastClaimingPass = Number.NEGATIVE_INFINITY
  /** The one pass put off until the gate ends, when a trigger met the gate. */
  private gateTimer: ReturnType<typeof setTimeout> | undefined
  private discovered: { at: number; listing: SessionListing } | undefined
  private budget: (ExtractionBudget & { at: number }) | undefined
  private readonly seenSessions = new Set<string>()
  private readonly lastIdle = new Map<string, number>()
  /** Outcomes this process could not write; settled before its next pass claims anything. */
  private readonly unsettled = new UnsettledOutcomes()

  constructor(private readonly deps: Phase1Deps) {}

  /** A user's message: the first one of each session starts a pass. */
  onChatMessage(sessionId: string): void {
    if (this.seenSessions.has(sessionId)) return
    this.seenSessions.add(sessionId)
    this.trigger(sessionId)
  }

  /** `session.status` idle and the older `session.idle` both report the same moment: count it once. */
  onIdle(sessionId: string): void {
    const now = this.deps.now()
    const last = this.lastIdle.get(sessionId)
    this.lastIdle.set(sessionId, now)
    if (last !== undefined && now - last < STAGE_ONE.IDLE_DEDUPE_MS) return
    this.trigger(sessionId)
  }

  /**
   * A compaction of the session: what came before it is final, so it is queued at once (before
   * anything can fail) and learned from now, without the idle gate.
   */
  onCompacted(sessionId: string): void {
    const captures = this.deps.captures?.()
    if (!captures || !this.deps.options.generate_memories || this.shutdown.signal.aborted) return
    captures.enqueue(sessionId, this.deps.now())
    this.triggerCaptures()
  }

  /** Runs the capture queue in the background (also retries of earlier failures); failures become diagnostics. */
  triggerCaptures(): void {
    const run = this.captureFlight.run(() => this.runCaptures())
    // A compaction during a run is captured by the run after it.
    if (!run) {
      this.capturesQueued = true
      return
    }
    void run
      .finally(() => {
        if (!this.capturesQueued) return
        this.capturesQueued = false
        this.triggerCaptures()
      })
      .then((reports) => (reports.some((report) => report.results.some((result) => result.outcome === "stored" || result.outcome === "nothing_to_remember")) ? this.deps.afterPass?.() : undefined))
      .catch((error) => this.deps.diagnostics.error("phase1", error))
  }

  /**
   * Resolves once the pass and the captures in flight now, if any, are over; not the reruns they
   * queued, which may only list sessions (phase 2 waits for this, and must not wait for those).
   */
  async inFlight(): Promise<void> {
    await Promise.all([this.flight.runInFlight(), this.captureFlight.runInFlight()])
  }

  capturesSettled(): Promise<void> {
    return this.captureFlight.settled()
  }

  /**
   * Starts a pass in the background, then phase 2 (afterPass); failures become diagnostics. A
   * trigger while a pass is under way gets one more pass right after it: the pass under way listed
   * the sessions before this trigger, and a session that became due meanwhile would otherwise
   * wait for the next unrelated event.
   */
  trigger(currentSessionId?: string): void {
    this.triggerCaptures()
    void this.flight.request(async (): Promise<PassReport> => {
      try {
        const report = await this.guardedRun(currentSessionId)
        if (report.type === "skipped" && report.reason === "gate") this.afterGate(currentSessionId)
        return report
      } finally {
        try {
          this.deps.afterPass?.()
        } catch (error) {
          this.deps.diagnostics.error("phase1", error)
        }
      }
    })
  }

  /**
   * A trigger that met the gate is put off, not dropped: what it would have found (a session
   * that became due while the last pass ran) would otherwise wait for the next unrelated event,
   * which may be hours away. One unref'd timer at most, so `opencode run` still exits.
   */
  private afterGate(currentSessionId: string | undefined): void {
    if (this.gateTimer || this.shutdown.signal.aborted) return
    const wait = Math.max(0, STAGE_ONE.PASS_GATE_MS - (this.deps.now() - this.lastClaimingPass)) + 50
    this.gateTimer = setTimeout(() => {
      this.gateTimer = undefined
      this.trigger(currentSessionId)
    }, Math.min(wait, STAGE_ONE.PASS_GATE_MS + 50))
    this.gateTimer.unref?.()
  }

  pass(currentSessionId?: string): Promise<PassReport> {
    return this.flight.run(() => this.guardedRun(currentSessionId)) ?? Promise.resolve({ type: "skipped", reason: "in_flight" })
  }

  /** A pass that never throws: a failure is logged with its cause and ends the pass. */
  private async guardedRun(currentSessionId: string | undefined): Promise<PassReport> {
    try {
      return await this.run(currentSessionId)
    } catch (error) {
      this.deps.diagnostics.error("phase1", error)
      return { type: "failed", error: errorMessage(error) }
    }
  }

  /** Aborts extraction in flight; the jobs are given back without spending a retry. */
  async dispose(): Promise<void> {
    this.shutdown.abort(new Error("the plugin is shutting down"))
    clearTimeout(this.gateTimer)
    await Promise.all([this.flight.settled(), this.captureFlight.settled()])
    // A last try: what stays unsettled is ended by its lease, or sooner once this process is gone.
    this.settle()
  }

  /** Outcomes kept since a write failed, as memory_inspect shows them. */
  unsettledCount(): number {
    return this.unsettled.size
  }

  /** Opens what could not be opened, then settles what could not be written, before a pass. */
  private prepare(): void {
    try {
      this.deps.beforePass?.()
    } catch (error) {
      this.deps.diagnostics.error("phase1", error)
    }
    this.settle()
  }

  private settle(): void {
    if (!this.unsettled.size) return
    const settled = this.unsettled.settle((message) => this.deps.diagnostics.report("warn", "phase1", message))
    if (settled.recorded || settled.givenBack) {
      this.deps.diagnostics.report("info", "phase1", `settled ${settled.recorded + settled.givenBack} job outcome(s) a failed write had left open (${settled.recorded} recorded, ${settled.givenBack} given back)`)
    }
  }

  private async run(currentSessionId: string | undefined): Promise<PassReport> {
    const { options, now, diagnostics } = this.deps
    if (!options.generate_memories) return { type: "skipped", reason: "disabled" }
    if (this.shutdown.signal.aborted) return { type: "skipped", reason: "disposed" }
    if (now() - this.lastClaimingPass < STAGE_ONE.PASS_GATE_MS) return { type: "skipped", reason: "gate" }
    this.prepare()
    const jobs = this.deps.jobs()
    if (!jobs) return { type: "skipped", reason: "no_store" }
    const held = this.deps.hold?.() !== undefined
    const limited = this.deps.breaker.check(breakerScope(this.deps.extractionModel(), "extraction")) !== undefined

    let sessions: HostSession[]
    let listedAt: number
    try {
      // Listed even while learning is held: the listing is what reconciliation forgets deleted
      // sessions by, and forgetting needs no model.
      ;({ listing: { sessions }, at: listedAt } = await this.discovery())
    } catch (error) {
      diagnostics.report("warn", "phase1", `session discovery failed; skipping this pass: ${errorMessage(error)}`)
      return { type: "discovery_failed", error: errorMessage(error) }
    }
    if (held) return { type: "skipped", reason: "held" }
    if (limited) return { type: "skipped", reason: "rate_limited" }

    const learnFrom = this.deps.learningWindow?.()
    // Judged at the listing's time, not after its await: a session listed before it was idle long
    // enough is not due by the later clock, and a session created meanwhile is not in the list.
    const eligible = eligibleSessions(sessions, {
      now: listedAt,
      currentSessionId,
      maxAgeDays: options.max_rollout_age_days,
      minIdleHours: options.min_rollout_idle_hours,
      excluded: this.deps.excludedSessions(),
      ...(learnFrom ? { learnFrom } : {}),
    }).filter((session) => !jobs.isUpToDate(session.id, session.updatedAt))
    const claims = jobs.claimMany(
      eligible.map((session) => ({ sessionId: session.id, updatedAt: session.updatedAt })),
      {
        workerId: this.deps.workerId,
        maxClaims: options.max_rollouts_per_startup,
        maxRunning: options.max_rollouts_per_startup,
        // The claims already made are run: leaving them would strand them under their leases.
        onError: (error) => diagnostics.report("warn", "phase1", `stopped claiming sessions: ${errorMessage(error)}`),
      },
    )
    if (claims.length === 0) return { type: "done", eligible: eligible.length, claimed: 0, results: [] }
    this.lastClaimingPass = now()
    diagnostics.report("info", "phase1", `claimed ${claims.length} of ${eligible.length} eligible session(s) for extraction`)

    const byId = new Map(eligible.map((session) => [session.id, session]))
    const results = await Promise.all(
      claims.map((claim) =>
        runExtraction({ ...this.deps, jobs, signal: this.shutdown.signal, unsettled: this.unsettled, noteBudget: (budget) => this.noteBudget(budget), ...(learnFrom ? { learnFrom } : {}) }, claim, byId.get(claim.sessionId)!),
      ),
    )
    return { type: "done", eligible: eligible.length, claimed: claims.length, results }
  }

  /** Claims due captures (up to max_rollouts_per_startup per run) and captures them one by one. */
  private async runCaptures(): Promise<CaptureReport[]> {
    const { options, diagnostics } = this.deps
    if (options.generate_memories && !this.shutdown.signal.aborted) this.prepare()
    const jobs = this.deps.jobs()
    const captures = this.deps.captures?.()
    if (!jobs || !captures || !options.generate_memories || this.shutdown.signal.aborted) return []
    if (this.deps.breaker.check(breakerScope(this.deps.extractionModel(), "extraction"))) return []
    // A held capture stays queued: it runs on the first pass after the hold ends.
    if (this.deps.hold?.()) return []
    const due = captures.due(options.max_rollouts_per_startup)
    if (!due.length) return []
    let { sessions } = await this.discover()
    // A session compacted soon after it was created is not in a listing cached before it existed:
    // such a listing cannot say it is gone.
    if (due.some((id) => !sessions.some((session) => session.id === id))) sessions = (await this.discover({ fresh: true })).sessions
    const excluded = this.deps.excludedSessions()
    const learnFrom = this.deps.learningWindow?.()
    const reports: CaptureReport[] = []
    for (const sessionId of due) {
      if (this.shutdown.signal.aborted) break
      const claim = captures.claim(sessionId, this.deps.workerId)
      if (!claim) continue
      const session = sessions.find((s) => s.id === sessionId && !s.parentId && !isHelperSession(s))
      // A session whose memory mode is off is not learned from; its queue entry is settled.
      const report = await captureSegments({ ...this.deps, jobs, captures, signal: this.shutdown.signal, unsettled: this.unsettled, ...(learnFrom ? { learnFrom } : {}) }, claim, excluded.has(sessionId) ? undefined : session)
      const stored = report.results.filter((result) => result.outcome === "stored").length
      diagnostics.report(report.outcome === "retry_later" ? "warn" : "info", "phase1", `segments of ${sessionId}: ${report.outcome}, ${report.results.length} extracted, ${stored} stored`)
      reports.push(report)
    }
    return reports
  }

  /** The window and transcript budget of the last extraction, for memory_inspect; undefined before one. */
  lastBudget(): (ExtractionBudget & { at: number }) | undefined {
    return this.budget
  }

  private noteBudget(budget: ExtractionBudget): void {
    this.budget = { ...budget, at: this.deps.now() }
  }

  /**
   * A session was deleted: the cached listing no longer offers it, so a pass within the cache's
   * life does not claim a session that is gone.
   */
  sessionDeleted(sessionId: string): void {
    const cached = this.discovered
    if (!cached || !cached.listing.sessions.some((session) => session.id === sessionId)) return
    this.discovered = { at: cached.at, listing: { ...cached.listing, sessions: cached.listing.sessions.filter((session) => session.id !== sessionId) } }
  }

  private async discover(options: { fresh?: boolean } = {}): Promise<SessionListing> {
    return (await this.discovery(options)).listing
  }

  /** The sessions, and the clock when they were asked for. */
  private async discovery(options: { fresh?: boolean } = {}): Promise<{ at: number; listing: SessionListing }> {
    const now = this.deps.now()
    if (!options.fresh && this.discovered && now - this.discovered.at < STAGE_ONE.DISCOVERY_CACHE_MS) return this.discovered
    const signal = AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(STAGE_ONE.DISCOVERY_TIMEOUT_MS)])
    const listing = await this.deps.host.listRootSessions({ signal })
    this.discovered = { at: now, listing }
    // Reconciliation rides on the listing phase 1 makes anyway; it runs in the background.
    this.deps.onDiscovered?.(listing, this.shutdown.signal)
    return this.discovered
  }
}

export interface EligibilityRules {
  now: number
  currentSessionId: string | undefined
  maxAgeDays: number
  minIdleHours: number
  excluded: ReadonlySet<string>
  /** Before when nothing of a session is learned (a reset, a forget): a session idle since then has nothing new. */
  learnFrom?: (sessionId: string) => number | undefined
}

/**
 * Codex's rules: not the current session, recent enough, idle long enough, mode enabled; newest
 * first. Not Codex's: not archived, and active since the last reset or forget of it.
 */
export function eligibleSessions(sessions: readonly HostSession[], rules: EligibilityRules): HostSession[] {
  const oldest = rules.now - rules.maxAgeDays * 86_400_000
  const newest = rules.now - rules.minIdleHours * 3_600_000
  return sessions
    .filter(
      (s) =>
        s.id !== rules.currentSessionId &&
        !s.parentId &&
        !s.archived &&
        s.updatedAt >= oldest &&
        s.updatedAt <= newest &&
        !rules.excluded.has(s.id) &&
        !isHelperSession(s) &&
        s.updatedAt > (rules.learnFrom?.(s.id) ?? Number.NEGATIVE_INFINITY),
    )
    .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))
}
