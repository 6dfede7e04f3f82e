// Empties the memory folder for a reset: every entry, `.git` included, so nothing deleted lingers
// in history. Symlinks are removed as links, never followed.
import fs from "node:fs"
import path from "node:path"

export function clearFolder(root: string): number {
  const stat = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!stat) return 0
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`memory folder ${root} is not a plain folder; not clearing it`)
  const entries = fs.readdirSync(root)
  for (const entry of entries) fs.rmSync(path.join(root, entry), { recursive: true, force: true })
  return entries.length
}
