import { describe, expect, it } from "vitest"
import { estimateTokens, headWithin, tailWithin } from "../../src/util/token-estimate.js"
import { truncateMiddle } from "../../src/util/tokens.js"

const MARKER = /\n\[\.\.\. (\d+) tokens truncated \.\.\.\]\n/

describe("truncateMiddle", () => {
  it("leaves text within the budget untouched", () => {
    const text = "a short line of English, well within its budget"
    expect(truncateMiddle(text, estimateTokens(text))).toBe(text)
  })

  it("keeps head and tail within the budget, marker included, and says about how much was cut", () => {
    const text = `HEAD ${"lorem ipsum dolor sit amet ".repeat(400)} MIDDLE ${"consectetur adipiscing elit ".repeat(400)} TAIL`
    const cut = truncateMiddle(text, 100)
    expect(estimateTokens(cut)).toBeLessThanOrEqual(100)
    expect(cut.startsWith("HEAD lorem")).toBe(true)
    expect(cut.endsWith("elit  TAIL")).toBe(true)
    expect(cut).not.toContain("MIDDLE")
    const match = MARKER.exec(cut)!
    const [head, tail] = [cut.slice(0, match.index), cut.slice(match.index + match[0].length)]
    // The kept ends are the longest each half allows.
    expect(head).toBe(text.slice(0, headWithin(text, estimateTokens(head))))
    expect(tail).toBe(text.slice(tailWithin(text, estimateTokens(tail))))
    // The count is the removed text's share at the kept text's rate: near the removed estimate.
    const removed = estimateTokens(text) - estimateTokens(head) - estimateTokens(tail)
    expect(Number(match[1])).toBeGreaterThan(removed * 0.8)
    expect(Number(match[1])).toBeLessThan(removed * 1.25)
  })

  it("cuts digests by their tokens, not their bytes", () => {
    const line = (i: number) => `${i.toString(16).padStart(8, "0").repeat(8)}  src/file-${i}.ts\n`
    const text = Array.from({ length: 2_000 }, (_, i) => line(i)).join("")
    const cut = truncateMiddle(text, 1_000)
    expect(estimateTokens(cut)).toBeLessThanOrEqual(1_000)
    expect(cut.startsWith(line(0))).toBe(true)
  })

  it("never splits a multi-byte character", () => {
    const text = "é".repeat(3000) + "🙂".repeat(3000)
    const cut = truncateMiddle(text, 1000)
    expect(cut).not.toContain("\uFFFD")
    expect(estimateTokens(cut)).toBeLessThanOrEqual(1000)
    expect(cut.startsWith("é")).toBe(true)
    expect(cut.endsWith("🙂")).toBe(true)
  })

  it("gives only the marker at a budget too small for anything else", () => {
    expect(truncateMiddle("x".repeat(1_000), 0)).toMatch(/^\n\[\.\.\. \d+ tokens truncated \.\.\.\]\n$/)
  })
})
