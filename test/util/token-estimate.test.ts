// The token estimator against the real tokenizers (gpt-tokenizer, a dev dependency), on a seeded
// corpus drawn with another seed and at another size than the one its constants were fit on and
// `npm run bench -- tokens` reports; and the contracts callers rely on: head and tail cuts exact
// against estimateTokens, estimates that add up (subadditivity), surrogate pairs never split.
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base"
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base"
import { describe, expect, it } from "vitest"
import { corpusClasses, tokenCorpus } from "../../scripts/bench/token-corpus.js"
import { estimateTokens, headWithin, tailWithin } from "../../src/util/token-estimate.js"

const corpus = tokenCorpus(2026, 0.4)

/** A small seeded PRNG, so a failure reproduces. */
function prng(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 2 ** 32
  }
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff
/** Whether `i` falls between the two halves of a surrogate pair. */
const splitsPair = (text: string, i: number) => i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) && isLow(text.charCodeAt(i))
const nextBoundary = (text: string, i: number) => i + (splitsPair(text, i + 1) ? 2 : 1)
const previousBoundary = (text: string, i: number) => i - (splitsPair(text, i - 1) ? 2 : 1)
/** A code point boundary in [0, text.length], drawn at random. */
const randomBoundary = (text: string, random: () => number) => {
  const i = Math.floor(random() * (text.length + 1))
  return splitsPair(text, i) ? i - 1 : i
}

/** Windows of every sample, of random starts and lengths: short ones cross few run boundaries, long ones many. */
function windows(seed: number, perSample: number, maxLength: number): string[] {
  const random = prng(seed)
  const out: string[] = []
  for (const { text } of corpus) {
    for (let k = 0; k < perSample; k++) {
      const start = randomBoundary(text, random)
      let end = Math.min(text.length, start + 1 + Math.floor(random() * maxLength))
      if (splitsPair(text, end)) end++
      out.push(text.slice(start, end))
    }
  }
  return out
}

describe("estimateTokens against o200k_base and cl100k_base", () => {
  const measured = corpus.map((sample) => {
    const estimate = estimateTokens(sample.text)
    return { ...sample, o200k: estimate / countO200k(sample.text), cl100k: estimate / countCl100k(sample.text) }
  })

  it("the corpus has several samples of every content class", () => {
    for (const cls of corpusClasses()) expect(corpus.filter((sample) => sample.class === cls).length, cls).toBeGreaterThanOrEqual(2)
    for (const sample of corpus) expect(Buffer.byteLength(sample.text), sample.name).toBeGreaterThan(1500)
  })

  it("never undercounts a sample of any class by more than 5%, in either encoding", () => {
    const under = measured.filter((s) => s.o200k < 0.95 || s.cl100k < 0.95).map((s) => `${s.name}: o200k ${s.o200k.toFixed(3)}, cl100k ${s.cl100k.toFixed(3)}`)
    expect(under).toEqual([])
  })

  it("overcounts English prose by at most 25%, in either encoding", () => {
    const english = measured.filter((s) => s.class === "english")
    expect(english.length).toBeGreaterThanOrEqual(5)
    const over = english.filter((s) => s.o200k > 1.25 || s.cl100k > 1.25).map((s) => `${s.name}: o200k ${s.o200k.toFixed(3)}, cl100k ${s.cl100k.toFixed(3)}`)
    expect(over).toEqual([])
  })

  it("counts nothing for nothing and at least a token for anything", () => {
    expect(estimateTokens("")).toBe(0)
    for (const text of ["a", " ", "\n", "7", "{", "é", "中", "😀", "\u0000", "\ud800"]) expect(estimateTokens(text), JSON.stringify(text)).toBeGreaterThanOrEqual(1)
  })
})

describe("subadditivity: the estimate of a text is at most the sum of its parts'", () => {
  it("holds at random code point splits of windows of every class", () => {
    const random = prng(7)
    const failures: string[] = []
    for (const text of windows(11, 40, 600)) {
      const i = randomBoundary(text, random)
      const a = text.slice(0, i)
      const b = text.slice(i)
      if (estimateTokens(text) > estimateTokens(a) + estimateTokens(b)) failures.push(`${JSON.stringify(a.slice(-20))} | ${JSON.stringify(b.slice(0, 20))}`)
    }
    expect(failures).toEqual([])
  })

  it("holds at every split of short texts that cross every kind of run boundary", () => {
    const texts = [
      "Hello, world! It's 2026-03-01T09:15:22Z; sha256 3f9a0c7e  src/main.ts\n\tgetUserName(x) => {}",
      "  \n\n\t\t  word -- \"quoted\" (paren) [1, 22, 333, 4444] a+b/c=d 0xDEADbeef QmFzZTY0IQ==",
      "servido, Verbindungen. casa\nlevantado; 中文，日本語の文。한국어 문장. Ελληνικά русский عربي हिन्दी",
      "emoji 😀👍🏽 flags 🇺🇸🇯🇵 family 👨‍👩‍👧‍👦 ❤️ lone \ud83d x \udc00 y\u200d\ufe0f",
      "ABCdefGHI jkLMno pQRstu VWXyz a1b2c3 1a2b3c ...!!!??? ,;:) endsInO endo enden en n o",
    ]
    const failures: string[] = []
    for (const text of texts) {
      const whole = estimateTokens(text)
      for (let i = 1; i < text.length; i++) {
        if (splitsPair(text, i)) continue
        if (whole > estimateTokens(text.slice(0, i)) + estimateTokens(text.slice(i))) failures.push(`${JSON.stringify(text.slice(Math.max(0, i - 12), i))} | ${JSON.stringify(text.slice(i, i + 12))}`)
      }
    }
    expect(failures).toEqual([])
  })

  it("holds for a text cut into many blocks, as callers add them up", () => {
    const random = prng(3)
    for (const { name, text } of corpus) {
      let sum = 0
      let start = 0
      while (start < text.length) {
        let end = Math.min(text.length, start + 1 + Math.floor(random() * 400))
        if (splitsPair(text, end)) end++
        sum += estimateTokens(text.slice(start, end))
        start = end
      }
      expect(estimateTokens(text), name).toBeLessThanOrEqual(sum)
    }
  })
})

