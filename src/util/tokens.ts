// Token budgets and their middle cuts. Everything sized for a model counts tokens with the
// calibrated estimator (token-estimate.ts): a token is not 4 bytes in digests, logs or encoded
// blobs, where that rule undercounts two- to threefold. Codex's byte rule (a token = 4 UTF-8 bytes)
// stays only for caps that are bytes in Codex too (a record's fields, a row of evidence).
import { READ_PATH } from "../constants.js"
import { cutMiddleOfEnds, cutMiddleOfTextEnds } from "./middle-cut.js"
import { estimateTokens } from "./token-estimate.js"

export { estimateTokens } from "./token-estimate.js"

/**
 * Keeps the head and the tail of `text` within `maxTokens` estimated tokens, cutting out the middle
 * and putting a marker that says about how many tokens were removed. The marker counts against the
 * budget, and cuts never split a character.
 */
export function truncateMiddle(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= Math.max(0, Math.floor(maxTokens))) return text
  return cutMiddleOfTextEnds(text, text, Buffer.byteLength(text, "utf8"), maxTokens)
}

/** Codex's estimate: UTF-8 bytes over four, rounded up (APPROX_BYTES_PER_TOKEN). */
export function codexTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / READ_PATH.BYTES_PER_TOKEN)
}

/**
 * Codex's truncate_middle_with_token_budget: `maxTokens` x 4 bytes, half from each end, cut on
 * UTF-8 character boundaries, the marker outside the budget. For caps that are bytes in Codex.
 */
export function truncateMiddleCodex(text: string, maxTokens: number): string {
  const bytes = Buffer.from(text, "utf8")
  const budget = Math.max(0, Math.floor(maxTokens * READ_PATH.BYTES_PER_TOKEN))
  if (bytes.length <= budget) return text
  // The whole text is both "ends": one cut, shared with readers of files too large to load.
  return cutMiddleOfEnds(bytes, bytes, bytes.length, maxTokens)
}
