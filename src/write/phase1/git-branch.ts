// The git branch of a session's folder, for V2's extraction prompt (a hint, never a fact to rely
// on). Read from the repository's HEAD file directly: running git would put a process, its
// configuration and its hooks on the write path for one line of text. Bounded and fail-open:
// any doubt gives undefined.
import path from "node:path"
import { findGitEntry, readSmall } from "../../util/git-files.js"

const MAX_BRANCH_CHARS = 200
const HEADS = "refs/heads/"

/**
 * The branch checked out in the repository that contains `directory`: the first `.git` found
 * walking up to the filesystem root decides. `.git` is a folder holding HEAD, or a file
 * `gitdir: <path>` (a worktree or a submodule; a relative path is relative to the file's folder)
 * naming the folder that holds HEAD. A detached HEAD gives `detached at <12 hex digits>`.
 */
export function gitBranch(directory: string): string | undefined {
  try {
    const entry = findGitEntry(directory)
    // One indirection only: the folder a `gitdir:` file names must hold HEAD itself.
    return entry ? parseHead(readSmall(path.join(entry.gitDir, "HEAD"))) : undefined
  } catch {
    return undefined
  }
}

function parseHead(head: string | undefined): string | undefined {
  const line = head?.split(/\r?\n/, 1)[0]?.trim()
  if (!line) return undefined
  const ref = /^ref:[ \t]*(\S+)$/.exec(line)?.[1]
  if (ref) {
    const name = ref.startsWith(HEADS) ? ref.slice(HEADS.length) : ref
    return name && name.length <= MAX_BRANCH_CHARS && !/[\u0000-\u001f\u007f]/.test(name) ? name : undefined
  }
  // SHA-1 or SHA-256 object ids.
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(line)) return `detached at ${line.slice(0, 12).toLowerCase()}`
  return undefined
}
