// Text shaping shared by the checkpoint's reducers and its view. Cuts count code points, so a cut
// never splits a surrogate pair and the same input gives the same bytes on every platform.
import { redactText } from "../redact/redact.js"

const ELLIPSIS = "…"

/** `text` if it has at most `max` code points, else its first `max - 1` code points and "…". */
export function truncateChars(text: string, max: number): string {
  const limit = Math.max(0, Math.floor(max))
  // UTF-16 length bounds the code point count from above: nothing to count.
  if (text.length <= limit) return text
  if (limit === 0) return ""
  let points = 0
  let cut = 0
  for (let index = 0; index < text.length; points++) {
    if (points === limit - 1) cut = index
    if (points === limit) return text.slice(0, cut) + ELLIPSIS
    index += text.codePointAt(index)! > 0xffff ? 2 : 1
  }
  return text
}

// Whitespace and control characters; a run holding anything but plain spaces becomes one space.
const RUNS = /[\s\x00-\x1f\x7f-\x9f]+/g
const PLAIN_SPACES = /^ +$/

/** One line: newlines, tabs and control characters collapsed to single spaces, ends trimmed. */
export function oneLine(text: string): string {
  return text.replace(RUNS, (run) => (PLAIN_SPACES.test(run) ? run : " ")).trim()
}

/** What the checkpoint stores of a text it did not write itself: redacted, then cut. */
export function storedText(text: string, max: number): string {
  // Redact before cutting: a cut could leave part of a secret the rules no longer recognise.
  return truncateChars(redactText(text), max)
}

/** Code unit order: unlike localeCompare, the same on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
