// The git branch of a session's folder, for V2's extraction prompt (a hint, never a fact to rely
// on). Read from the repository's HEAD file directly: running git would put a process, its
// configuration and its hooks on the write path for one line of text. Bounded and fail-open:
// any doubt gives undefined.
import fs from "node:fs"
import path from "node:path"
import { readSmall } from "../../util/read-small.js"

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
    for (let dir = path.resolve(directory); ; ) {
      const dotGit = path.join(dir, ".git")
      const stat = fs.statSync(dotGit, { throwIfNoEntry: false })
      if (stat?.isDirectory()) return parseHead(readSmall(path.join(dotGit, "HEAD")))
      if (stat?.isFile()) {
        const gitdir = /^gitdir:(.*)$/m.exec(readSmall(dotGit) ?? "")?.[1]?.trim()
        // One indirection only: the folder it names must hold HEAD itself.
        return gitdir ? parseHead(readSmall(path.join(path.resolve(dir, gitdir), "HEAD"))) : undefined
      }
      if (stat) return undefined
      const parent = path.dirname(dir)
      if (parent === dir) return undefined
      dir = parent
    }
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
