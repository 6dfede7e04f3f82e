// One claimed session, start to finish: load its messages, render and budget the transcript,
// ask a tool-less helper agent for the record, store the outcome, delete the helper session.
// Every exit updates the job through its ownership token; an abort gives the job back.
// The session and its messages are sanitized once, as they arrive (session-input.ts): past that
// point only the cleaned title, folder and transcript hooks are used, so neither `<private>` text
// nor a secret from the host reaches the helper, the record or the memory folder. What was kept
// out is recorded for the audit, and failure messages (from the model or the host) are redacted
// before they are stored.
// A request the model refuses as too large for its window is built again at once with two thirds
// of the transcript budget, at most three times, spending no retry (write/helpers/overflow.ts);
// each shrink is logged, noted on the job (jobs.overflow_budgets) and counted in the ledger.
import { OVERFLOW, STAGE_ONE } from "../../constants.js"
import { errorMessage, type Diagnostics } from "../../diagnostics.js"
import type { Host, HostSession, ModelRef } from "../../host.js"
import { addCounts, redactText } from "../../redact/redact.js"
import type { SpendPhase, Usage } from "../../store/ledger.js"
import type { RedactionStage } from "../../store/memory-store.js"
import type { Stage1ClaimOutcome, Stage1Jobs } from "../../store/stage1-jobs.js"
import { jsonFromReply } from "./generate-prompt.js"
import { ownToolCalls, type OwnFiles } from "../transcript/own-output.js"
import { sessionOfKey, splitSegments } from "./segments.js"
import { sanitizeSession } from "./session-input.js"
import type { ExtractionRequest, ExtractionStrategy } from "./extraction-strategy.js"
import { helperMetadata, helperTitle } from "../helpers/helper-sessions.js"
import { recordHelperUsage, recordRefusedCompletion } from "../helpers/helper-usage.js"
import { isContextOverflow, shrinkBudget } from "../helpers/overflow.js"
import { helperSessionRules } from "../helpers/helper-sandbox.js"
import type { JobResult } from "./phase1-results.js"
import { breakerScope, isRateLimit, type RateLimitBreaker } from "../helpers/breaker.js"
import { chooseVariant } from "../helpers/variants.js"
import { unknownModel } from "../helpers/model-check.js"
import { gitBranch } from "./git-branch.js"
import type { ProjectIdentity } from "./project-identity.js"
import type { UnsettledOutcomes } from "../unsettled.js"

type Claim = Extract<Stage1ClaimOutcome, { type: "claimed" }>

export interface ExtractionContext {
  host: Host
  jobs: Stage1Jobs
  now: () => number
  diagnostics: Diagnostics
  /** The version's prompt and answer rules. */
  strategy: ExtractionStrategy
  /** The version's memory root: the helper session's folder. */
  memoryRoot: string
  helperSessions: Set<string>
  extractionModel: () => ModelRef | undefined
  /** Aborted on dispose. */
  signal: AbortSignal
  /** Shared with phase 2: rate-limited models are left alone for an hour. */
  breaker: RateLimitBreaker
  /** The redaction audit (MemoryStore.recordRedactions): counts by class, never the secrets. */
  recordRedactions?: (sessionId: string, counts: Readonly<Record<string, number>>, stage: RedactionStage) => void
  /** The spend ledger: what each helper session cost, as the host reports it. */
  recordUsage?: (phase: SpendPhase, usage: Usage) => void
  /** Memory's own files: tool calls reading them are left out of transcripts (own-output.ts). */
  ownFiles?: OwnFiles
  /** Outcomes that could not be written, settled by this process at its next pass. */
  unsettled?: UnsettledOutcomes
  /**
   * The time before which nothing of the session is learned (the last reset, or the session's own
   * forget), if any: its older messages are left out.
   */
  learnFrom?: (sessionId: string) => number | undefined
  /** The project a session belongs to (project-identity.ts), computed here once per record. */
  projectOf?: (session: HostSession) => ProjectIdentity | undefined
  /** OpenCode no longer has the session: memory forgets it as deleted (its job row goes with it). */
  onSessionGone?: (sessionId: string) => void
  /** The window and transcript budget this extraction used, for memory_inspect. */
  noteBudget?: (budget: ExtractionBudget) => void
}

/** What an extraction sized its transcript for: the model's window as the host told it, if it did. */
export interface ExtractionBudget {
  model: string | undefined
  window: number | undefined
  transcriptTokens: number
  /** The budgets the model refused as too large before this one, in the order tried. */
  refused?: readonly number[]
}

export const EXTRACT_AGENT = "memorize-extract"

