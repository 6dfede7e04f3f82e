// memory_read: a window of lines from one file, capped in bytes so that a large file cannot flood
// the model's context. The cut falls on a line boundary when at least one line fits, and the note
// says where to continue. What it returns is redacted as memory_search shows it (search.ts).
import type fs from "node:fs"
import { redactLines, redactText } from "../redact/redact.js"
import { MemoryError } from "./errors.js"
import type { ReadRequest, ReadResult } from "./requests.js"
import { readFileNoFollow, resolveMemoryEntry } from "./safe-path.js"
import { wholeNumber } from "./search-args.js"
import { SEARCH_MAX_FILE_BYTES, type FileCache } from "./search-cache.js"
import { lineStarts, lineText } from "./search-lines.js"

/** The whole `content` of one read, in UTF-8 bytes. */
export const READ_MAX_BYTES = 256 * 1024
/** Larger files are not loaded at all: decoding them would cost far more than the window shown. */
export const READ_MAX_FILE_BYTES = 64 * 1024 * 1024

export function readMemoryFile(root: string, request: ReadRequest, cache?: FileCache): ReadResult {
  const offset = wholeNumber(request.line_offset, "line_offset", { min: 1, max: Number.POSITIVE_INFINITY, fallback: 1 })
  const maxLines = wholeNumber(request.max_lines, "max_lines", { min: 1, max: Number.POSITIVE_INFINITY, fallback: Number.POSITIVE_INFINITY })
  const entry = resolveMemoryEntry(root, request.path)
  const label = entry.relative === "" ? "The memory folder" : `"${entry.relative}"`
  if (entry.stat.isDirectory()) {
    throw new MemoryError("invalid_argument", `${label} is a folder; call memory_list with this path to see its files, then memory_read one of them.`)
  }
  if (!entry.stat.isFile()) throw new MemoryError("invalid_argument", `${label} is not a regular file and cannot be read.`)
  if (entry.stat.size > READ_MAX_FILE_BYTES) {
    throw new MemoryError("io", `${label} is ${entry.stat.size} bytes, more than memory_read loads (${READ_MAX_FILE_BYTES}); use memory_search to find lines in it.`)
  }
  return { path: redactText(entry.relative), ...selectLines(readClean(entry, cache), offset, maxLines, READ_MAX_BYTES) }
}

/**
 * The file's text redacted with every line on its number, as memory_search matches and shows it:
 * through the search cache when one is given (a file read again is not redacted again).
 */
function readClean(entry: { relative: string; absolute: string; stat: fs.Stats }, cache: FileCache | undefined): string {
  if (cache && entry.stat.size <= SEARCH_MAX_FILE_BYTES) {
    const clean = cache.clean(cache.load(entry.relative, entry.absolute, entry.stat))
    if (clean?.original) return clean.original.text
  }
  // Invalid UTF-8 becomes U+FFFD rather than an error: a stray binary file must not break reading.
  return redactLines(readFileNoFollow(entry.absolute, entry.relative, entry.stat).bytes.toString("utf8"))
}

export type LineWindow = Omit<ReadResult, "path">

/** Lines `offset`.. of `text`, at most `maxLines` of them and `maxBytes` of UTF-8 in all. */
export function selectLines(text: string, offset: number, maxLines: number, maxBytes: number): LineWindow {
  const starts = lineStarts(text)
  const total = starts.length
  if (offset > Math.max(total, 1)) {
    const has = total === 0 ? "is empty" : `has ${total} line${total === 1 ? "" : "s"}`
    throw new MemoryError("invalid_argument", `line_offset ${offset} is past the end: the file ${has}. Pass a line_offset from 1 to ${Math.max(total, 1)}.`)
  }
  const last = Math.min(total, offset - 1 + maxLines)
  const lines: string[] = []
  let bytes = 0
  for (let line = offset; line <= last; line++) {
    const textOfLine = lineText(text, starts, line - 1)
    const cost = Buffer.byteLength(textOfLine) + (lines.length > 0 ? 1 : 0)
    if (bytes + cost > maxBytes) {
      if (lines.length > 0) return cutAtLine(lines, offset, line - 1, total, maxBytes)
      return cutInLine(textOfLine, offset, total, maxBytes)
    }
    lines.push(textOfLine)
    bytes += cost
  }
  return { start_line: offset, end_line: offset + lines.length - 1, total_lines: total, content: lines.join("\n"), truncated: false }
}

function cutAtLine(lines: string[], start: number, end: number, total: number, maxBytes: number): LineWindow {
  return {
    start_line: start,
    end_line: end,
    total_lines: total,
    content: lines.join("\n"),
    truncated: true,
    note: `Output reached the ${kib(maxBytes)} limit: it shows lines ${start} to ${end} of ${total}. To continue, call memory_read again with line_offset ${end + 1}.`,
  }
}

/** A single line longer than the whole budget: its head, cut on a character boundary. */
function cutInLine(line: string, start: number, total: number, maxBytes: number): LineWindow {
  const buffer = new Uint8Array(maxBytes)
  // encodeInto writes whole characters only, so `read` never ends inside a character.
  const { read, written } = new TextEncoder().encodeInto(line, buffer)
  const next = start < total ? `To skip the rest of it, call memory_read again with line_offset ${start + 1}.` : "It is the last line of the file."
  return {
    start_line: start,
    end_line: start,
    total_lines: total,
    content: line.slice(0, read),
    truncated: true,
    note: `Line ${start} alone is longer than the ${kib(maxBytes)} limit, so only its first ${written} bytes are shown. ${next}`,
  }
}

function kib(bytes: number): string {
  return `${bytes / 1024} KiB`
}
