// The memory summary as the read path sees it: one lstat per turn, and a re-read only when the
// file's identity (inode, size, mtime) changes or the cache is invalidated. A summary too large to
// read whole (a runaway consolidation, a pasted log) is read by its ends: only the head and tail the
// 2,500-token middle cut keeps. Invalid UTF-8 is decoded with replacement characters, never thrown.
import fs from "node:fs"
import { READ_PATH } from "../constants.js"
import { redactText } from "../redact/redact.js"
import { cutMiddleOfTextEnds, endsCovered } from "../util/middle-cut.js"
import { estimateTokens, truncateMiddle } from "../util/tokens.js"

export type SummaryRead =
  /**
   * `text` is trimmed; `cut` says it is already the middle cut of a larger file, exactly what
   * truncateMiddle(whole text, READ_PATH.SUMMARY_TOKEN_LIMIT) gives for valid UTF-8.
   */
  | { kind: "present"; text: string; cut?: true }
  | { kind: "absent" }
  | { kind: "refused"; reason: string }

interface Identity {
  ino: number
  size: number
  mtimeMs: number
}

const ABSENT: SummaryRead = Object.freeze({ kind: "absent" })
/** Larger summaries are read by their ends: far above the 10 KB injected, so a sane one is read whole. */
const WHOLE_READ_MAX_BYTES = 1024 * 1024
/** The first window read at each end: half of 2,500 tokens of prose is some 6 KB; a window is widened while it holds too few. */
const FIRST_WINDOW_BYTES = 16 * 1024

export class SummaryFile {
  private identity: Identity | undefined
  private current: SummaryRead | undefined

  constructor(
    private readonly root: string,
    private readonly file: string,
    /** Called once per refusal, not once per turn. */
    private readonly onRefuse: (reason: string) => void,
    /** Called once per version of a summary too large to read whole. */
    private readonly onCapped: (notice: string) => void = onRefuse,
  ) {}

  read(): SummaryRead {
    const stat = fs.lstatSync(this.file, { throwIfNoEntry: false })
    if (!stat) {
      this.identity = undefined
      this.current = ABSENT
      return ABSENT
    }
    const cached = this.identity
    if (cached && this.current && cached.ino === stat.ino && cached.size === stat.size && cached.mtimeMs === stat.mtimeMs) {
      return this.current
    }
    const loaded = this.load(stat)
    this.identity = { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs }
    this.current = loaded
    if (this.current.kind === "refused") this.onRefuse(this.current.reason)
    return this.current
  }

  /** Forget the cached text, for when the plugin itself rewrote the summary. */
  invalidate(): void {
    this.identity = undefined
    this.current = undefined
  }

  private load(stat: fs.Stats): SummaryRead {
    if (stat.isSymbolicLink()) return { kind: "refused", reason: `memory summary ${this.file} is a symlink; not injected` }
    if (!stat.isFile()) return { kind: "refused", reason: `memory summary ${this.file} is not a regular file; not injected` }
    const root = fs.lstatSync(this.root, { throwIfNoEntry: false })
    if (root?.isSymbolicLink()) return { kind: "refused", reason: `memory folder ${this.root} is a symlink; not injected` }
    const read = readNoFollow(this.file, stat)
    if (read.cut) {
      this.onCapped(
        `memory summary ${this.file} is ${read.size} bytes; only its first and last bytes were read for the ${READ_PATH.SUMMARY_TOKEN_LIMIT}-token summary`,
      )
    }
    if (!read.text) return ABSENT
    // What the tools quote is redacted (backend/search.ts); the block quotes the summary, so it is too.
    const text = redactText(read.text)
    return read.cut ? { kind: "present", text, cut: true } : { kind: "present", text }
  }
}

/**
 * Reads the trimmed summary, refusing the file if it was swapped for a symlink or another file
 * since `expected` was taken. A file over WHOLE_READ_MAX_BYTES comes back already cut.
 */
function readNoFollow(file: string, expected: fs.Stats): { text: string; cut: boolean; size: number } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0))
  try {
    const opened = fs.fstatSync(fd)
    if (opened.ino !== expected.ino || opened.dev !== expected.dev) throw new Error(`memory summary ${file} changed while it was opened`)
    if (opened.size <= WHOLE_READ_MAX_BYTES) return { text: fs.readFileSync(fd, "utf8").trim(), cut: false, size: opened.size }
    return { ...readEnds(fd, opened.size), size: opened.size }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The trimmed text's middle cut, from windows at both ends of the file. Whitespace the trim drops
 * is measured inside the windows; a window that is nearly all whitespace, or holds too few tokens
 * for its half of the cut, is widened and read again. The marker's count comes from the file's byte
 * length, so invalid UTF-8 cut from the middle (which a whole read would replace with 3-byte
 * characters) can shift it slightly; the kept text cannot.
 */
function readEnds(fd: number, size: number): { text: string; cut: boolean } {
  const limit = READ_PATH.SUMMARY_TOKEN_LIMIT
  const cutWhole = (text: string) => (estimateTokens(text) > limit ? { text: truncateMiddle(text, limit), cut: true } : { text, cut: false })
  for (let window = FIRST_WINDOW_BYTES; ; window *= 4) {
    const whole = window >= size
    const head = readAt(fd, 0, Math.min(window, size))
    const tail = whole ? head : readAt(fd, size - window, window)
    // Ends mostly whitespace: the file has been read whole after all; cut what it holds.
    if (whole) return cutWhole(head.toString("utf8").trim())
    const headText = head.toString("utf8")
    const tailText = tail.toString("utf8")
    // Whitespace is valid UTF-8, so re-encoding what the trim removed gives its length in the file.
    const leading = Buffer.byteLength(headText.slice(0, headText.length - headText.trimStart().length))
    const trailing = Buffer.byteLength(tailText.slice(tailText.trimEnd().length))
    const total = size - leading - trailing
    // Overlapping windows of a file of whitespace can count some twice: total is then below zero.
    if (total <= WHOLE_READ_MAX_BYTES) return total > 0 ? cutWhole(readAt(fd, leading, total).toString("utf8").trim()) : { text: "", cut: false }
    const contentHead = head.subarray(leading).toString("utf8")
    const contentTail = tail.subarray(0, tail.length - trailing).toString("utf8")
    if (endsCovered(contentHead, contentTail, limit, total)) return { text: cutMiddleOfTextEnds(contentHead, contentTail, total, limit), cut: true }
  }
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length)
  let filled = 0
  while (filled < length) {
    const read = fs.readSync(fd, buffer, filled, length - filled, position + filled)
    if (read === 0) break
    filled += read
  }
  return buffer.subarray(0, filled)
}
