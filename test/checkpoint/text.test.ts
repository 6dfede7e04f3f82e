import { describe, expect, it } from "vitest"
import { compareText, oneLine, truncateChars } from "../../src/checkpoint/text.js"

describe("truncateChars", () => {
  it("keeps a text of at most max code points, else max - 1 of them and an ellipsis", () => {
    expect(truncateChars("abc", 3)).toBe("abc")
    expect(truncateChars("abcd", 3)).toBe("ab…")
    expect(truncateChars("abcd", 1)).toBe("…")
    expect(truncateChars("abcd", 0)).toBe("")
    expect(truncateChars("", 0)).toBe("")
  })

  it("counts and cuts code points, never half a surrogate pair", () => {
    expect(truncateChars("🙂🙂🙂", 3)).toBe("🙂🙂🙂")
    expect(truncateChars("🙂🙂🙂🙂", 3)).toBe("🙂🙂…")
    expect(truncateChars("a🙂b🙂c", 3)).toBe("a🙂…")
    // A lone surrogate counts as one.
    expect(truncateChars("\ud83dabc", 3)).toBe("\ud83da…")
  })
})

describe("oneLine", () => {
  it("collapses runs holding newlines, tabs or control characters to one space, and trims", () => {
    expect(oneLine("  a\n\n b\tc\r\nd \u0000 e  ")).toBe("a b c d e")
    expect(oneLine("keeps  double  spaces")).toBe("keeps  double  spaces")
    expect(oneLine("x\u2028y\u0085z")).toBe("x y z")
  })
})

describe("compareText", () => {
  it("orders by code unit, the same everywhere", () => {
    expect(["b", "B", "a", "_", "é", "A"].sort(compareText)).toEqual(["A", "B", "_", "a", "b", "é"])
  })
})
