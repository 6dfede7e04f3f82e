// One claimed capture: the segments a session's compactions closed, each learned from once, now,
// whatever the idle gate says. Each segment (or, when larger than the extraction budget, each of
// its parts) is an ordinary stage-1 job under its own key, so a segment already stored is skipped
// and a failed one keeps its own retries. The capture is done when every closed segment is
// stored, empty, or out of retries; otherwise it fails and is retried after the backoff.
import { STAGE_ONE } from "../../constants.js"
import { errorMessage } from "../../diagnostics.js"
import type { HostSession } from "../../host.js"
import { redactText } from "../../redact/redact.js"
import { segmentKey } from "../../store/record-keys.js"
import type { CaptureClaim, SegmentCaptures } from "../../store/segment-captures.js"
import { runExtraction, transcriptBudget, type ExtractionContext } from "./extraction-job.js"
import type { JobResult } from "./phase1-results.js"
import { packParts, splitSegments } from "./segments.js"
import { sanitizeSession } from "./session-input.js"
import { renderTranscript, type TranscriptMessage } from "../transcript/transcript.js"

export interface CaptureContext extends ExtractionContext {
  captures: SegmentCaptures
  workerId: string
}

export interface CaptureReport {
  sessionId: string
  outcome: "captured" | "retry_later" | "released" | "lost_ownership"
  /** One result per segment part extracted in this run. */
  results: JobResult[]
}

/** Parts leave this share of the budget free: a part is measured message by message, rendered joined. */
const PART_FILL = 0.9

export async function captureSegments(ctx: CaptureContext, claim: CaptureClaim, session: HostSession | undefined): Promise<CaptureReport> {
  const report = (outcome: CaptureReport["outcome"], results: JobResult[] = []): CaptureReport => ({ sessionId: claim.sessionId, outcome, results })
  const finishCapture = (results: JobResult[]) => report(ctx.captures.finish(claim) ? "captured" : "lost_ownership", results)
  // A session the host no longer lists as a root session has nothing left to capture.
  if (!session) return finishCapture([])
  const results: JobResult[] = []
  try {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(STAGE_ONE.EXTRACTION_TIMEOUT_MS)])
    const all = (await ctx.host.loadMessages(session.id, signal)) as TranscriptMessage[]
    const { closed } = splitSegments(all)
    const model = ctx.extractionModel()
    const contextLimit = await ctx.host.contextLimit(model, signal).catch(() => undefined)
    const budget = Math.floor(transcriptBudget(contextLimit) * PART_FILL)
    const measure = partMeasure(session, all)
    const pending: string[] = []
    for (const segment of closed) {
      const parts = packParts(segment.messages, budget, measure)
      for (const [index, messages] of parts.entries()) {
        const key = parts.length === 1 ? segmentKey(session.id, segment.ordinal) : segmentKey(session.id, segment.ordinal, index + 1)
        const candidate = { sessionId: key, updatedAt: segment.closedAt }
        if (ctx.jobs.isUpToDate(key, segment.closedAt)) continue
        // Segments are not held to the per-startup cap: compactions bound them, and they run one at a time.
        const outcome = ctx.jobs.claim(candidate, { workerId: ctx.workerId, maxRunning: Number.MAX_SAFE_INTEGER })
        if (outcome.type === "skipped_up_to_date" || outcome.type === "skipped_retry_exhausted") continue
        if (outcome.type !== "claimed") {
          pending.push(`${key}: ${outcome.type}`)
          continue
        }
        const result = await runExtraction(ctx, outcome, session, { all, selected: messages })
        results.push(result)
        if (result.outcome === "released") {
          ctx.captures.release(claim)
          return report("released", results)
        }
        if (result.outcome === "failed" || result.outcome === "lost_ownership" || result.outcome === "unsettled") pending.push(`${key}: ${result.detail ?? result.outcome}`)
      }
    }
    if (!pending.length) return finishCapture(results)
    const reason = redactText(`segments not captured yet: ${pending.join("; ")}`)
    settleCapture(ctx, claim, () => ctx.captures.fail(claim, reason))
    return report("retry_later", results)
  } catch (error) {
    if (ctx.signal.aborted) {
      ctx.captures.release(claim)
      return report("released", results)
    }
    ctx.diagnostics.report("warn", "phase1", `capture of ${claim.sessionId}'s segments failed: ${errorMessage(error)}`)
    settleCapture(ctx, claim, () => ctx.captures.fail(claim, redactText(errorMessage(error))))
    return report("retry_later", results)
  }
}

/**
 * Records a capture's retry; when the write fails (a full disk), this process keeps it and settles
 * it at its next pass, so the capture does not wait out its lease.
 */
function settleCapture(ctx: CaptureContext, claim: CaptureClaim, record: () => unknown): void {
  try {
    record()
  } catch (error) {
    ctx.diagnostics.report("warn", "phase1", `could not record the capture of ${claim.sessionId}: ${errorMessage(error)}; this process settles it at its next pass`)
    ctx.unsettled?.add(`capture of ${claim.sessionId}`, record, () => ctx.captures.release(claim))
  }
}

/** Tokens one message takes in the transcript, rendered with the session's own private-span rules. */
function partMeasure(session: HostSession, all: readonly TranscriptMessage[]): (message: TranscriptMessage) => number {
  const input = sanitizeSession(session, all)
  return (message) => renderTranscript([message], { maxTokens: 1e12, ...input.transcript }).stats.tokens
}
