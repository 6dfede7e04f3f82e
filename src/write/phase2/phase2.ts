// Phase 2: one global consolidation at a time, across every OpenCode process. A run is linear:
//   1. claim the global job (skips: running elsewhere, retry backoff, 6 h after a clean success,
//      6 h after a check that found nothing unless something was queued since); as in Codex,
//      nothing needs to be queued: whether there is work is decided by steps 3-5
//   2. select inputs (enabled, non-blank, used or updated within max_unused_days, top N, within a
//      token budget from the consolidation model's window: consolidationInputBudget)
//   3. nothing selected, no note, nothing consolidated before: finish, folder untouched
//   4. prepare the workspace (folder, seeded extension, usable git baseline), sync the version's
//      inputs into it (V1: raw_memories.md and rollout_summaries/; V2: rollout_summaries/ only)
//      and prune old resources
//   5. diff against the baseline; no change and valid artifacts: finish with no model call and
//      no cooldown, so the next real change is not held back by this check
//   6. write phase2_workspace_diff.md and run the memorize agent in the folder (lease heartbeat)
//   7. delete the helper session; if that cannot be confirmed, keep the lease and stop; if the
//      model found the request too large for its window, put the folder back and go to 4 at once
//      with two thirds of the input budget, at most three times, spending no retry
//   7b. MEMORY.md or a skill over the size budget (budget.ts): run the agent once more at once on
//      its own attempt, told which files to shorten; still over: put the folder back and fail
//   8. validate the version's artifacts (V1: MEMORY.md and the summary's `v1`; V2: the summary's
//      own rules); invalid, or the agent failed: put back what the version protects (V2: its last
//      valid summary), fail, keep the baseline (and the diff)
//   9. reset the baseline to one commit and mark the job done with the consumed inputs; only if
//      that mark still owned the job: report success and invalidate the read path
// It is started after a phase-1 pass, a deletion, a pollution, a note and a mode change.
import { OVERFLOW, STAGE_TWO } from "../../constants.js"
import { SingleFlight } from "../../util/single-flight.js"
import { redactText } from "../../redact/redact.js"
import { errorMessage, type Diagnostics } from "../../diagnostics.js"
import type { Host, ModelRef } from "../../host.js"
import type { MemoryOptions } from "../../options.js"
import type { SpendPhase, Usage } from "../../store/ledger.js"
import type { Phase2Jobs, Phase2Snapshot } from "../../store/phase2-jobs.js"
import type { ReviewSummary } from "../../store/reviews.js"
import { breakerScope, isRateLimit, type RateLimitBreaker } from "../helpers/breaker.js"
import { isContextOverflow, shrinkBudget } from "../helpers/overflow.js"
import { CONSOLIDATION_REQUEST } from "./consolidate-prompt.js"
import { keptReview, summarizeConsolidation } from "./consolidation-review.js"
import { recordHelperUsage } from "../helpers/helper-usage.js"
import type { ConsolidationStrategy } from "./consolidation-strategy.js"
import { helperMetadata, helperTitle } from "../helpers/helper-sessions.js"
import { helperSessionRules, memoryRootForms } from "../helpers/helper-sandbox.js"
import { hasExtensionInputs, prepareWorkspace } from "./workspace.js"
import { renderWorkspaceDiff, writeWorkspaceDiff } from "./workspace-diff.js"
import { chooseVariant } from "../helpers/variants.js"
import { unknownModel } from "../helpers/model-check.js"
import { dropSnapshot, restoreSnapshot, sweepSnapshotLeftovers, takeSnapshot } from "./run-snapshot.js"
import { processExists } from "../../store/lease-owner.js"
import { sweepTemporaries } from "../../util/regular-file.js"
import { removeSymlinks } from "./symlinks.js"
import { duplicateInstructions, readHandbookDuplicates } from "./duplicates.js"
import { budgetFailure, budgetInstructions, describeOverBudget, measureBudget, sizeBudget, type OverBudget } from "./budget.js"
import type { WorkspaceExtension } from "./workspace-extension.js"
import { UnsettledOutcomes } from "../unsettled.js"

export const CONSOLIDATE_AGENT = "memorize"

