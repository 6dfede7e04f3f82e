import { describe, expect, it } from "vitest"
import type { MatchMode } from "../../src/backend/requests.js"
import { lineStarts } from "../../src/backend/search-lines.js"
import { findSpans, type Needle } from "../../src/backend/search-match.js"

/** Spans as [first, last] 1-based line pairs, for queries given as needles with one bit each. */
function spans(lines: string[], queries: string[], mode: MatchMode, lineCount = 1): Array<[number, number, number]> {
  const text = lines.join("\n")
  const needles: Needle[] = queries.map((query, i) => ({ text: query, mask: 1 << i }))
  return findSpans(text, lineStarts(text), needles, mode, lineCount).map((span) => [span.first + 1, span.last + 1, span.mask])
}

describe("match modes", () => {
  const lines = ["alpha", "beta gamma", "alpha beta", "", "gamma", "alpha"]

  it("any: every line with at least one query, with the queries it holds", () => {
    expect(spans(lines, ["alpha", "gamma"], "any")).toEqual([
      [1, 1, 0b01],
      [2, 2, 0b10],
      [3, 3, 0b01],
      [5, 5, 0b10],
      [6, 6, 0b01],
    ])
  })

  it("all_on_same_line: only lines holding every query", () => {
    expect(spans(lines, ["alpha", "beta"], "all_on_same_line")).toEqual([[3, 3, 0b11]])
    expect(spans(lines, ["alpha", "delta"], "all_on_same_line")).toEqual([])
  })

  it("all_within_lines: a match starts at a line holding a query and ends where the last missing query appears", () => {
    // alpha(1) .. gamma(2): lines 1-2. Scanning resumes after line 2: alpha(3) .. gamma(5) spans 3 lines.
    expect(spans(lines, ["alpha", "gamma"], "all_within_lines", 3)).toEqual([
      [1, 2, 0b11],
      [3, 5, 0b11],
    ])
  })

  it("all_within_lines: matches never overlap, and the window is counted from the first line", () => {
    // Line 2 is not reused as the start of [2, 3]; line 5 holds "a" but no "b" follows, so it starts nothing.
    const text = ["a", "b", "a", "b", "a"]
    expect(spans(text, ["a", "b"], "all_within_lines", 2)).toEqual([
      [1, 2, 0b11],
      [3, 4, 0b11],
    ])
    expect(spans(["a", "x", "b"], ["a", "b"], "all_within_lines", 2)).toEqual([])
    expect(spans(["a", "x", "b"], ["a", "b"], "all_within_lines", 3)).toEqual([[1, 3, 0b11]])
  })

  it("all_within_lines: a line that holds every query is a match of one line", () => {
    expect(spans(["x", "a b", "a"], ["a", "b"], "all_within_lines", 5)).toEqual([[2, 2, 0b11]])
  })

  it("all_within_lines with line_count 1 is all_on_same_line", () => {
    const text = ["a b", "a", "b", "b a", "ab"]
    expect(spans(text, ["a", "b"], "all_within_lines", 1)).toEqual(spans(text, ["a", "b"], "all_on_same_line"))
  })

  it("all_within_lines: a query seen before the start line does not count for a later window", () => {
    // "b" on line 1 precedes "a" on line 2; a window starting at line 2 has no "b" within 2 lines.
    expect(spans(["b", "a", "x", "x"], ["a", "b"], "all_within_lines", 2)).toEqual([[1, 2, 0b11]])
    expect(spans(["b", "x", "a", "x"], ["a", "b"], "all_within_lines", 2)).toEqual([])
  })

  it("finds a query once per line however often it occurs there", () => {
    expect(spans(["aaaa", "a"], ["a"], "any")).toEqual([
      [1, 1, 1],
      [2, 2, 1],
    ])
  })

  it("merges the bits of two needles found on the same line", () => {
    expect(spans(["x y", "y"], ["x", "y"], "any")).toEqual([
      [1, 1, 0b11],
      [2, 2, 0b10],
    ])
  })

  it("finds matches on the last line with or without a final newline", () => {
    for (const text of ["a\nb", "a\nb\n"]) {
      const needles = [{ text: "b", mask: 1 }]
      expect(findSpans(text, lineStarts(text), needles, "any", 1)).toEqual([{ first: 1, last: 1, mask: 1 }])
    }
  })
})
