import { describe, expect, it } from "vitest"
import { mayContain, tripleFilter, tripleHashes } from "../../src/backend/search-filter.js"

function pseudoRandom(seed: number): () => number {
  let state = seed
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0
    return state / 4_294_967_296
  }
}

describe("triple filter", () => {
  it("never rules out a substring of the text", () => {
    const random = pseudoRandom(7)
    const alphabet = "abcdefghij é🙂\n-"
    for (let round = 0; round < 200; round++) {
      const length = 1 + Math.floor(random() * 3_000)
      const text = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("")
      const filter = tripleFilter(text)
      for (let probe = 0; probe < 20; probe++) {
        const start = Math.floor(random() * text.length)
        const needle = text.slice(start, start + 1 + Math.floor(random() * 12))
        expect(mayContain(filter, tripleHashes(needle)), JSON.stringify(needle)).toBe(true)
      }
    }
  })

  it("rules out a word whose triples a summary-sized text lacks", () => {
    const text = "the deploy used the staging script and the cache was warm\n".repeat(80)
    const filter = tripleFilter(text)
    expect(mayContain(filter, tripleHashes("pgbouncer"))).toBe(false)
    expect(mayContain(filter, tripleHashes("staging script"))).toBe(true)
  })

  it("cannot rule anything out for needles shorter than three characters", () => {
    expect(tripleHashes("ab")).toEqual([])
    expect(mayContain(tripleFilter("xyz"), tripleHashes("ab"))).toBe(true)
  })

  it("grows with the text, within its bounds", () => {
    expect(tripleFilter("").length * 32).toBe(512)
    expect(tripleFilter("x".repeat(4_500)).length * 32).toBe(16_384)
    expect(tripleFilter("x".repeat(1_000_000)).length * 32).toBe(65_536)
  })
})