/**
 * What a job renders, when the caller has the messages already (a segment capture): `all` is the
 * whole session, from which private spans are found; `selected` the messages this record covers.
 * Without it the job loads the session and renders its open segment (after the last compaction).
 */
export interface ExtractionScope {
  all: readonly unknown[]
  selected: readonly unknown[]
}

export async function runExtraction(ctx: ExtractionContext, claim: Claim, session: HostSession, scope?: ExtractionScope): Promise<JobResult> {
  const { jobs, diagnostics } = ctx
  const id = claim.sessionId
  // Records the outcome. When the write itself fails (a full disk), the job is neither left to wait
  // out its lease nor lost: this process keeps the outcome and settles it at its next pass.
  const finish = (record: () => boolean, outcome: JobResult["outcome"], detail?: string): JobResult => {
    try {
      return record() ? { sessionId: id, outcome, ...(detail ? { detail: redactText(detail) } : {}) } : { sessionId: id, outcome: "lost_ownership" }
    } catch (error) {
      const cause = errorMessage(error)
      diagnostics.report("warn", "phase1", `could not record the outcome of ${id} (${outcome}): ${cause}; this process settles it at its next pass`)
      const giveBack = () => jobs.release(id, claim.token)
      if (ctx.unsettled) ctx.unsettled.add(`extraction of ${id}`, record, giveBack)
      else ignoreFailure(giveBack)
      return { sessionId: id, outcome: "unsettled", detail: redactText(cause) }
    }
  }
  const fail = (error: string, options?: { spendRetry?: boolean }) => () => jobs.fail(id, claim.token, redactText(error), options)
  const audit = (counts: Readonly<Record<string, number>>, stage: RedactionStage) => {
    if (!ctx.recordRedactions || !Object.keys(counts).length) return
    try {
      ctx.recordRedactions(sessionOfKey(id), counts, stage)
    } catch (error) {
      // The audit is a report; failing to write it must not fail the extraction.
      diagnostics.report("warn", "phase1", `could not record the redaction counts of ${id}: ${errorMessage(error)}`)
    }
  }
  try {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(STAGE_ONE.EXTRACTION_TIMEOUT_MS)])
    const all = scope?.all ?? (await ctx.host.loadMessages(session.id, signal))
    // Closed segments are their own records (segment-capture.ts): the session's record covers the rest.
    const messages = sinceTime(scope?.selected ?? splitSegments(all as never).open, ctx.learnFrom?.(session.id))
    // A session with nothing to show teaches nothing; an existing record is kept (retry later).
    const emptySession = (): JobResult =>
      jobs.hasOutput(id)
        ? finish(fail("the session's transcript came back empty"), "failed", "empty transcript")
        : finish(() => jobs.succeedNoOutput(id, claim.token), "nothing_to_remember")
    if (messages.length === 0) return emptySession()
    // The one place the host's session is read: everything below uses the sanitized copy.
    const input = sanitizeSession(session, all as never)
    const model = ctx.extractionModel()
    const modelName = model ? `${model.providerID}/${model.modelID}` : undefined
    const contextLimit = await ctx.host.contextLimit(model, signal).catch(() => undefined)
    let budget = transcriptBudget(contextLimit)
    ctx.noteBudget?.({ model: modelName, window: contextLimit, transcriptTokens: budget })
    // Read from the folder now, as Codex records it with the thread: a hint for V2's prompt and a
    // header line of the rollout summary in both versions.
    const folderBranch = gitBranch(session.directory)
    const branch = folderBranch === undefined ? undefined : input.clean(folderBranch) || undefined
    // The routing hint records carry beside the folder: cleaned like every host string, and a
    // remote's credentials were already left out where it was read.
    const found = ctx.projectOf?.(session)
    const project = found ? { key: input.clean(found.key), name: input.clean(found.name) } : undefined
    const build = (budgetTokens: number) =>
      ctx.strategy.build({
        sessionId: claim.sessionId,
        ...(branch ? { branch } : {}),
        ...(project?.name ? { project: project.name } : {}),
        updatedAt: claim.watermark,
        messages: messages as never,
        input,
        budgetTokens,
        ...(ctx.ownFiles ? { ownTool: ownToolCalls(ctx.ownFiles, session.directory) } : {}),
      })
    let built = build(budget)
    if (built.empty) return emptySession()
    // A model OpenCode does not offer fails there as a bare UnknownError: said here with its cause,
    // and, like a rate limit, it rests the model instead of spending the session's retries.
    const unknown = await unknownModel(ctx.host, model, "extract_model (or OpenCode's small_model)", signal)
    if (unknown) {
      ctx.breaker.trip(breakerScope(model, "extraction"), unknown)
      return finish(fail(`extraction model failed: ${unknown}`, { spendRetry: false }), "failed", unknown)
    }
    // A host with a tool-less completion gets the whole request as one prompt; others a helper session.
    const ask = (request: ExtractionRequest) => (ctx.host.generateText ? askCompletion(ctx, request, model, signal) : askHelper(ctx, id, request, model, signal))
    let reply = await ask(built.request)
    // The prompt was sent: record what was kept out of it (a shrunk request sends a part of the same).
    audit(addCounts({ ...built.redactions }, input.redactions()), "transcript")
    // A request too large for the model's window is a cue, not a failure: the same request is built
    // again with two thirds of the budget and asked at once, spending no retry, up to three times.
    const refused: number[] = []
    while (reply.overflow && refused.length < OVERFLOW.MAX_SHRINKS) {
      refused.push(budget)
      const next = shrinkBudget(budget)
      diagnostics.report("info", "phase1", `the extraction request for ${id} was too large for the model (${budget} tokens budgeted); retrying with ${next}`)
      noteOverflow(ctx, claim, refused)
      budget = next
      ctx.noteBudget?.({ model: modelName, window: contextLimit, transcriptTokens: budget, refused: [...refused] })
      built = build(budget)
      if (built.empty) return emptySession()
      reply = await ask(built.request)
    }
    if (reply.error) {
      // A quota or rate limit is not the session's fault: no retry spent, and the model rests an hour.
      if (reply.rateLimited) ctx.breaker.trip(breakerScope(model, "extraction"), reply.error)
      // Too large at every budget: the ordinary failure, which says so.
      if (reply.overflow) noteOverflow(ctx, claim, [...refused, budget])
      const error = reply.overflow ? `the request was too large for the model at every budget tried (${[...refused, budget].join(", ")} tokens): ${reply.error}` : reply.error
      return finish(fail(`extraction model failed: ${error}`, { spendRetry: !reply.rateLimited }), "failed", error)
    }
    const result = ctx.strategy.parse(reply.structured, input.session.directory)
    if (result.type === "invalid") return finish(fail(result.reason), "failed", result.reason)
    if (result.type === "empty") return finish(() => jobs.succeedNoOutput(id, claim.token), "nothing_to_remember")
    audit(result.redactions, "answer")
    for (const cut of result.cuts) diagnostics.report("warn", "phase1", `the extractor's ${cut.field} for ${id} had ${cut.bytes} bytes; its middle was cut to keep it within the cap`)
    const output = { ...result.memory, host: ctx.host.kind, ...(branch ? { gitBranch: branch } : {}), ...(project?.key && project.name ? { project } : {}) }
    return finish(() => jobs.succeed(id, claim.token, output), "stored")
  } catch (error) {
    if (ctx.signal.aborted) return finish(() => jobs.release(id, claim.token), "released")
    // Deleted since it was listed (by another window, OpenCode's CLI): forgotten, not retried.
    if (await sessionGone(ctx, session.id)) {
      jobs.release(id, claim.token)
      ctx.onSessionGone?.(session.id)
      diagnostics.report("info", "phase1", `${id} was deleted from OpenCode before it could be learned from; it is forgotten, not retried`)
      return { sessionId: id, outcome: "session_gone" }
    }
    diagnostics.report("warn", "phase1", `extraction of ${id} failed: ${errorMessage(error)}`)
    return finish(fail(errorMessage(error)), "failed", errorMessage(error))
  }
}

