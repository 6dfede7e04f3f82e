// Removes the plugin's own text from a transcript part, so that phase 1 never learns memory back
// from memory. Two mechanisms: exact markers the caller passes (text it knows it injected), and
// the memory block's structure, which also catches blocks rendered from an older summary than the
// current one (a session is extracted after the summary has moved on). The checkpoint view is
// removed by its wrapper, wherever a copy of it turns up (quoted back by the model, say).
import { CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END } from "../../checkpoint/view.js"

const SUMMARY_BEGINS = "----- MEMORY SUMMARY BEGINS -----"
const SUMMARY_ENDS = "----- MEMORY SUMMARY ENDS -----"
/** A level-2 Markdown heading line, possibly inside a quote; the block's own subheadings are `###`. */
const HEADING = /^[ \t>]*##[ \t]+(.*?)[ \t]*$/gm

type Range = readonly [start: number, end: number]

export function stripInjected(text: string, markers: readonly string[]): string {
  let out = text
  for (const marker of markers) {
    if (marker && out.includes(marker)) out = removeRanges(out, occurrences(out, marker))
  }
  if (out.includes(CHECKPOINT_VIEW_BEGIN)) out = removeRanges(out, wrapped(out, CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END))
  return out.includes(SUMMARY_BEGINS) ? removeRanges(out, memoryBlocks(out)) : out
}

/** Each span from `begin` through `end`; one left open runs to the end of the text. */
function wrapped(text: string, begin: string, end: string): Range[] {
  const ranges: Range[] = []
  for (let at = text.indexOf(begin); at >= 0; ) {
    const close = text.indexOf(end, at + begin.length)
    const stop = close < 0 ? text.length : close + end.length
    ranges.push([at, stop])
    at = text.indexOf(begin, stop)
  }
  return ranges
}

function occurrences(text: string, needle: string): Range[] {
  const ranges: Range[] = []
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
    ranges.push([at, at + needle.length])
  }
  return ranges
}

/**
 * Each block runs from its `## Memory` heading (or, when the heading is missing, the line with the
 * begin marker) to the end of the line with the end marker. The heading counts only when no other
 * level-2 heading stands between it and the marker. A block cut off before its end marker is
 * removed to the end of the text, like an unclosed citation: the summary must not leak either way.
 */
function memoryBlocks(text: string): Range[] {
  const ranges: Range[] = []
  let from = 0
  for (;;) {
    const begins = text.indexOf(SUMMARY_BEGINS, from)
    if (begins < 0) break
    const beginsLine = text.lastIndexOf("\n", begins - 1) + 1
    const start = headingStart(text, from, beginsLine) ?? beginsLine
    const ends = text.indexOf(SUMMARY_ENDS, begins + SUMMARY_BEGINS.length)
    const lineEnd = ends < 0 ? -1 : text.indexOf("\n", ends)
    const end = ends < 0 || lineEnd < 0 ? text.length : lineEnd
    ranges.push([start, end])
    from = end
  }
  return ranges
}

function headingStart(text: string, from: number, before: number): number | undefined {
  let last: RegExpMatchArray | undefined
  for (const match of text.slice(from, before).matchAll(HEADING)) last = match
  return last?.[1] === "Memory" && last.index !== undefined ? from + last.index : undefined
}

/**
 * Cuts the ranges (sorted, non-overlapping) out of `text`. The whitespace that framed a removal
 * goes with it: a removal on its own lines leaves one blank line between its neighbours, one
 * inside a line leaves one space. Linear in the text, however many ranges there are.
 */
export function removeRanges(text: string, ranges: readonly Range[]): string {
  if (!ranges.length) return text
  const out: string[] = []
  let gap = false
  let gapOnOwnLines = false
  for (let i = 0, at = 0; i <= ranges.length; i++) {
    const [start, end] = ranges[i] ?? [text.length, text.length]
    const raw = text.slice(at, start)
    at = end
    const first = i === 0
    const last = i === ranges.length
    if (!first) gapOnOwnLines ||= /^[ \t]*\n/.test(raw)
    const trimmedStart = first ? raw : raw.trimStart()
    const kept = last ? trimmedStart : trimmedStart.trimEnd()
    if (kept) {
      if (gap && out.length) out.push(gapOnOwnLines ? "\n\n" : " ")
      out.push(kept)
      gap = gapOnOwnLines = false
    }
    if (!last) {
      gap = true
      gapOnOwnLines ||= /\n[ \t]*$/.test(raw)
    }
  }
  return out.join("")
}
