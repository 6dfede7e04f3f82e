// The two cuts a transcript takes: one long value (a tool's input or output) cut in the middle to a
// number of characters, and the whole transcript fitted to a token budget. Both keep the head and
// the tail, where a command's invocation and its verdict usually are, and say what was removed.
import { BlockFitter, type Fitted } from "./block-fitter.js"

/**
 * Keeps about `maxChars` characters of `text`, half from each end, with a marker saying how many
 * were removed. `inline` keeps the result on one line (for JSON inputs); otherwise the cut snaps to
 * line breaks near the cut points, so that no half lines are shown.
 */
export function cutChars(text: string, maxChars: number, inline = false): string {
  const max = Math.max(0, Math.floor(maxChars))
  if (text.length <= max) return text
  let headEnd = Math.floor(max / 2)
  let tailStart = text.length - (max - headEnd)
  if (!inline) {
    // Only a short way back or forward: a line break far away would waste the allowance.
    const newlineBefore = text.lastIndexOf("\n", headEnd)
    if (newlineBefore > headEnd * 0.75) headEnd = newlineBefore
    const newlineAfter = text.indexOf("\n", tailStart)
    if (newlineAfter >= 0 && newlineAfter < tailStart + (text.length - tailStart) * 0.25) tailStart = newlineAfter + 1
  }
  // Never split a surrogate pair.
  if (isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++
  const marker = `[... ${tailStart - headEnd} characters cut ...]`
  const head = text.slice(0, headEnd)
  const tail = text.slice(tailStart)
  return inline ? `${head} ${marker} ${tail}` : `${head}\n${marker}\n${tail}`
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

export { BLOCK_SEPARATOR, type Fitted } from "./block-fitter.js"

/**
 * Joins the blocks and, when they exceed `maxTokens` (estimated), keeps the head and the tail. Whole
 * blocks are preferred, the first half of the budget to the head and the rest to the tail. When
 * whole blocks would leave the first or the last block out, or fill less than half of the budget (a
 * few huge blocks), the joined text is cut in the middle instead, on character boundaries. Either
 * way the result, marker included, stays within `maxTokens` unless the budget cannot even hold the
 * marker. BlockFitter does it as the blocks arrive.
 */
export function fitBlocks(blocks: readonly string[], maxTokens: number): Fitted {
  const fitter = new BlockFitter(maxTokens)
  for (const block of blocks) fitter.add(block)
  return fitter.finish()
}
