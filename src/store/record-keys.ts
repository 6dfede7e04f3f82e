// Record keys. A session's record is keyed by its id; a segment a compaction closed is keyed
// `<session>#<n>` (`<session>#<n>.<part>` when packed into parts), see src/write/phase1/segments.ts.
// OpenCode's ids never contain the separator, so the session of any key is what precedes it.

export const SEGMENT_SEPARATOR = "#"

export function segmentKey(sessionId: string, ordinal: number, part?: number): string {
  return `${sessionId}${SEGMENT_SEPARATOR}${ordinal}${part === undefined ? "" : `.${part}`}`
}

/** The session a record key belongs to: the key itself for a whole session or its open segment. */
export function sessionOfKey(key: string): string {
  const at = key.indexOf(SEGMENT_SEPARATOR)
  return at < 0 ? key : key.slice(0, at)
}

/** SQL true when the column holds the session's own key or one of its segments' ($id binds the session). */
export function keyOfSession(column: string): string {
  return `(${column} = $id OR substr(${column}, 1, length($id) + 1) = $id || '${SEGMENT_SEPARATOR}')`
}

/** SQL for the session part of a key column (for comparing with session ids). */
export function sessionOfColumn(column: string): string {
  return `substr(${column}, 1, instr(${column} || '${SEGMENT_SEPARATOR}', '${SEGMENT_SEPARATOR}') - 1)`
}
