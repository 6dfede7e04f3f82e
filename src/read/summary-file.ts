// The memory summary as the read path sees it: one lstat per turn, and a re-read only when the
// file's identity (inode, size, mtime) changes or the cache is invalidated.
import fs from "node:fs"

export type SummaryRead =
  | { kind: "present"; text: string }
  | { kind: "absent" }
  | { kind: "refused"; reason: string }

interface Identity {
  ino: number
  size: number
  mtimeMs: number
}

const ABSENT: SummaryRead = Object.freeze({ kind: "absent" })

export class SummaryFile {
  private identity: Identity | undefined
  private current: SummaryRead | undefined

  constructor(
    private readonly root: string,
    private readonly file: string,
    /** Called once per refusal, not once per turn. */
    private readonly onRefuse: (reason: string) => void,
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
    const text = readNoFollow(this.file, stat).trim()
    return text ? { kind: "present", text } : ABSENT
  }
}

/** Reads a file, refusing it if it was swapped for a symlink or another file since `expected` was taken. */
function readNoFollow(file: string, expected: fs.Stats): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0))
  try {
    const opened = fs.fstatSync(fd)
    if (opened.ino !== expected.ino || opened.dev !== expected.dev) throw new Error(`memory summary ${file} changed while it was opened`)
    return fs.readFileSync(fd, "utf8")
  } finally {
    fs.closeSync(fd)
  }
}