/** Whether OpenCode says the session does not exist; a look-up that fails says nothing. */
async function sessionGone(ctx: ExtractionContext, sessionId: string): Promise<boolean> {
  try {
    return !(await ctx.host.sessionExists(sessionId, AbortSignal.any([ctx.signal, AbortSignal.timeout(10_000)])))
  } catch {
    return false
  }
}

/**
 * The messages created at or after `from` (a message without a time is kept: hosts give one to every
 * message they store, and a test's hand-made message has none).
 */
export function sinceTime<T>(messages: readonly T[], from: number | undefined): readonly T[] {
  if (from === undefined) return messages
  return messages.filter((message) => {
    const created = (message as { info?: { time?: { created?: unknown } } } | undefined)?.info?.time?.created
    return typeof created !== "number" || created >= from
  })
}

/** Records on the job the budgets its request was refused at; a failed write costs only the note. */
function noteOverflow(ctx: ExtractionContext, claim: Claim, budgets: readonly number[]): void {
  try {
    ctx.jobs.noteOverflow(claim.sessionId, claim.token, budgets)
  } catch (error) {
    ctx.diagnostics.report("warn", "phase1", `could not record on ${claim.sessionId}'s job that its request was too large: ${errorMessage(error)}`)
  }
}

/** 70% of the model's context window when it is known, else Codex's 150,000-token fallback. */
export function transcriptBudget(contextLimit: number | undefined): number {
  if (!contextLimit || contextLimit <= 0) return STAGE_ONE.DEFAULT_TRANSCRIPT_TOKENS
  return Math.max(1_000, Math.floor((contextLimit * STAGE_ONE.CONTEXT_WINDOW_PERCENT) / 100) - STAGE_ONE.PROMPT_RESERVE_TOKENS)
}