export interface Phase2Deps {
  host: Host
  options: MemoryOptions
  now: () => number
  diagnostics: Diagnostics
  /** The version's prompt, workspace layout and validation. */
  strategy: ConsolidationStrategy
  templatesDir: string
  /** The version's memory root. */
  memoryRoot: string
  jobs: () => Phase2Jobs | undefined
  /** Sessions whose mode is not enabled (the catalog's): their outputs are not inputs. */
  excludedSessions: () => ReadonlySet<string>
  helperSessions: Set<string>
  /** consolidation_model, else OpenCode's model; undefined leaves the choice to OpenCode. */
  consolidationModel: () => ModelRef | undefined
  /** Called after a successful consolidation (the summary may have changed) with the sessions it consumed. */
  onConsolidated: (sessions: number) => void
  /** Shared with phase 1: a rate-limited model is left alone for an hour. */
  breaker: RateLimitBreaker
  workerId: string
  /** The spend ledger: what the consolidator's helper session cost. */
  recordUsage?: (phase: SpendPhase, usage: Usage) => void
  /** Why background learning is held (paused, or the daily budget spent), if it is. */
  hold?: () => string | undefined
  /** Keeps a successful consolidation's review: what moved it and its redacted diff. */
  recordReview?: (summary: ReviewSummary, diff: string) => void
  /** Imports synced into the workspace before the diff, and exports after a success (src/interop). */
  extensions?: () => readonly WorkspaceExtension[]
  /**
   * Runs after the claim and before the inputs are chosen: reconciliation with the host (a session
   * deleted anywhere is forgotten by this very run). Its failure only skips it.
   */
  beforeSelect?: (signal: AbortSignal) => Promise<void>
  /**
   * Resolves once this instance's extractions in flight are stored. A run waits for it before it
   * looks: one that chose its inputs while a record of the same pass was on its way would start the
   * cooldown without it, and that record would wait up to six hours for the next run.
   */
  extractionsSettled?: () => Promise<void>
}

export type Phase2Outcome =
  | { type: "skipped"; reason: string }
  | { type: "nothing_to_do" }
  | { type: "succeeded_no_changes" }
  | { type: "succeeded"; changes: number }
  | { type: "failed"; reason: string }
  | { type: "released" }
  /** Another process took the job over before this run could record its result. */
  | { type: "lost_ownership"; reason: string }

export class Phase2 {
  private readonly shutdown = new AbortController()
  private readonly flight = new SingleFlight<Phase2Outcome>()
  /** How a run ended, when recording it failed (a full disk); settled before the next claim. */
  private readonly unsettled = new UnsettledOutcomes()

  constructor(private readonly deps: Phase2Deps) {}

  /**
   * Starts a run in the background; when one is already running in this instance, one more run
   * follows it (that run may have looked before the record that asked for this one was stored).
   */
  trigger(): void {
    void this.flight.request(() => this.guardedConsolidate())
  }

  /** Resolves once the run in flight, if any, is over. */
  settled(): Promise<void> {
    return this.flight.settled()
  }

  /**
   * The workspace's inputs changed outside phase 1 (a note was added): queue a look, so that a
   * recent check that found nothing does not hold it back, then run if the cooldown allows.
   * Never throws: the caller is a tool the user is waiting on.
   */
  wake(): void {
    if (!this.deps.options.generate_memories || this.shutdown.signal.aborted) return
    try {
      this.deps.jobs()?.enqueue(this.deps.now())
    } catch (error) {
      this.deps.diagnostics.error("phase2", error)
    }
    this.trigger()
  }

  run(): Promise<Phase2Outcome> {
    return this.flight.run(() => this.guardedConsolidate()) ?? Promise.resolve({ type: "skipped", reason: "in_flight" })
  }

  /** A run that never throws: a failure before the claim (a full disk) is logged with its cause. */
  private guardedConsolidate(): Promise<Phase2Outcome> {
    return this.consolidate().catch((error): Phase2Outcome => {
      this.deps.diagnostics.error("phase2", error)
      return { type: "failed", reason: errorMessage(error) }
    })
  }

  /** Outcomes kept since a write failed, as memory_inspect shows them. */
  unsettledCount(): number {
    return this.unsettled.size
  }

  /** Aborts a running consolidator; its claim is given back (or its lease kept, see step 7). */
  async dispose(): Promise<void> {
    this.shutdown.abort(new Error("the plugin is shutting down"))
    await this.flight.settled()
  }

