// The line model memory_read and memory_search share, so their line numbers always agree: lines
// are separated by "\n", a final "\n" does not open an empty last line, and a "\r" before the
// "\n" is not part of a line's text. Offsets are found on whole-file strings and mapped to lines
// through the table of line starts, instead of splitting every file into lines per query.

const NEWLINE = 10
const CARRIAGE_RETURN = 13

/** The offset at which each line starts; its length is the number of lines (0 for ""). */
export function lineStarts(text: string): Uint32Array {
  let count = text.length > 0 ? 1 : 0
  for (let at = text.indexOf("\n"); at !== -1 && at + 1 < text.length; at = text.indexOf("\n", at + 1)) count++
  const starts = new Uint32Array(count)
  let line = 1
  for (let at = text.indexOf("\n"); at !== -1 && at + 1 < text.length; at = text.indexOf("\n", at + 1)) starts[line++] = at + 1
  return starts
}

/** The 0-based line holding `offset`. */
export function lineIndexAt(starts: Uint32Array, offset: number): number {
  let low = 0
  let high = starts.length - 1
  while (low < high) {
    const mid = (low + high + 1) >>> 1
    if (starts[mid]! <= offset) low = mid
    else high = mid - 1
  }
  return low
}

/** The text of the 0-based line `index`, without its line ending. */
export function lineText(text: string, starts: Uint32Array, index: number): string {
  const start = starts[index]!
  let end = index + 1 < starts.length ? starts[index + 1]! - 1 : text.length
  if (end > start && text.charCodeAt(end - 1) === NEWLINE && index + 1 === starts.length) end--
  if (end > start && text.charCodeAt(end - 1) === CARRIAGE_RETURN) end--
  return text.slice(start, end)
}
