// Token estimates and budget cuts. Like Codex, a token is estimated as 4 UTF-8 bytes: no tokenizer
// ships with OpenCode plugins, and bytes overcount rather than undercount non-Latin text.
import { READ_PATH } from "../constants.js"

export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / READ_PATH.BYTES_PER_TOKEN)
}

/**
 * Keeps the head and the tail of `text` within `maxTokens`, cutting out the middle and putting a
 * marker that says how much was removed. Cuts fall on UTF-8 character boundaries.
 */
export function truncateMiddle(text: string, maxTokens: number): string {
  const bytes = Buffer.from(text, "utf8")
  const budget = Math.max(0, Math.floor(maxTokens * READ_PATH.BYTES_PER_TOKEN))
  if (bytes.length <= budget) return text
  const headEnd = charBoundary(bytes, Math.floor(budget / 2))
  const tailStart = charBoundaryForward(bytes, bytes.length - (budget - headEnd))
  const removed = Math.ceil((tailStart - headEnd) / READ_PATH.BYTES_PER_TOKEN)
  const head = bytes.subarray(0, headEnd).toString("utf8")
  const tail = bytes.subarray(tailStart).toString("utf8")
  return `${head}\n[... ${removed} tokens truncated ...]\n${tail}`
}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

/** Largest offset <= `at` that starts a character. */
function charBoundary(bytes: Buffer, at: number): number {
  let i = Math.min(at, bytes.length)
  while (i > 0 && isContinuation(bytes[i])) i--
  return i
}

/** Smallest offset >= `at` that starts a character. */
function charBoundaryForward(bytes: Buffer, at: number): number {
  let i = Math.max(at, 0)
  while (i < bytes.length && isContinuation(bytes[i])) i++
  return i
}