describe("headWithin and tailWithin", () => {
  it("cut exactly: the part fits, one more code point would not", () => {
    const random = prng(5)
    const failures: string[] = []
    for (const text of windows(13, 8, 3000)) {
      const total = estimateTokens(text)
      for (const budget of [Math.floor(random() * (total + 2)), Math.floor(random() * 12), total, total - 1]) {
        if (budget <= 0) continue
        const head = headWithin(text, budget)
        const tail = tailWithin(text, budget)
        if (splitsPair(text, head) || splitsPair(text, tail)) failures.push(`splits a pair at ${head}/${tail}`)
        if (estimateTokens(text.slice(0, head)) > budget) failures.push(`head ${head} of ${text.length} costs over ${budget}`)
        if (head < text.length && estimateTokens(text.slice(0, nextBoundary(text, head))) <= budget) failures.push(`head ${head} of ${text.length} stops short of ${budget}`)
        if (estimateTokens(text.slice(tail)) > budget) failures.push(`tail ${tail} of ${text.length} costs over ${budget}`)
        if (tail > 0 && estimateTokens(text.slice(previousBoundary(text, tail))) <= budget) failures.push(`tail ${tail} of ${text.length} stops short of ${budget}`)
      }
    }
    expect(failures).toEqual([])
  })

  it("cut at the largest fitting prefix (a prefix never costs less than a shorter one) and the longest fitting suffix", () => {
    const random = prng(19)
    for (const text of windows(17, 2, 400)) {
      const boundaries = [...Array(text.length + 1).keys()].filter((i) => !splitsPair(text, i))
      const prefixCosts = boundaries.map((i) => estimateTokens(text.slice(0, i)))
      const suffixCosts = boundaries.map((i) => estimateTokens(text.slice(i)))
      for (let k = 1; k < prefixCosts.length; k++) expect(prefixCosts[k]).toBeGreaterThanOrEqual(prefixCosts[k - 1]!)
      for (let round = 0; round < 3; round++) {
        const budget = 1 + Math.floor(random() * (estimateTokens(text) + 1))
        const largest = boundaries.filter((_, k) => prefixCosts[k]! <= budget).at(-1) ?? 0
        const smallest = boundaries.find((_, k) => suffixCosts[k]! <= budget) ?? text.length
        expect(headWithin(text, budget)).toBe(largest)
        expect(tailWithin(text, budget)).toBe(smallest)
      }
    }
  })

  it("keep everything for a budget the text fits in, and nothing for none", () => {
    const text = corpus.find((sample) => sample.class === "transcript")!.text
    const total = estimateTokens(text)
    expect(headWithin(text, total)).toBe(text.length)
    expect(tailWithin(text, total)).toBe(0)
    expect(headWithin(text, Infinity)).toBe(text.length)
    expect(tailWithin(text, Infinity)).toBe(0)
    for (const budget of [0, -1, -1000, Number.NaN]) {
      expect(headWithin(text, budget)).toBe(0)
      expect(tailWithin(text, budget)).toBe(text.length)
    }
    expect(headWithin(text, 7.9)).toBe(headWithin(text, 7))
    expect(tailWithin(text, 7.9)).toBe(tailWithin(text, 7))
    for (const budget of [0, 5, -2]) {
      expect(headWithin("", budget)).toBe(0)
      expect(tailWithin("", budget)).toBe(0)
    }
  })

  it("never split a surrogate pair, on emoji, flags, ZWJ sequences and lone surrogates", () => {
    const text = "👨‍👩‍👧‍👦🇺🇸👍🏽😀\ud83d🙂x\udc00𠀀𝔸".repeat(5)
    const total = estimateTokens(text)
    for (let budget = 1; budget <= total; budget++) {
      const head = headWithin(text, budget)
      const tail = tailWithin(text, budget)
      expect(splitsPair(text, head), `head at ${budget}`).toBe(false)
      expect(splitsPair(text, tail), `tail at ${budget}`).toBe(false)
      expect(estimateTokens(text.slice(0, head))).toBeLessThanOrEqual(budget)
      expect(estimateTokens(text.slice(tail))).toBeLessThanOrEqual(budget)
      if (head < text.length) expect(estimateTokens(text.slice(0, nextBoundary(text, head)))).toBeGreaterThan(budget)
      if (tail > 0) expect(estimateTokens(text.slice(previousBoundary(text, tail)))).toBeGreaterThan(budget)
    }
  })
})
