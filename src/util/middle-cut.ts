// The middle cut of a text over its token budget, made from only the two ends of the text, so a
// file too large to read whole is cut exactly like a string (truncateMiddle in tokens.ts uses it).
import { READ_PATH } from "../constants.js"

/** How many bytes of each end `cutMiddleOfEnds` needs for a budget of `maxTokens`. */
export function endBytesNeeded(maxTokens: number): { head: number; tail: number } {
  const { head, tail } = sides(budgetBytes(maxTokens))
  // A character boundary is at most 3 bytes away from where the cut would fall.
  return { head: head + 4, tail: tail + 4 }
}

/**
 * The middle cut of a text of `totalBytes` UTF-8 bytes, over budget, given its first bytes `head`
 * and its last bytes `tail` (at least what endBytesNeeded says; they may overlap).
 */
export function cutMiddleOfEnds(head: Buffer, tail: Buffer, totalBytes: number, maxTokens: number): string {
  const budget = budgetBytes(maxTokens)
  const need = endBytesNeeded(maxTokens)
  if (totalBytes <= budget) throw new Error("cutMiddleOfEnds: the text is within the budget")
  if (head.length < Math.min(need.head, totalBytes) || tail.length < Math.min(need.tail, totalBytes)) {
    throw new Error("cutMiddleOfEnds: too few bytes of the ends")
  }
  const room = sides(budget)
  const headEnd = boundaryBackward(head, room.head)
  // `tail` holds the text's bytes from `offset` on.
  const offset = totalBytes - tail.length
  // Each side keeps at most its half, as Codex's split_string does: bytes the head cannot use at
  // a character boundary are dropped, not handed to the tail.
  const tailStart = offset + boundaryForward(tail, totalBytes - room.tail - offset)
  // Codex's marker counts the text's excess over the budget, not the bytes each side dropped.
  const removed = Math.ceil((totalBytes - budget) / READ_PATH.BYTES_PER_TOKEN)
  return `${head.toString("utf8", 0, headEnd)}\n[... ${removed} tokens truncated ...]\n${tail.toString("utf8", tailStart - offset)}`
}

const budgetBytes = (maxTokens: number) => Math.max(0, Math.floor(maxTokens * READ_PATH.BYTES_PER_TOKEN))

/** The budget split in two, the head's half rounded down. */
const sides = (budget: number) => ({ head: Math.floor(budget / 2), tail: budget - Math.floor(budget / 2) })

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

/** Largest offset <= `at` that starts a character. */
function boundaryBackward(bytes: Buffer, at: number): number {
  let i = Math.min(at, bytes.length)
  while (i > 0 && isContinuation(bytes[i])) i--
  return i
}

/** Smallest offset >= `at` that starts a character. */
function boundaryForward(bytes: Buffer, at: number): number {
  let i = Math.max(at, 0)
  while (i < bytes.length && isContinuation(bytes[i])) i++
  return i
}
