import { describe, expect, it } from "vitest"
import { cutMiddleOfEnds, endBytesNeeded } from "../../src/util/middle-cut.js"
import { truncateMiddleCodex as truncateMiddle } from "../../src/util/tokens.js"

/** A deterministic text mixing 1- to 4-byte characters, so cuts land inside characters. */
function mixed(length: number, seed: number): string {
  const alphabet = ["a", "b", " ", "\n", "é", "ß", "€", "中", "🙂", "𝄞"]
  let state = seed
  let text = ""
  while (text.length < length) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    text += alphabet[state % alphabet.length]
  }
  return text
}

describe("cutMiddleOfEnds", () => {
  it("gives truncateMiddle's result byte for byte from only the ends", () => {
    for (const [tokens, length, seed] of [
      [10, 200, 1],
      [25, 1_000, 2],
      [100, 5_000, 3],
      [2_500, 40_000, 4],
      [7, 31, 5],
    ] as const) {
      const text = mixed(length, seed)
      const bytes = Buffer.from(text)
      const need = endBytesNeeded(tokens)
      const head = bytes.subarray(0, Math.min(bytes.length, need.head))
      const tail = bytes.subarray(Math.max(0, bytes.length - need.tail))
      expect(cutMiddleOfEnds(head, tail, bytes.length, tokens)).toBe(truncateMiddle(text, tokens))
      // Wider windows change nothing.
      expect(cutMiddleOfEnds(bytes, bytes, bytes.length, tokens)).toBe(truncateMiddle(text, tokens))
    }
  })

  it("refuses a text within the budget and ends too short to cut from", () => {
    const bytes = Buffer.from("x".repeat(1_000))
    expect(() => cutMiddleOfEnds(bytes, bytes, bytes.length, 250)).toThrow(/within the budget/)
    expect(() => cutMiddleOfEnds(bytes.subarray(0, 10), bytes, bytes.length, 100)).toThrow(/too few bytes/)
  })
})
