// What the ranked search counts as one document: a block of a Markdown file (a `## Task:` entry, a
// bullet section, a paragraph, a rollout summary's section), with the lines it spans so
// memory_read can open it and the nearest heading above it. Pure: the same text gives the same documents.
//
// A block is a run of non-blank lines; a heading line starts a new block and belongs to it. A
// rollout summary's header lines (session_id, cwd, project...) are no document: they repeat in
// every file and would match every search for a project's name. A block longer than MAX_LINES is
// cut into pieces. Only the nearest heading is context: the whole chain (a file's title sentence
// above every block) made each word of it match every block of the file, which cost both ranking
// and time.
//
// A rollout summary (and a record's summary, not consolidated yet) is cut by section instead, and
// its opening sentence, which restates what the user asked, is the context of every section and
// no document of its own (unless the file has no section): as one, short and in the question's
// words, it ranked above the section holding the answer (D27). A summary has a few sections, so
// the opening above each costs little, unlike a title above every block of MEMORY.md.

export interface RankedDoc {
  /** 1-based, inclusive. */
  startLine: number
  endLine: number
  /** The nearest heading above the block, not counting its own first line; in a rollout summary's section, its opening before it. */
  context: string
  body: string
}

const MAX_LINES = 40
const HEADER_LINE = /^(session_id|updated_at|date|cwd|git_branch|project|project_key|topic|rollout_path): /
const HEADING = /^(#{1,6})\s+(.*)$/

export function splitDocuments(relative: string, text: string): RankedDoc[] {
  const lines = text.split(/\r?\n/)
  const header = headerLength(relative, lines)
  const summary = isSummary(relative)
  const docs: RankedDoc[] = []
  const headings: string[] = []
  let block: { start: number; lines: string[]; context: string } | undefined
  const flush = () => {
    if (!block) return
    for (let from = 0; from < block.lines.length; from += MAX_LINES) {
      // A summary's section holds blank lines: no piece of it starts or ends on one.
      let first = from
      let last = Math.min(from + MAX_LINES, block.lines.length) - 1
      while (first <= last && block.lines[first]!.trim() === "") first++
      while (last >= first && block.lines[last]!.trim() === "") last--
      if (first > last) continue
      docs.push({ startLine: block.start + first + 1, endLine: block.start + last + 1, context: block.context, body: block.lines.slice(first, last + 1).join("\n") })
    }
    block = undefined
  }
  let fence = false
  for (let i = header; i < lines.length; i++) {
    const line = lines[i]!
    if (/^\s*(```|~~~)/.test(line)) fence = !fence
    const heading = fence ? undefined : HEADING.exec(line)
    if (heading) {
      flush()
      const level = heading[1]!.length
      headings.length = Math.min(headings.length, level - 1)
      while (headings.length < level - 1) headings.push("")
      block = { start: i, lines: [line], context: nearest(headings) }
      headings.push(heading[2]!.trim())
      continue
    }
    if (line.trim() === "" && !fence) {
      if (summary && block && headings.length > 0) block.lines.push(line)
      else flush()
      continue
    }
    if (!block) block = { start: i, lines: [], context: nearest(headings) }
    block.lines.push(line)
  }
  flush()
  return summary ? withOpening(docs) : docs
}

/** A record's summary is split under its field's name (ranked-search.ts), a file under its path. */
function isSummary(relative: string): boolean {
  return relative.startsWith("rollout_summaries/") || relative === "rollout_summary"
}

/**
 * A summary's documents with its opening block moved into the context of every document from the
 * first section on (see the header); what comes between (a `Context:` paragraph) stays as it was.
 */
function withOpening(docs: RankedDoc[]): RankedDoc[] {
  const sections = docs.findIndex((doc) => HEADING.test(firstLine(doc.body)))
  if (sections < 1) return docs
  const opening = docs[0]!.body
  return [...docs.slice(1, sections), ...docs.slice(sections).map((doc) => ({ ...doc, context: doc.context ? `${opening}\n${doc.context}` : opening }))]
}

function firstLine(text: string): string {
  const end = text.indexOf("\n")
  return end === -1 ? text : text.slice(0, end)
}

function nearest(headings: readonly string[]): string {
  for (let i = headings.length - 1; i >= 0; i--) if (headings[i]) return headings[i]!
  return ""
}

/** How many lines at the top are a rollout summary's header (and the blank line after it). */
function headerLength(relative: string, lines: readonly string[]): number {
  if (!relative.startsWith("rollout_summaries/")) return 0
  let n = 0
  while (n < lines.length && HEADER_LINE.test(lines[n]!)) n++
  return n
}