  private async consolidate(): Promise<Phase2Outcome> {
    const { options, diagnostics, memoryRoot, now } = this.deps
    if (!options.generate_memories || this.shutdown.signal.aborted) return { type: "skipped", reason: "disabled" }
    const jobs = this.deps.jobs()
    if (!jobs) return { type: "skipped", reason: "no_store" }
    if (this.unsettled.size) this.unsettled.settle((message) => diagnostics.report("warn", "phase2", message))
    const model = this.deps.consolidationModel()
    const scope = breakerScope(model, "consolidation")
    if (this.deps.breaker.check(scope)) return { type: "skipped", reason: "rate_limited" }
    if (this.deps.hold?.()) return { type: "skipped", reason: "held" }
    await this.deps.extractionsSettled?.()
    if (this.shutdown.signal.aborted) return { type: "skipped", reason: "disposed" }

    // 0. reconciliation, when a claim is coming: a session deleted anywhere is forgotten by this
    // very run. Done before the claim, so the lease is not held while OpenCode is asked.
    const blocked = jobs.wouldSkip()
    if (blocked) return { type: "skipped", reason: blocked.type }
    await this.reconcile()
    if (this.shutdown.signal.aborted) return { type: "skipped", reason: "disposed" }

    // 1. claim
    const claim = jobs.claim(this.deps.workerId)
    if (claim.type !== "claimed") return { type: "skipped", reason: claim.type }
    const { token } = claim
    // Records how the run ended. When that write fails too (a full disk), the job is not left to
    // wait out its lease: this process keeps the outcome and settles it before its next claim.
    const record = (write: () => unknown, what: string): void => {
      try {
        write()
      } catch (error) {
        diagnostics.report("warn", "phase2", `could not record ${what}: ${errorMessage(error)}; this process settles it before its next consolidation`)
        this.unsettled.add("the consolidation", write, () => jobs.release(token))
      }
    }
    const fail = (reason: string, rateLimited = false): Phase2Outcome => {
      // A quota or rate limit is not the job's fault: it spends no retry and pauses the model.
      if (rateLimited) this.deps.breaker.trip(scope, reason)
      diagnostics.report("warn", "phase2", `consolidation failed: ${reason}`)
      record(() => jobs.fail(token, redactText(reason), { spendRetry: !rateLimited }), "the consolidation's failure")
      return { type: "failed", reason }
    }
    const release = (): Phase2Outcome => {
      record(() => jobs.release(token), "that the consolidation was given back")
      return { type: "released" }
    }
    // The folder as it was before the consolidator ran, while it runs (run-snapshot.ts).
    let snapshot = false
    const putBack = () => {
      if (!snapshot) return
      snapshot = false
      try {
        restoreSnapshot(memoryRoot)
      } catch (error) {
        diagnostics.report("error", "phase2", `could not put the memory folder back as it was before the consolidation; the next one tries again: ${errorMessage(error)}`)
      }
    }

    try {
      // What killed processes left (a temporary never renamed, a copy half built or half removed)
      // is no one's any more: whoever consolidates next removes it. File times are real time.
      const leftovers = [...sweepSnapshotLeftovers(memoryRoot, processExists, Date.now()), ...sweepTemporaries(memoryRoot, processExists, Date.now())]
      if (leftovers.length) diagnostics.report("info", "phase2", `removed ${leftovers.length} leftover(s) of writes whose process died: ${leftovers.slice(0, 10).join(", ")}`)
      // A copy left by a run that stopped midway (a crash, a window closed) goes back first.
      // (Files are replaced by rename: the read path and the tools see the change by file identity.)
      const partial = () => diagnostics.report("warn", "phase2", "dropped a copy of the memory folder that was cut short (no completeness marker); the folder is left as it is")
      if (restoreSnapshot(memoryRoot, partial)) diagnostics.report("warn", "phase2", "put the memory folder back as it was before a consolidation that stopped midway")
      // 2-3. inputs, within a token budget the consolidation model's window sets; an empty first run
      // leaves the folder alone and starts no cooldown. Every session queued for forgetting up to now
      // has no record left to choose (settled when the run finishes).
      const window = await this.deps.host.contextLimit(model, AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(CONTEXT_LIMIT_TIMEOUT_MS)])).catch(() => undefined)
      let budget = consolidationInputBudget(window)
      const select = (tokens: number) => jobs.selectInputs(options.max_raw_memories_for_consolidation, options.max_unused_days, this.deps.excludedSessions(), tokens)
      let selectedAt = now()
      let inputs = select(budget)
      const extensions = this.deps.extensions?.() ?? []
      if (inputs.length === 0 && !jobs.hasConsolidatedBefore() && !hasExtensionInputs(memoryRoot) && !extensions.some((extension) => hasSource(extension))) {
        return jobs.finishUnchanged(token, claim.watermark, [], selectedAt) ? { type: "nothing_to_do" } : this.lostOwnership("recording that there was nothing to do")
      }

