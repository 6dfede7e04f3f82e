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
  /** Every block found, merged: entries in order, session ids unique. */
  citation: Citation | undefined
}

const OPEN = "<memory-citation>"
const CLOSE = "</memory-citation>"
/** Case-insensitive without a lowercased copy of the text (not global: no lastIndex state). */
const OPEN_ANY_CASE = /<memory-citation>/i
// A record key: a session id, or a segment of one (`<id>#<n>` or `<id>#<n>.<part>`).
const SESSION_ID = /^[A-Za-z0-9_-]{3,128}(?:#\d{1,6}(?:\.\d{1,6})?)?$/

/** Cheap test used on hot paths before any parsing. */
export function hasCitation(text: string): boolean {
  return OPEN_ANY_CASE.test(text)
}

/**
 * Removes every citation block. A block left open at the end (a reply cut off mid-block) is
 * removed to the end too, so no markup survives.
 */
export function extractCitations(text: string): ParsedText {
  if (!hasCitation(text)) return { text, citation: undefined }
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
  pieces.push(text.slice(at))
  return { text: joinAroundRemovals(pieces), citation: mergeCitations(bodies.map(parseBody)) }
}

function parseBody(body: string): Citation {
  return {
    entries: section(body, "citation_entries").flatMap((line) => {
      const entry = parseEntry(line)
      return entry ? [entry] : []
    }),
    sessionIds: section(body, "session_ids").filter((id) => SESSION_ID.test(id)),
  }
}

/** The non-blank, trimmed lines between <name> and </name>, or [] when the section is absent. */
function section(body: string, name: string): string[] {
  const match = new RegExp(`<${name}>([\\s\\S]*?)(?:</${name}>|$)`, "i").exec(body)
  return (match?.[1] ?? "").split("\n").map((line) => line.trim()).filter(Boolean)
}

/** `path:start-end|note=[text]`, split at the last `|note=[` and then the last `:`, like Codex. */
export function parseEntry(line: string): CitationEntry | undefined {
  const noteAt = line.lastIndexOf("|note=[")
  const location = noteAt < 0 ? line : line.slice(0, noteAt)
  const note = noteAt < 0 ? "" : line.slice(noteAt + "|note=[".length).replace(/\]\s*$/, "")
  const colon = location.lastIndexOf(":")
  if (colon <= 0) return undefined
  const range = /^(\d+)(?:-(\d+))?$/.exec(location.slice(colon + 1).trim())
  if (!range) return undefined
  const start = Number(range[1])
  const end = Number(range[2] ?? range[1])
  const path = location.slice(0, colon).trim()
  if (!path || start < 1 || end < start) return undefined
  return { path, start, end, note: note.trim() }
}

function mergeCitations(citations: Citation[]): Citation {
  return {
    entries: citations.flatMap((c) => c.entries),
    sessionIds: [...new Set(citations.flatMap((c) => c.sessionIds))],
  }
}

/**
 * Joins the text around removed blocks: the whitespace that framed a block goes with it. A block
 * on its own lines leaves one blank line between its neighbours; a block inside a line leaves one
 * space. The rest of the reply's layout is untouched.
 */
function joinAroundRemovals(pieces: string[]): string {
  let text = pieces[0] ?? ""
  for (const piece of pieces.slice(1)) {
    const left = text.trimEnd()
    const right = piece.trimStart()
    const separator = /^[ \t]*\n/.test(piece) || /\n[ \t]*$/.test(text) ? "\n\n" : " "
    text = left && right ? left + separator + right : left || right
  }
  return text
}