/** `overflow`: the request was too large for the model's window (write/helpers/overflow.ts). */
type HelperAnswer = { structured?: unknown; error?: string; rateLimited?: boolean; overflow?: boolean }

/** A host's error as a failed answer: its name and message, and whether it is a rate limit or an overflow. */
function failedAnswer(error: { name: string; message: string; status?: number; body?: string }): HelperAnswer {
  const rateLimited = isRateLimit(error)
  return { error: `${error.name}: ${error.message}`.slice(0, 2_000), rateLimited, overflow: !rateLimited && isContextOverflow(error) }
}

/** One completion of the request as a single prompt; the object in the reply's text is the answer. */
async function askCompletion(ctx: ExtractionContext, request: ExtractionRequest, model: ModelRef | undefined, signal: AbortSignal): Promise<HelperAnswer> {
  const { host } = ctx
  const variant = model ? chooseVariant(await host.modelVariants(model, signal).catch(() => []), "low") : undefined
  const reply = await host.generateText!({ prompt: ctx.strategy.singlePrompt(request), ...(model ? { model } : {}), ...(variant ? { variant } : {}) }, signal)
  if (reply.error) {
    const answer = failedAnswer(reply.error)
    // No helper session carried it: the ledger counts the refusal alone.
    if (answer.overflow) recordRefusedCompletion(ctx, "extraction")
    return answer
  }
  // Text that holds no JSON goes to the answer checks as it is, which say so.
  return { structured: jsonFromReply(reply.text) ?? reply.text }
}

/** Runs one prompt in a fresh helper session and always tries to delete that session after. */
async function askHelper(
  ctx: ExtractionContext,
  sourceId: string,
  request: ExtractionRequest,
  model: ModelRef | undefined,
  signal: AbortSignal,
): Promise<HelperAnswer> {
  const { host, memoryRoot } = ctx
  const helper = await host.createSession(
    {
      directory: memoryRoot,
      role: "extract",
      title: helperTitle("extract", sourceId),
      metadata: helperMetadata("extract", sourceId, ctx.now()),
      permission: helperSessionRules("extract", [memoryRoot]),
    },
    signal,
  )
  ctx.helperSessions.add(helper.id)
  let usage: Usage | undefined
  let overflowed = false
  const onAbort = () => void host.abortSession(helper.id, memoryRoot).catch(() => undefined)
  signal.addEventListener("abort", onAbort, { once: true })
  try {
    // Codex extracts at low effort; OpenCode models name their variants, so take the nearest.
    const variant = model ? chooseVariant(await host.modelVariants(model, signal).catch(() => []), "low") : undefined
    const reply = await host.prompt(
      helper.id,
      {
        directory: memoryRoot,
        agent: EXTRACT_AGENT,
        ...(model ? { model } : {}),
        ...(variant ? { variant } : {}),
        system: request.system,
        text: request.text,
        schema: request.schema,
      },
      signal,
    )
    usage = reply.usage
    if (reply.error) {
      const answer = failedAnswer(reply.error)
      overflowed = answer.overflow === true
      return answer
    }
    return { structured: reply.structured ?? reply.text }
  } finally {
    signal.removeEventListener("abort", onAbort)
    await recordHelperUsage(ctx, "extraction", helper.id, { fallback: usage, structured: request.schema !== undefined, overflowed })
    const deleted = await host.deleteSession(helper.id, memoryRoot).catch(() => false)
    if (!deleted) ctx.diagnostics.report("warn", "phase1", `helper session ${helper.id} could not be deleted; it will be cleaned up later`)
    ctx.helperSessions.delete(helper.id)
  }
}

function ignoreFailure(fn: () => unknown): void {
  try {
    fn()
  } catch {
    // Reported by the caller; the lease ends the job if this fails too.
  }
}
