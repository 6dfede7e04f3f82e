// Phase 2: one global consolidation at a time, across every OpenCode process. A run is linear:
//   1. claim the global job (skips: running elsewhere, 6 h after a clean success, retry backoff)
//   2. prepare the workspace (folder, seeded extension, usable git baseline)
//   3. select inputs (enabled, non-blank, used or updated within max_unused_days, top N)
//   4. nothing selected and nothing consolidated before: release, start no cooldown
//   5. sync inputs into the folder (raw_memories.md, rollout_summaries/) and prune old resources
//   6. diff against the baseline; no change and valid artifacts: success, no model call
//   7. write phase2_workspace_diff.md and run the memorize agent in the folder (lease heartbeat)
//   8. delete the helper session; if that cannot be confirmed, keep the lease and stop
//   9. validate MEMORY.md and the summary's `v1`; invalid: fail, keep the baseline (and the diff)
//  10. reset the baseline to one commit, mark the consumed inputs, invalidate the read path
import { STAGE_TWO } from "../constants.js"
import { SingleFlight } from "../util/single-flight.js"
import { redactText } from "../redact/redact.js"
import { errorMessage, type Diagnostics } from "../diagnostics.js"
import type { Host, ModelRef } from "../host.js"
import type { MemoryOptions } from "../options.js"
import type { Phase2Jobs } from "../store/phase2-jobs.js"
import { breakerScope, isRateLimit, type RateLimitBreaker } from "./breaker.js"
import { CONSOLIDATION_REQUEST, renderConsolidationPrompt, type ConsolidationTemplates } from "./consolidate-prompt.js"
import { helperMetadata, helperTitle } from "./helper-sessions.js"
import { helperSessionRules, memoryRootForms } from "./helper-sandbox.js"
import { prepareWorkspace, syncInputs, validateArtifacts } from "./workspace.js"
import { renderWorkspaceDiff, writeWorkspaceDiff } from "./workspace-diff.js"
import { chooseVariant } from "./variants.js"

export const CONSOLIDATE_AGENT = "memorize"

export interface Phase2Deps {
  host: Host
  options: MemoryOptions
  now: () => number
  diagnostics: Diagnostics
  templates: ConsolidationTemplates
  templatesDir: string
  memoryRoot: string
  jobs: () => Phase2Jobs | undefined
  helperSessions: Set<string>
  /** consolidation_model, else OpenCode's model; undefined leaves the choice to OpenCode. */
  consolidationModel: () => ModelRef | undefined
  /** Called after the summary may have changed. */
  onConsolidated: () => void
  /** Shared with phase 1: a rate-limited model is left alone for an hour. */
  breaker: RateLimitBreaker
  workerId: string
}

export type Phase2Outcome =
  | { type: "skipped"; reason: string }
  | { type: "nothing_to_do" }
  | { type: "succeeded_no_changes" }
  | { type: "succeeded"; changes: number }
  | { type: "failed"; reason: string }
  | { type: "released" }

export class Phase2 {
  private readonly shutdown = new AbortController()
  private readonly flight = new SingleFlight<Phase2Outcome>()

  constructor(private readonly deps: Phase2Deps) {}

  /** Starts a run in the background unless one is already running in this instance. */
  trigger(): void {
    void this.run().catch((error) => this.deps.diagnostics.error("phase2", error))
  }

  run(): Promise<Phase2Outcome> {
    return this.flight.run(() => this.consolidate()) ?? Promise.resolve({ type: "skipped", reason: "in_flight" })
  }

  /** Aborts a running consolidator; its claim is given back (or its lease kept, see step 8). */
  async dispose(): Promise<void> {
    this.shutdown.abort(new Error("the plugin is shutting down"))
    await this.flight.settled()
  }