      // 4. workspace and inputs. The git library is loaded here, not with the plugin.
      const { resetBaseline, workspaceDiff, workspaceStatus } = await import("./git-baseline.js")
      const { removedSymlinks } = await prepareWorkspace(memoryRoot, { templatesDir: this.deps.templatesDir, now })
      if (removedSymlinks.length) diagnostics.report("warn", "phase2", `deleted ${removedSymlinks.length} symlink(s) from the memory folder, which is never followed: ${removedSymlinks.slice(0, 10).join(", ")}`)

      // Steps 4-7 run again, at once and with fewer inputs, when the consolidator's model finds them
      // too large for its window: the folder is put back as it was before the consolidator (inputs
      // synced, imports landed), the smaller selection synced over it and diffed again, and a fresh
      // copy taken. No retry is spent on it; after MAX_SHRINKS the run fails as any other.
      // The same loop runs the consolidator once more, at once, when its attempt left MEMORY.md or a
      // skill over the size budget (budget.ts): that attempt stays in the folder (the copy aside is
      // still the one taken before it), and the agent is told which files to bring within.
      const refused: number[] = []
      const limits = sizeBudget(options)
      let oversize: OverBudget[] | undefined
      let resized = false
      let firstRun = false
      let consumed: Phase2Snapshot[] = []
      let changes: Awaited<ReturnType<typeof workspaceStatus>> = []
      for (;;) {
        if (!oversize) {
          consumed = inputs.map((input) => ({ sessionId: input.sessionId, sourceUpdatedAt: input.sourceUpdatedAt }))
          await this.deps.strategy.syncInputs(memoryRoot, inputs, now)
          // Imports land before the diff, so what they changed is consolidated in this run (once: the
          // folder put back after an overflow still holds them).
          if (!refused.length) for (const extension of extensions) await this.runExtension(extension, "sync")

          // 5. diff: the inputs match the baseline, so there is nothing for a model to do.
          changes = await workspaceStatus(memoryRoot)
          const artifacts = this.deps.strategy.validate(memoryRoot)
          if (changes.length === 0 && artifacts.valid) {
            return jobs.finishUnchanged(token, claim.watermark, consumed, selectedAt) ? { type: "succeeded_no_changes" } : this.lostOwnership("recording an unchanged workspace")
          }
          firstRun = !artifacts.valid
          await writeWorkspaceDiff(memoryRoot, renderWorkspaceDiff(changes, await workspaceDiff(memoryRoot, changes)))

          // 6-7. the consolidator. The folder is copied aside first: a run that does not succeed
          // changes nothing a conversation sees.
          takeSnapshot(memoryRoot)
          snapshot = true
        }
        // The consolidator is also shown MEMORY.md's repeated entries to merge (duplicates.ts).
        // Files already over budget before the run are named to its first attempt as well.
        const before = resized ? [] : measureBudget(memoryRoot, limits)
        const sizeNote = oversize ? budgetInstructions(oversize) : before.length ? budgetInstructions(before, "before") : ""
        const extra = [duplicateInstructions(readHandbookDuplicates(memoryRoot)), sizeNote].filter(Boolean).join("\n\n")
        const agent = await this.runAgent(jobs, token, firstRun, model, extra || undefined)
        oversize = undefined
        // Its helper may still be writing: the copy stays, for whoever consolidates next to put back.
        if (agent.type === "lease_kept") return { type: "failed", reason: agent.reason }
        if (agent.type === "aborted") {
          putBack()
          return release()
        }
        if (agent.type !== "failed") {
          const over = measureBudget(memoryRoot, limits)
          if (!over.length) break
          if (resized) {
            removeSymlinks(memoryRoot)
            putBack()
            return fail(budgetFailure(over))
          }
          resized = true
          oversize = over
          diagnostics.report("info", "phase2", `the consolidation left files over the size budget (${over.map(describeOverBudget).join("; ")}); running the consolidator once more to shorten them`)
          // Another process has the job: it puts the folder back when it claims (see above).
          if (!jobs.heartbeat(token)) {
            snapshot = false
            return this.lostOwnership("consolidating again to shorten the memory")
          }
          continue
        }
        // Another process has the job: it puts the folder back when it claims; touching it now could undo its run.
        if (agent.lostLease) snapshot = false
        // A failed run leaves no symlink behind either (Codex #39205).
        removeSymlinks(memoryRoot)
        putBack()
        if (agent.overflow && refused.length < OVERFLOW.MAX_SHRINKS) {
          const next = shrinkBudget(budget)
          const fewer = select(next)
          // A budget no input fits would consolidate nothing: the overflow is not the inputs' to fix.
          if (fewer.length) {
            refused.push(budget)
            diagnostics.report("info", "phase2", `the consolidation's inputs were too large for the model (${budget} tokens budgeted, ${inputs.length} input(s)); retrying with ${next} (${fewer.length} input(s))`)
            this.noteOverflow(jobs, token, refused)
            if (!jobs.heartbeat(token)) return this.lostOwnership("consolidating again with fewer inputs")
            budget = next
            selectedAt = now()
            inputs = fewer
            continue
          }
        }
        if (agent.overflow) this.noteOverflow(jobs, token, [...refused, budget])
        const reason = agent.overflow ? `${AGENT_FAILED}the inputs were too large for the model at every budget tried (${[...refused, budget].join(", ")} tokens): ${agent.reason.slice(AGENT_FAILED.length)}` : agent.reason
        return fail(reason, agent.rateLimited)
      }

