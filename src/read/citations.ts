// The <memory-citation> block the model appends when memory shaped its reply: parsed into what
// was cited, and stripped so that neither the UI nor the stored history shows it.
//
//   <memory-citation>
//   <citation_entries>
//   MEMORY.md:12-19|note=[why it helped]
//   </citation_entries>
//   <session_ids>
//   ses_abc
//   </session_ids>
//   </memory-citation>
//
// Two steps, as in Codex: stripCitationBlocks takes the blocks out of the text (its
// strip_citations) and parseCitationBodies reads what they say (its parse_memory_citation).

export interface CitationEntry {
  path: string
  start: number
  end: number
  note: string
}

export interface Citation {
  entries: CitationEntry[]
  sessionIds: string[]
}

export interface ParsedText {
  /** The text without any citation block. */
  text: string
  /** Every block found, merged: entries in order, session ids unique; undefined when none says anything. */
  citation: Citation | undefined
}

export interface StrippedText {
  /** The text outside the blocks. */
  text: string
  /** The inside of each block, in order. */
  bodies: string[]
}

const OPEN = "<memory-citation>"
const CLOSE = "</memory-citation>"
const NOTE = "|note=["
/** Case-insensitive without a lowercased copy of the text (not global: no lastIndex state). */
const OPEN_ANY_CASE = /<memory-citation>/i
// A record key: a session id, or a segment of one (`<id>#<n>` or `<id>#<n>.<part>`).
const SESSION_ID = /^[A-Za-z0-9_-]{3,128}(?:#\d{1,6}(?:\.\d{1,6})?)?$/
/** Where the cited sessions are listed: ours first, then Codex's `rollout_ids` and its legacy `thread_ids`. */
const ID_SECTIONS = ["session_ids", "rollout_ids", "thread_ids"] as const
/** Line numbers are u32 in Codex's MemoryCitationEntry. */
const MAX_LINE = 0xffff_ffff

/** Cheap test used on hot paths before any parsing. */
export function hasCitation(text: string): boolean {
  return OPEN_ANY_CASE.test(text)
}

/** Removes every citation block and parses them (the two steps below). */
export function extractCitations(text: string): ParsedText {
  if (!hasCitation(text)) return { text, citation: undefined }
  const stripped = stripCitationBlocks(text)
  return { text: stripped.text, citation: parseCitationBodies(stripped.bodies) }
}

/**
 * Takes every block out of `text`, leaving the text around it exactly as it was, as Codex's
 * stream parser does: matching is literal (any case here) and not nested, and a block left open
 * at the end (a reply cut off mid-block) runs to the end. One addition: a block that ends the
 * text also takes the whitespace before it, since here the result replaces the stored reply.
 */
export function stripCitationBlocks(text: string): StrippedText {
  const lower = text.toLowerCase()
  const bodies: string[] = []
  const pieces: string[] = []
  let at = 0
  for (;;) {
    const open = lower.indexOf(OPEN, at)
    if (open < 0) break
    pieces.push(text.slice(at, open))
    const close = lower.indexOf(CLOSE, open + OPEN.length)
    const end = close < 0 ? text.length : close
    bodies.push(text.slice(open + OPEN.length, end))
    at = close < 0 ? text.length : close + CLOSE.length
  }
  const rest = text.slice(at)
  if (bodies.length > 0 && rest.trim() === "") return { text: pieces.join("").trimEnd(), bodies }
  return { text: pieces.join("") + rest, bodies }
}

/**
 * What the blocks cite: entry lines of each `<citation_entries>` and the ids of its id section,
 * merged in order with ids kept once. Undefined when no block names an entry or an id.
 */
export function parseCitationBodies(bodies: readonly string[]): Citation | undefined {
  const entries: CitationEntry[] = []
  const ids = new Set<string>()
  for (const body of bodies) {
    for (const line of lines(section(body, "citation_entries"))) {
      const entry = parseEntry(line)
      if (entry) entries.push(entry)
    }
    const idSection = ID_SECTIONS.map((name) => section(body, name)).find((found) => found !== undefined)
    // OpenCode ids are not UUIDs, so their shape is all that can be checked (Codex keeps valid ThreadIds).
    for (const id of lines(idSection)) if (SESSION_ID.test(id)) ids.add(id)
  }
  if (entries.length === 0 && ids.size === 0) return undefined
  return { entries, sessionIds: [...ids] }
}

/**
 * The text between <name> and </name>, or undefined when the section is absent. A section whose
 * closing tag is missing runs to the end of the body, so a reply cut off inside its block still
 * counts the entry lines it completed.
 */
function section(body: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([\\s\\S]*?)(?:</${name}>|$)`, "i").exec(body)
  return match?.[1]
}

function lines(text: string | undefined): string[] {
  return (text ?? "").split("\n").map((line) => line.trim()).filter(Boolean)
}

/**
 * `path:start-end|note=[text]`, read as Codex reads it: split at the last `|note=[` (the note
 * must end the line with `]`), then at the last `:`, then at the first `-`, each part trimmed.
 * Stricter than Codex: a range must name lines (start 1 or more, end not before start) of a
 * non-empty path, since the range is kept and shown as the lines that were used.
 */
export function parseEntry(line: string): CitationEntry | undefined {
  const text = line.trim()
  const noteAt = text.lastIndexOf(NOTE)
  if (noteAt < 0 || !text.endsWith("]")) return undefined
  const note = text.slice(noteAt + NOTE.length, -1).trim()
  const location = text.slice(0, noteAt)
  const colon = location.lastIndexOf(":")
  if (colon < 0) return undefined
  const range = location.slice(colon + 1)
  const dash = range.indexOf("-")
  if (dash < 0) return undefined
  const start = lineNumber(range.slice(0, dash))
  const end = lineNumber(range.slice(dash + 1))
  const path = location.slice(0, colon).trim()
  if (start === undefined || end === undefined || !path || start < 1 || end < start) return undefined
  return { path, start, end, note }
}

/** An unsigned 32-bit number as Rust's parse reads one: digits with an optional `+`, trimmed. */
function lineNumber(text: string): number | undefined {
  const digits = text.trim()
  if (!/^\+?\d+$/.test(digits)) return undefined
  const value = Number(digits)
  return value <= MAX_LINE ? value : undefined
}
