import { describe, expect, it } from "vitest"
import { lineIndexAt, lineStarts, lineText } from "../../src/backend/search-lines.js"

const lines = (text: string) => Array.from(lineStarts(text), (_, i) => lineText(text, lineStarts(text), i))

describe("line model", () => {
  it("splits on newlines without an empty line after a final newline", () => {
    expect(lines("")).toEqual([])
    expect(lines("a")).toEqual(["a"])
    expect(lines("a\n")).toEqual(["a"])
    expect(lines("a\n\n")).toEqual(["a", ""])
    expect(lines("\n")).toEqual([""])
    expect(lines("a\nb")).toEqual(["a", "b"])
  })

  it("drops the carriage return of a CRLF ending, and only that one", () => {
    expect(lines("a\r\nb\r\n")).toEqual(["a", "b"])
    expect(lines("a\r\r\nb\rc")).toEqual(["a\r", "b\rc"])
  })

  it("maps an offset to its line", () => {
    const text = "ab\ncd\n\nef"
    const starts = lineStarts(text)
    expect([0, 1, 2, 3, 5, 6, 7, 8].map((offset) => lineIndexAt(starts, offset))).toEqual([0, 0, 0, 1, 1, 2, 3, 3])
  })
})