      // 8-9. validate and commit; success is reported only once the job is marked done.
      const valid = this.deps.strategy.validate(memoryRoot)
      if (!valid.valid) {
        putBack()
        return fail(`invalid artifacts: ${valid.reason}`)
      }
      // Valid artifacts stand, even if the commit below is interrupted: the copy is no longer needed.
      snapshot = false
      dropSnapshot(memoryRoot)
      if (!jobs.heartbeat(token)) return this.lostOwnership("committing the consolidation")
      // The review is read against the old baseline, so it is taken before the commit replaces it.
      const review = this.deps.recordReview ? await this.review(changes, new Set(consumed.map((input) => input.sessionId)).size) : undefined
      await resetBaseline(memoryRoot, now)
      if (!jobs.succeed(token, claim.watermark, consumed, selectedAt)) return this.lostOwnership("marking the consolidation done")
      this.deps.onConsolidated(new Set(consumed.map((input) => input.sessionId)).size)
      if (review) this.keepReview(review)
      diagnostics.report("info", "phase2", `consolidated ${inputs.length} input(s), ${changes.length} change(s)${refused.length ? `, within ${budget} input tokens after the model refused ${refused.join(", ")}` : ""}${resized ? ", within the size budget after a retry to shorten it" : ""}`)
      for (const extension of extensions) await this.runExtension(extension, "afterSuccess")
      return { type: "succeeded", changes: changes.length }
    } catch (error) {
      putBack()
      if (this.shutdown.signal.aborted) return release()
      return fail(errorMessage(error))
    }
  }

  /** Reconciliation before the selection; bounded by its own timeout, and its failure only logged. */
  private async reconcile(): Promise<void> {
    if (!this.deps.beforeSelect) return
    try {
      await this.deps.beforeSelect(AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(STAGE_TWO.RECONCILE_TIMEOUT_MS)]))
    } catch (error) {
      if (this.shutdown.signal.aborted) return
      this.deps.diagnostics.report("warn", "phase2", `could not compare memory with OpenCode's sessions; consolidating without it: ${errorMessage(error)}`)
    }
  }

  /**
   * The folder's change since the last baseline, before it is committed: a failure costs only the
   * review. Removed lines are counted, not kept (keptReview), so a review never holds forgotten text.
   */
  private async review(given: ReadonlyArray<{ status: string; path: string }>, sessions: number): Promise<{ summary: ReviewSummary; diff: string } | undefined> {
    try {
      const { workspaceDiff, workspaceStatus } = await import("./git-baseline.js")
      const final = await workspaceStatus(this.deps.memoryRoot)
      return keptReview(summarizeConsolidation(given, final, sessions), renderWorkspaceDiff(final, await workspaceDiff(this.deps.memoryRoot, final)))
    } catch (error) {
      this.deps.diagnostics.report("warn", "phase2", `could not prepare the consolidation's review: ${errorMessage(error)}`)
      return undefined
    }
  }

  private keepReview(review: { summary: ReviewSummary; diff: string }): void {
    try {
      this.deps.recordReview?.(review.summary, review.diff)
    } catch (error) {
      this.deps.diagnostics.report("warn", "phase2", `could not keep the consolidation's review: ${errorMessage(error)}`)
    }
  }

  /** One extension step; its failure is reported and leaves the consolidation as it was. */
  private async runExtension(extension: WorkspaceExtension, step: "sync" | "afterSuccess"): Promise<void> {
    const run = extension[step]
    if (!run) return
    try {
      const result = await run.call(extension, this.deps.memoryRoot)
      if (result.changed) this.deps.diagnostics.report("info", "interop", `${extension.name}: ${result.detail}`)
    } catch (error) {
      this.deps.diagnostics.report("warn", "interop", `${extension.name} failed: ${errorMessage(error)}; the consolidation goes on without it`)
    }
  }

  /** Records on the job the input budgets the model refused; a failed write costs only the note. */
  private noteOverflow(jobs: Phase2Jobs, token: string, budgets: readonly number[]): void {
    try {
      jobs.noteOverflow(token, budgets)
    } catch (error) {
      this.deps.diagnostics.report("warn", "phase2", `could not record on the consolidation job that its inputs were too large: ${errorMessage(error)}`)
    }
  }

  /** The job was taken over (its lease expired, or its owner looked gone): nothing is recorded here. */
  private lostOwnership(step: string): Phase2Outcome {
    const reason = `lost the consolidation job to another process before ${step}; that process's run counts`
    this.deps.diagnostics.report("warn", "phase2", reason)
    return { type: "lost_ownership", reason }
  }

  private async runAgent(
    jobs: Phase2Jobs,
    token: string,
    firstRun: boolean,
    model: ModelRef | undefined,
    /** Added to the instructions: why this attempt follows another (budgetInstructions). */
    extra?: string,
  ): Promise<AgentResult | { type: "lease_kept"; reason: string }> {
    const { host, memoryRoot, now } = this.deps
    const lost = new AbortController()
    const signal = AbortSignal.any([this.shutdown.signal, lost.signal, AbortSignal.timeout(STAGE_TWO.AGENT_TIMEOUT_MS)])
    // A lost lease means another process may start its own consolidator: stop ours at once.
    const heartbeat = setInterval(() => {
      try {
        if (!jobs.heartbeat(token)) lost.abort(new Error("lost the consolidation lease"))
      } catch (error) {
        // A failed write (a full disk) is not a lost lease: the lease runs until it expires, and
        // a throw here would escape the timer into OpenCode's process.
        this.deps.diagnostics.report("warn", "phase2", `could not extend the consolidation lease: ${errorMessage(error)}`)
      }
    }, STAGE_TWO.HEARTBEAT_MS)
    heartbeat.unref?.()
    let helperId: string | undefined
    let result: AgentResult
    // A model OpenCode does not offer would fail there as a bare UnknownError: said here with its
    // cause, before any helper session, and it rests the model like a rate limit.
    const unknown = await unknownModel(host, model, "consolidation_model (or OpenCode's model)", signal)
    if (unknown) {
      clearInterval(heartbeat)
      return { type: "failed", reason: `consolidation agent failed: ${unknown}`, rateLimited: true }
    }
    try {
      const helper = await host.createSession(
        {
          directory: memoryRoot,
          role: "consolidate",
          title: helperTitle("consolidate"),
          metadata: helperMetadata("consolidate", undefined, now()),
          permission: helperSessionRules("consolidate", memoryRootForms(memoryRoot)),
        },
        signal,
      )
      helperId = helper.id
      this.deps.helperSessions.add(helper.id)
      const onAbort = () => void host.abortSession(helper.id, memoryRoot).catch(() => undefined)
      signal.addEventListener("abort", onAbort, { once: true })
      const variant = model ? chooseVariant(await host.modelVariants(model, signal).catch(() => []), "medium") : undefined
      const reply = await host
        .prompt(
          helper.id,
          {
            directory: memoryRoot,
            agent: CONSOLIDATE_AGENT,
            ...(model ? { model } : {}),
            ...(variant ? { variant } : {}),
            system: withInstructions(this.deps.strategy.renderPrompt({ memoryRoot, firstRun }), extra),
            text: CONSOLIDATION_REQUEST,
          },
          signal,
        )
        .finally(() => signal.removeEventListener("abort", onAbort))
      if (this.shutdown.signal.aborted) result = { type: "aborted" }
      else if (lost.signal.aborted) result = { type: "failed", reason: "lost the consolidation lease", lostLease: true }
      else if (reply.error) {
        const reason = `${AGENT_FAILED}${reply.error.name}: ${reply.error.message}`.slice(0, 2_000)
        const rateLimited = isRateLimit(reply.error)
        result = { type: "failed", reason, rateLimited, overflow: !rateLimited && isContextOverflow(reply.error) }
      }
      else result = { type: "ok" }
    } catch (error) {
      result = this.shutdown.signal.aborted ? { type: "aborted" } : { type: "failed", reason: errorMessage(error) }
    } finally {
      clearInterval(heartbeat)
    }
    if (!helperId) return result
    await recordHelperUsage(this.deps, "consolidation", helperId, { overflowed: result.type === "failed" && result.overflow === true })
    const deleted = await host.deleteSession(helperId, memoryRoot).catch(() => false)
    this.deps.helperSessions.delete(helperId)
    if (deleted) return result
    // It may still be writing: keep the lease so no second consolidator starts beside it.
    const reason = `the consolidation helper session ${helperId} could not be confirmed deleted; keeping the lease until it expires`
    jobs.failKeepingLease(token, redactText(reason))
    this.deps.diagnostics.report("warn", "phase2", reason)
    return { type: "lease_kept", reason }
  }
}

