// What one helper session cost, from its messages as the host stores them: OpenCode puts each
// assistant message's tokens ({input, output, reasoning, cache: {read, write}}) and cost on the
// message, one message per step, so the session's spend is their sum (anything missing counts as
// zero). It is read just before the helper session is deleted.
import { STAGE_ONE } from "../../constants.js"
import { errorMessage, type Diagnostics } from "../../diagnostics.js"
import type { Host } from "../../host.js"
import type { SpendPhase, Usage } from "../../store/ledger.js"

export function helperUsage(messages: readonly unknown[]): Usage {
  const total: Usage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 }
  for (const message of messages) {
    const info = record(record(message)?.info)
    if (!info || info.role !== "assistant") continue
    const tokens = record(info.tokens)
    const cache = record(tokens?.cache)
    total.input += num(tokens?.input)
    total.output += num(tokens?.output)
    total.reasoning += num(tokens?.reasoning)
    total.cacheRead += num(cache?.read)
    total.cacheWrite += num(cache?.write)
    total.cost += num(info.cost)
  }
  return total
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0
}

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
}

/** How a helper session's figure is read, and what it met. */
export interface HelperUsageOptions {
  /** The final reply's own usage, when the host gave it: used when the messages cannot be read. */
  fallback?: Usage | undefined
  /**
   * The helper was asked for a JSON schema: OpenCode 1.18.33 cannot list such a session (it
   * rejects its own stored format, HTTP 400 "Expected OutputFormatJsonSchema", with a WARN in its
   * log), and the helper answers in one step, so its reply is the whole cost and nothing is read.
   */
  structured?: boolean
  /** Its request was refused as too large for the model's window: counted in the ledger's overflows. */
  overflowed?: boolean
}

type LedgerContext = { host: Host; diagnostics: Diagnostics; recordUsage?: ((phase: SpendPhase, usage: Usage) => void) | undefined }

const NOTHING: Usage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 }

/**
 * Reads what a helper session cost before it is deleted, into the spend ledger. Bounded, and a
 * failure costs only the figure: it is logged, never the job's outcome.
 */
export async function recordHelperUsage(ctx: LedgerContext, phase: SpendPhase, helperId: string, options: HelperUsageOptions = {}): Promise<void> {
  if (!ctx.recordUsage) return
  const { fallback, structured = false, overflowed = false } = options
  const record = (usage: Usage) => writeLedger(ctx, phase, { ...usage, ...(overflowed ? { overflows: 1 } : {}) }, `what helper session ${helperId} cost`)
  // An answer with no usage (an abort before any reply) still counts as a helper session.
  if (structured) return record(fallback ?? NOTHING)
  let messages: readonly unknown[]
  try {
    messages = await ctx.host.loadMessages(helperId, AbortSignal.timeout(STAGE_ONE.USAGE_TIMEOUT_MS))
  } catch (error) {
    if (fallback) return record(fallback)
    return ctx.diagnostics.report("warn", phase === "extraction" ? "phase1" : "phase2", `could not record what helper session ${helperId} cost: ${errorMessage(error)}`)
  }
  record(helperUsage(messages))
}

/**
 * A completion (no helper session: OpenCode 2's generate.text) the model refused as too large for
 * its window: counted in the ledger's overflows, as no session and no tokens (the host reports no
 * usage for completions).
 */
export function recordRefusedCompletion(ctx: LedgerContext, phase: SpendPhase): void {
  if (ctx.recordUsage) writeLedger(ctx, phase, { ...NOTHING, sessions: 0, overflows: 1 }, "a refused completion")
}

function writeLedger(ctx: LedgerContext, phase: SpendPhase, usage: Usage, what: string): void {
  try {
    ctx.recordUsage!(phase, usage)
  } catch (error) {
    // A full disk, say: the figure is lost, the job's outcome is not.
    ctx.diagnostics.report("warn", phase === "extraction" ? "phase1" : "phase2", `could not record ${what}: ${errorMessage(error)}`)
  }
}
