// Which lines of one file match, given its (possibly lowercased or normalized) text. Pure.
//
// Each query is looked up with indexOf over the whole text; after a hit the search resumes at the
// next line, since a line either holds a query or not. Hits are mapped to lines through the
// line-start table, and each line gets a bit mask of the queries it holds.
//
// Match modes:
// - "any": every line holding at least one query.
// - "all_on_same_line": every line holding all queries.
// - "all_within_lines" with line_count N: lines are taken in order; a line L that holds at least
//   one query starts a match if every query appears within lines L..L+N-1. The match spans L to
//   the first line E at which the last missing query appears (so E-L+1 <= N). The next match may
//   start only after E, so matches never overlap and each is reported once, at its first line.
//   With N = 1 this is exactly "all_on_same_line".
import type { MatchMode } from "./requests.js"
import { lineIndexAt } from "./search-lines.js"

export interface Needle {
  /** The query as the file's variant compares it. */
  text: string
  /** Bits of the request's queries this needle stands for (two queries may compare equal). */
  mask: number
}

export interface LineSpan {
  /** 0-based first and last line. */
  first: number
  last: number
  /** Queries found on the span's lines. */
  mask: number
}

export function findSpans(
  text: string,
  starts: Uint32Array,
  needles: readonly Needle[],
  mode: MatchMode,
  lineCount: number,
): LineSpan[] {
  const all = needles.reduce((mask, needle) => mask | needle.mask, 0)
  const lines = lineMasks(text, starts, needles, mode !== "any")
  if (lines.length === 0) return []
  if (mode === "any") return lines.map(([line, mask]) => ({ first: line, last: line, mask }))
  if (mode === "all_on_same_line") return lines.filter(([, mask]) => mask === all).map(([line, mask]) => ({ first: line, last: line, mask }))
  return windows(lines, all, lineCount)
}

/** [line, mask] for every line holding a query, by line. Empty if `requireAll` and a needle is absent. */
export function lineMasks(text: string, starts: Uint32Array, needles: readonly Needle[], requireAll: boolean): Array<[number, number]> {
  const masks = new Map<number, number>()
  for (const needle of needles) {
    let found = false
    let at = text.indexOf(needle.text)
    while (at !== -1) {
      found = true
      const line = lineIndexAt(starts, at)
      masks.set(line, (masks.get(line) ?? 0) | needle.mask)
      if (line + 1 >= starts.length) break
      at = text.indexOf(needle.text, starts[line + 1])
    }
    if (!found && requireAll) return []
  }
  return [...masks].sort((a, b) => a[0] - b[0])
}

function windows(lines: Array<[number, number]>, all: number, lineCount: number): LineSpan[] {
  const spans: LineSpan[] = []
  let i = 0
  while (i < lines.length) {
    const first = lines[i]![0]
    let seen = 0
    let end = -1
    for (let j = i; j < lines.length && lines[j]![0] < first + lineCount; j++) {
      seen |= lines[j]![1]
      if (seen === all) {
        end = j
        break
      }
    }
    if (end === -1) {
      i++
      continue
    }
    spans.push({ first, last: lines[end]![0], mask: all })
    i = end + 1
  }
  return spans
}
