// Where the other agents keep their memory, and whether a folder of theirs is one of ours. Two
// roots overlap when they are the same folder or one holds the other, judged by device and inode
// with symlinks resolved, so no spelling of a path (a symlink, a bind mount seen twice) hides it.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

/** The `codex_home` option, else CODEX_HOME, else ~/.codex (Codex's own rule). */
export function codexHome(option: string | undefined, env: Readonly<Record<string, string | undefined>>, homedir = os.homedir()): string {
  const chosen = option?.trim() || env.CODEX_HOME?.trim() || path.join(homedir, ".codex")
  return expand(chosen, homedir)
}

/** The `claude_home` option, else ~/.claude. */
export function claudeHome(option: string | undefined, homedir = os.homedir()): string {
  return expand(option?.trim() || path.join(homedir, ".claude"), homedir)
}

/**
 * True when `a` and `b` are the same folder or one contains the other. Folders that do not exist
 * yet are compared by their nearest existing ancestor and the rest of the path.
 */
export function overlaps(a: string, b: string): boolean {
  const left = identify(a)
  const right = identify(b)
  return contains(left, right) || contains(right, left)
}

interface Identified {
  /** Device and inode of every existing folder from the root down to the path, outermost first. */
  chain: Array<{ dev: number; ino: number }>
  /** Path parts below the deepest existing folder. */
  rest: string[]
}

function identify(target: string): Identified {
  let existing = path.resolve(target)
  const rest: string[] = []
  while (!fs.existsSync(existing)) {
    const parent = path.dirname(existing)
    if (parent === existing) break
    rest.unshift(path.basename(existing))
    existing = parent
  }
  const real = fs.realpathSync(existing)
  const chain: Array<{ dev: number; ino: number }> = []
  for (let current = real; ; current = path.dirname(current)) {
    const stat = fs.statSync(current)
    chain.unshift({ dev: stat.dev, ino: stat.ino })
    if (path.dirname(current) === current) break
  }
  return { chain, rest }
}

/** Whether `inner` lies in (or is) `outer`. */
function contains(outer: Identified, inner: Identified): boolean {
  const last = outer.chain.at(-1)!
  const at = inner.chain.findIndex((entry) => entry.dev === last.dev && entry.ino === last.ino)
  if (at < 0) return false
  // Same existing folder: compare what lies below it.
  if (at === inner.chain.length - 1) return outer.rest.every((part, i) => inner.rest[i] === part)
  return outer.rest.length === 0
}

function expand(value: string, homedir: string): string {
  if (value === "~") return homedir
  if (value.startsWith("~/")) return path.join(homedir, value.slice(2))
  return path.resolve(value)
}
