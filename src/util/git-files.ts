// Git's metadata read without git (HEAD, `.git` files, commondir, config): bounded, non-blocking
// and fail-open, so a FIFO or a huge file planted in a session's folder costs nothing, and no git
// process, configuration or hook runs on the write path.
import fs from "node:fs"
import path from "node:path"

/** At most `maxBytes` of a regular file, or undefined (absent, not a file, unreadable). */
export function readSmall(file: string, maxBytes = 4_096): string | undefined {
  let fd: number | undefined
  try {
    // Non-blocking: a FIFO planted as HEAD must not hang the write path.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    if (!fs.fstatSync(fd).isFile()) return undefined
    const buffer = Buffer.alloc(maxBytes)
    const length = fs.readSync(fd, buffer, 0, maxBytes, 0)
    return buffer.toString("utf8", 0, length)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeQuietly(fd)
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd)
  } catch {
    // Nothing was written; a failed close loses nothing.
  }
}

/** What the first `.git` walking up from a folder is: git's folder, or a `gitdir:` file's target. */
export interface GitEntry {
  kind: "folder" | "link"
  /** Git's folder: `<checkout>/.git`, or the folder the link names. */
  gitDir: string
  /** The folder holding the `.git`. */
  checkout: string
}

/**
 * The first `.git` found walking up from `start` to the filesystem root: a folder, or a file
 * `gitdir: <path>` (a worktree or a submodule; a relative path is relative to the file's folder).
 * Undefined when there is none, or the first one is neither (the walk stops there).
 */
export function findGitEntry(start: string): GitEntry | undefined {
  for (let dir = path.resolve(start); ; ) {
    const dotGit = path.join(dir, ".git")
    const stat = fs.statSync(dotGit, { throwIfNoEntry: false })
    if (stat?.isDirectory()) return { kind: "folder", gitDir: dotGit, checkout: dir }
    if (stat?.isFile()) {
      const gitdir = /^gitdir:(.*)$/m.exec(readSmall(dotGit) ?? "")?.[1]?.trim()
      return gitdir ? { kind: "link", gitDir: path.resolve(dir, gitdir), checkout: dir } : undefined
    }
    if (stat) return undefined
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}
