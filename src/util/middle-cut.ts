// The middle cut of a text over its token budget, made from only the two ends of the text, so a
// file too large to read whole, or a transcript rendered a block at a time, is cut exactly like a
// string (truncateMiddle and truncateMiddleCodex in tokens.ts use it). Two rules: estimated tokens
// (cutMiddleOfTextEnds), and Codex's 4 bytes a token (cutMiddleOfEnds).
import { READ_PATH } from "../constants.js"
import { estimateTokens, headWithin, tailWithin } from "./token-estimate.js"

/**
 * The estimated tokens each end must hold, at least, for cutMiddleOfTextEnds to cut it as it cuts
 * the whole text: its half of the room, and a few characters more (a window read from a file may
 * end inside a character).
 */
export function endTokensNeeded(maxTokens: number, totalBytes: number): { head: number; tail: number } {
  const { head, tail } = textSides(maxTokens, totalBytes)
  return { head: head + 4, tail: tail + 4 }
}

/** Whether `head` and `tail` hold what endTokensNeeded asks, less the characters a window may have cut. */
export function endsCovered(head: string, tail: string, maxTokens: number, totalBytes: number): boolean {
  const need = endTokensNeeded(maxTokens, totalBytes)
  return estimateTokens(head.slice(0, -4)) >= need.head && estimateTokens(tail.slice(4)) >= need.tail
}

/**
 * The middle cut, by estimated tokens, of a text of `totalBytes` UTF-8 bytes over `maxTokens`, given
 * its first characters `head` and its last characters `tail` (both may be the whole text). Each side
 * keeps at most half the room the marker leaves; the marker counts the removed bytes at the kept
 * text's tokens per byte, so the same text gives the same marker however it was read.
 */
export function cutMiddleOfTextEnds(head: string, tail: string, totalBytes: number, maxTokens: number): string {
  const room = textSides(maxTokens, totalBytes)
  const kept = { head: head.slice(0, headWithin(head, room.head)), tail: tail.slice(tailWithin(tail, room.tail)) }
  const keptBytes = Buffer.byteLength(kept.head, "utf8") + Buffer.byteLength(kept.tail, "utf8")
  const keptTokens = estimateTokens(kept.head) + estimateTokens(kept.tail)
  const removedBytes = Math.max(0, totalBytes - keptBytes)
  const perByte = keptBytes > 0 ? keptTokens / keptBytes : 1 / READ_PATH.BYTES_PER_TOKEN
  const removed = Math.min(totalBytes, Math.max(1, Math.ceil(removedBytes * perByte)))
  return `${kept.head}${textMarker(removed)}${kept.tail}`
}

const textMarker = (tokens: number) => `\n[... ${tokens} tokens truncated ...]\n`

/** The budget less the longest marker this text can get, split in two, the head's half rounded down. */
function textSides(maxTokens: number, totalBytes: number): { head: number; tail: number } {
  const room = Math.max(0, Math.floor(maxTokens) - estimateTokens(textMarker(Math.max(1, totalBytes))))
  return { head: Math.floor(room / 2), tail: room - Math.floor(room / 2) }
}

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
