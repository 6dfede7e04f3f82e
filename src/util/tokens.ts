// Token estimates and budget cuts. Like Codex, a token is estimated as 4 UTF-8 bytes: no tokenizer
// ships with OpenCode plugins, and bytes overcount rather than undercount non-Latin text.
import { READ_PATH } from "../constants.js"
import { cutMiddleOfEnds } from "./middle-cut.js"

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
  // The whole text is both "ends": one cut, shared with the reader of huge summaries.
  return cutMiddleOfEnds(bytes, bytes, bytes.length, maxTokens)
}
