// A request too large for the model's context window: a cue to send less, not a failure. Phase 1
// rebuilds its request with a smaller transcript budget, phase 2 chooses fewer inputs, and each
// asks again at once (extraction-job.ts, phase2.ts); neither spends a retry on it.
//
// How an overflow reaches the plugin:
//   - OpenCode 1.x names it ContextOverflowError when its own patterns recognise the provider's
//     message, or when a helper session's compaction cannot make room ("Session too large to
//     compact - context exceeds model limit even after stripping media"); otherwise it is an
//     APIError carrying the provider's status and response body (v1/host.ts keeps both);
//   - OpenCode 2 stores a session error as {type, message, status} and generate.text throws the
//     provider's error (v2/host.ts keeps its status and body when it has them); its background
//     service answers that error with its own HTTP 503, body {"_tag":"ServiceUnavailableError",
//     "message": <the provider's message>} (2.1.2, seen on the binary);
//   - the providers' own wordings: OpenAI-compatible servers answer HTTP 400 with the code
//     context_length_exceeded and "maximum context length is N tokens", Anthropic 400 "prompt is
//     too long" or 413 request_too_large, vLLM "longer than the model's context length",
//     llama.cpp "exceeds the available context size", Gemini "input token count ... exceeds the
//     maximum number of tokens", Bedrock "input is too long".
// A rate limit is never an overflow, even one that counts tokens ("tokens per minute"): a smaller
// request does not make the provider's minute pass.
import { OVERFLOW } from "../../constants.js"
import { isRateLimit } from "./breaker.js"

export interface ProviderError {
  name?: string
  message?: string
  status?: number
  /** The provider's response body, when the host passed it on. */
  body?: string
}

/** A name that says it outright: OpenCode 1.x's ContextOverflowError, OpenCode 2's context_overflow type. */
const OVERFLOW_NAME = /context[_ ]?overflow/i

/** Wordings of a request whose prompt does not fit the model's window. */
const OVERFLOW_TEXT = [
  /context[_ ]length[_ ]exceeded/i,
  /\bmaximum (context|prompt) length\b/i,
  /\bmax(imum)?[ _]model[ _]len(gth)?\b/i,
  /\bcontext[ _-]?(window|length|size|limit)\b.{0,80}?\b(exceed\w*|too (long|large|small)|overflow\w*)/i,
  /\b(exceed\w*|longer than|greater than|larger than|more than)\b.{0,80}?\bcontext[ _-]?(window|length|size|limit)\b/i,
  /\bexceed_context_size/i,
  /\btoo many (input |prompt )?tokens\b/i,
  /\b(prompt|input|request)( is)? too (long|large)\b/i,
  /\brequest_too_large\b/i,
  /\bexceeds? (the )?max(imum)? (number of |allowed )?(input |prompt )?tokens\b/i,
  /\bmodel token limit\b/i,
  /\breduce the length of the (messages|prompt|input)\b/i,
]

/** A limit on tokens per unit of time is a rate limit, whatever else its message says. */
const RATE_TEXT = /\b(per (second|minute|min|hour|day)|TPM|RPM|TPD)\b/i

/** OpenCode 2's service passing a provider's failure on as its own 503: the message is the provider's. */
const SERVICE_RELAY = /"_tag"\s*:\s*"ServiceUnavailableError"/

/** Statuses a provider refuses an oversized request with; none at all when the host gave none. */
const OVERFLOW_STATUS = new Set([400, 413])

/**
 * True when the error says the request was too large for the model's context window: named so by
 * the host, or a 400 or 413 (or an error without a status) whose message or body says so. A 413 on
 * its own counts too: the request's size is all it refuses.
 */
export function isContextOverflow(error: ProviderError): boolean {
  if (error.status === 429 || isRateLimit(error)) return false
  if (OVERFLOW_NAME.test(error.name ?? "")) return true
  const relayed = error.status === 503 && SERVICE_RELAY.test(error.body ?? "")
  if (error.status !== undefined && !relayed && !OVERFLOW_STATUS.has(error.status)) return false
  if (error.status === 413) return true
  const text = `${error.message ?? ""}\n${error.body ?? ""}`
  return !RATE_TEXT.test(text) && OVERFLOW_TEXT.some((pattern) => pattern.test(text))
}

/** The budget asked with after an overflow: two thirds of the last one, in whole tokens. */
export function shrinkBudget(budget: number): number {
  return Math.floor((budget * OVERFLOW.SHRINK_NUMERATOR) / OVERFLOW.SHRINK_DENOMINATOR)
}
