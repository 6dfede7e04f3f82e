// What the ranked search counts as one document: a block of a Markdown file (a `## Task:` entry, a
// bullet section, a paragraph), with the lines it spans so memory_read can open it and the nearest
// heading above it. Pure: the same text gives the same documents.
//
// A block is a run of non-blank lines; a heading line starts a new block and belongs to it. A
// rollout summary's header lines (session_id, cwd, project...) are no document: they repeat in
// every file and would match every search for a project's name. A block longer than MAX_LINES is
// cut into pieces. Only the nearest heading is context: the whole chain (a file's title sentence
// above every block) made each word of it match every block of the file, which cost both ranking
// and time.

export interface RankedDoc {
  /** 1-based, inclusive. */
  startLine: number
  endLine: number
  /** The nearest heading above the block, not counting its own first line. */
  context: string
  body: string
}

const MAX_LINES = 40
const HEADER_LINE = /^(session_id|updated_at|date|cwd|git_branch|project|project_key|topic|rollout_path): /
const HEADING = /^(#{1,6})\s+(.*)$/

export function splitDocuments(relative: string, text: string): RankedDoc[] {
  const lines = text.split(/\r?\n/)
  const header = headerLength(relative, lines)
  const docs: RankedDoc[] = []
  const headings: string[] = []
  let block: { start: number; lines: string[]; context: string } | undefined
  const flush = () => {
    if (!block) return
    for (let from = 0; from < block.lines.length; from += MAX_LINES) {
      const piece = block.lines.slice(from, from + MAX_LINES)
      docs.push({ startLine: block.start + from + 1, endLine: block.start + from + piece.length, context: block.context, body: piece.join("\n") })
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
      flush()
      continue
    }
    if (!block) block = { start: i, lines: [], context: nearest(headings) }
    block.lines.push(line)
  }
  flush()
  return docs
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
