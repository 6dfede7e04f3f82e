// A bit set of the character triples that occur in a text, built once per cached variant. A query
// can occur in a file only if each of its triples does, so a file whose set lacks one of them is
// skipped without an indexOf pass. Every triple of the text sets its bit, so there are no false
// negatives and results are exactly those of scanning every file; a false positive only costs the
// scan it would have cost anyway. Scanning every cached text costs more per query than the
// per-file lstat on a folder of a few thousand summaries (scripts/bench/search.ts), and most
// queries name a phrase that only a few files hold.
//
// The set has about two bits per character of text (512 to 65,536), which keeps it sparse enough
// to be selective on summary-sized files; a large file's set fills up and the file is just scanned.
const MIN_BITS = 512
const MAX_BITS = 65_536

/** Bit set of the hashed character triples of `text`. */
export function tripleFilter(text: string): Uint32Array {
  let bits = MIN_BITS
  while (bits < MAX_BITS && bits < text.length * 2) bits *= 2
  const filter = new Uint32Array(bits / 32)
  const shift = shiftFor(filter)
  let a = text.charCodeAt(0)
  let b = text.charCodeAt(1)
  for (let i = 2; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const bit = tripleHash(a, b, c) >>> shift
    filter[bit >>> 5]! |= 1 << (bit & 31)
    a = b
    b = c
  }
  return filter
}

/** The 32-bit hashes of `needle`'s triples; empty for a needle shorter than three units. */
export function tripleHashes(needle: string): number[] {
  const hashes = new Set<number>()
  for (let i = 2; i < needle.length; i++) hashes.add(tripleHash(needle.charCodeAt(i - 2), needle.charCodeAt(i - 1), needle.charCodeAt(i)))
  return [...hashes]
}

export function mayContain(filter: Uint32Array, hashes: readonly number[]): boolean {
  const shift = shiftFor(filter)
  for (const hash of hashes) {
    const bit = hash >>> shift
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
  }
  return true
}

/** A set of 2^k bits takes the top k bits of a hash. */
function shiftFor(filter: Uint32Array): number {
  return Math.clz32(filter.length * 32) + 1
}

function tripleHash(a: number, b: number, c: number): number {
  // Multiplicative hashing of the three UTF-16 units; callers keep the top bits, the well-mixed ones.
  return Math.imul(((a << 16) | b) ^ Math.imul(c, 0x85ebca6b), 0x9e3779b1) >>> 0
}
