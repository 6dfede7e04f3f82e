import { describe, expect, it } from "vitest"
import { estimateTokens, truncateMiddle } from "../../src/util/tokens.js"

describe("truncateMiddle", () => {
  it("leaves text within the budget untouched", () => {
    const text = "a".repeat(400)
    expect(truncateMiddle(text, 100)).toBe(text)
  })

  it("keeps head and tail and says how much was cut", () => {
    const text = "H".repeat(500) + "M".repeat(1000) + "T".repeat(500)
    const cut = truncateMiddle(text, 100)
    expect(cut.startsWith("H".repeat(200))).toBe(true)
    expect(cut.endsWith("T".repeat(200))).toBe(true)
    expect(cut).not.toContain("M")
    expect(cut).toContain("[... 400 tokens truncated ...]")
  })

  it("never splits a multi-byte character", () => {
    const text = "é".repeat(3000) + "🙂".repeat(3000)
    const cut = truncateMiddle(text, 1000)
    expect(cut).not.toContain("\uFFFD")
    expect(Buffer.byteLength(cut.replace(/\n\[.*\]\n/, ""))).toBeLessThanOrEqual(4000)
    expect(cut.startsWith("é")).toBe(true)
    expect(cut.endsWith("🙂")).toBe(true)
  })

  it("estimates tokens from UTF-8 bytes", () => {
    expect(estimateTokens("abcd")).toBe(1)
    expect(estimateTokens("ééé")).toBe(2)
  })
})