  private async consolidate(): Promise<Phase2Outcome> {
    const { options, diagnostics, memoryRoot, now } = this.deps
    if (!options.generate_memories || this.shutdown.signal.aborted) return { type: "skipped", reason: "disabled" }
    const jobs = this.deps.jobs()
    if (!jobs) return { type: "skipped", reason: "no_store" }
    const model = this.deps.consolidationModel()
    const scope = breakerScope(model, "consolidation")
    if (this.deps.breaker.check(scope)) return { type: "skipped", reason: "rate_limited" }

    // 1. claim
    const claim = jobs.claim(this.deps.workerId)
    if (claim.type !== "claimed") return { type: "skipped", reason: claim.type }
    const { token } = claim
    const fail = (reason: string, rateLimited = false): Phase2Outcome => {
      // A quota or rate limit is not the job's fault: it spends no retry and pauses the model.
      if (rateLimited) this.deps.breaker.trip(scope, reason)
      jobs.fail(token, redactText(reason), { spendRetry: !rateLimited })
      diagnostics.report("warn", "phase2", `consolidation failed: ${reason}`)
      return { type: "failed", reason }
    }

    try {
      // 2-5. workspace and inputs. The git library is loaded here, not with the plugin.
      const { resetBaseline, workspaceDiff, workspaceStatus } = await import("./git-baseline.js")
      await prepareWorkspace(memoryRoot, { templatesDir: this.deps.templatesDir, now })
      const inputs = jobs.selectInputs(options.max_raw_memories_for_consolidation, options.max_unused_days)
      if (inputs.length === 0 && !jobs.hasConsolidatedBefore()) {
        jobs.releaseIdle(token)
        return { type: "nothing_to_do" }
      }
      await syncInputs(memoryRoot, inputs, { now })
      const consumed = inputs.map((input) => ({ sessionId: input.sessionId, sourceUpdatedAt: input.sourceUpdatedAt }))

      // 6. diff
      const changes = await workspaceStatus(memoryRoot)
      const artifacts = validateArtifacts(memoryRoot)
      if (changes.length === 0 && artifacts.valid) {
        jobs.succeed(token, claim.watermark, consumed)
        return { type: "succeeded_no_changes" }
      }
      await writeWorkspaceDiff(memoryRoot, renderWorkspaceDiff(changes, await workspaceDiff(memoryRoot, changes)))

      // 7-8. the consolidator
      const agent = await this.runAgent(jobs, token, !artifacts.valid, model)
      if (agent.type === "lease_kept") return { type: "failed", reason: agent.reason }
      if (agent.type === "aborted") {
        jobs.release(token)
        return { type: "released" }
      }
      if (agent.type === "failed") return fail(agent.reason, agent.rateLimited)

      // 9-10. validate and commit
      const valid = validateArtifacts(memoryRoot)
      if (!valid.valid) return fail(`invalid artifacts: ${valid.reason}`)
      if (!jobs.heartbeat(token)) return { type: "failed", reason: "lost the consolidation lease before committing" }
      await resetBaseline(memoryRoot, now)
      jobs.succeed(token, claim.watermark, consumed)
      this.deps.onConsolidated()
      diagnostics.report("info", "phase2", `consolidated ${inputs.length} input(s), ${changes.length} change(s)`)
      return { type: "succeeded", changes: changes.length }
    } catch (error) {
      if (this.shutdown.signal.aborted) {
        jobs.release(token)
        return { type: "released" }
      }
      return fail(errorMessage(error))
    }
  }

  private async runAgent(
    jobs: Phase2Jobs,
    token: string,
    firstRun: boolean,
    model: ModelRef | undefined,
  ): Promise<{ type: "ok" } | { type: "failed"; reason: string; rateLimited?: boolean } | { type: "aborted" } | { type: "lease_kept"; reason: string }> {
    const { host, memoryRoot, now } = this.deps
    const lost = new AbortController()
    const signal = AbortSignal.any([this.shutdown.signal, lost.signal, AbortSignal.timeout(STAGE_TWO.AGENT_TIMEOUT_MS)])
    // A lost lease means another process may start its own consolidator: stop ours at once.
    const heartbeat = setInterval(() => {
      if (!jobs.heartbeat(token)) lost.abort(new Error("lost the consolidation lease"))
    }, STAGE_TWO.HEARTBEAT_MS)
    heartbeat.unref?.()
    let helperId: string | undefined
    let result: { type: "ok" } | { type: "failed"; reason: string; rateLimited?: boolean } | { type: "aborted" }
    try {
      const helper = await host.createSession(
        {
          directory: memoryRoot,
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
            system: renderConsolidationPrompt(this.deps.templates, { memoryRoot, firstRun }),
            text: CONSOLIDATION_REQUEST,
          },
          signal,
        )
        .finally(() => signal.removeEventListener("abort", onAbort))
      if (this.shutdown.signal.aborted) result = { type: "aborted" }
      else if (lost.signal.aborted) result = { type: "failed", reason: "lost the consolidation lease" }
      else if (reply.error) {
        const reason = `consolidation agent failed: ${reply.error.name}: ${reply.error.message}`.slice(0, 2_000)
        result = { type: "failed", reason, rateLimited: isRateLimit(reply.error) }
      }
      else result = { type: "ok" }
    } catch (error) {
      result = this.shutdown.signal.aborted ? { type: "aborted" } : { type: "failed", reason: errorMessage(error) }
    } finally {
      clearInterval(heartbeat)
    }
    if (!helperId) return result
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
