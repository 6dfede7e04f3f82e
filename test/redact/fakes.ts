// Made-up secrets in the real formats, generated from a label so that every run (and the golden
// file) sees the same ones. They are built here rather than written out, so no string in the
// repository looks like a live credential to a secret scanner.

export const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
export const LOWER = "abcdefghijklmnopqrstuvwxyz"
export const DIGITS = "0123456789"
export const HEX = "0123456789abcdef"
export const ALNUM = UPPER + LOWER + DIGITS
export const URLSAFE = ALNUM + "_-"
export const BASE64 = ALNUM + "+/"

/** `length` characters of `alphabet`, the same for the same label every time. */
export function fake(label: string, alphabet: string, length: number): string {
  let state = 2166136261
  for (const char of `${label}/${length}`) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0
  let out = ""
  while (out.length < length) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    out += alphabet[(state >>> 8) % alphabet.length]
  }
  return out
}