/** How the consolidator's run ended; `overflow`: its model found the request too large for its window. */
type AgentResult = { type: "ok" } | { type: "failed"; reason: string; rateLimited?: boolean; lostLease?: boolean; overflow?: boolean } | { type: "aborted" }

/** The consolidator's instructions with a fragment added at their end. */
export function withInstructions(system: string, extra: string | undefined): string {
  return extra ? `${system}\n\n${extra.trimEnd()}` : system
}

/** How a failure of the consolidator's model begins. */
const AGENT_FAILED = "consolidation agent failed: "

/** Asking OpenCode for the consolidation model's window, at most; without an answer the default budget holds. */
const CONTEXT_LIMIT_TIMEOUT_MS = 10_000

/**
 * The token budget of one consolidation's inputs (Phase2Jobs.selectInputs). With the model's window
 * known: 60% of it, less 20,000 tokens for the consolidator's prompt and agent prompt (some 2,000),
 * OpenCode's tool definitions and the agent's own work (the memory files it reads, the workspace
 * diff that repeats what changed in the inputs, each edit it writes, all kept in its context step
 * after step), and never under a quarter of the window. Unknown: STAGE_TWO.DEFAULT_INPUT_TOKENS,
 * what the earlier 1,000,000-byte budget meant. A budget that still overflows shrinks by a third.
 */
export function consolidationInputBudget(contextLimit: number | undefined): number {
  if (!contextLimit || contextLimit <= 0) return STAGE_TWO.DEFAULT_INPUT_TOKENS
  const share = Math.floor((contextLimit * STAGE_TWO.INPUT_WINDOW_PERCENT) / 100) - STAGE_TWO.AGENT_RESERVE_TOKENS
  return Math.max(share, Math.floor((contextLimit * STAGE_TWO.MIN_INPUT_WINDOW_PERCENT) / 100))
}

function hasSource(extension: WorkspaceExtension): boolean {
  try {
    return extension.hasSource()
  } catch {
    return false
  }
}
