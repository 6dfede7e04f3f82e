// Symlinks in the memory folder are never followed, and a consolidation never leaves one behind:
// every symlink outside `.git` is deleted when a run is validated or has failed (Codex does the
// same since #39205), and the run that found one fails, naming it.
import fs from "node:fs"
import path from "node:path"

/** Deletes every symlink below `root` (not inside `.git`); returns their paths, sorted. */
export function removeSymlinks(root: string): string[] {
  const removed: string[] = []
  const folders = [""]
  for (let relative = folders.pop(); relative !== undefined; relative = folders.pop()) {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = relative ? `${relative}/${entry.name}` : entry.name
      if (child === ".git") continue
      if (entry.isSymbolicLink()) {
        fs.unlinkSync(path.join(root, child))
        removed.push(child)
      } else if (entry.isDirectory()) folders.push(child)
    }
  }
  return removed.sort()
}

/** Why a run that left symlinks is invalid, or undefined when it left none. */
export function symlinkProblem(root: string): string | undefined {
  const removed = removeSymlinks(root)
  if (!removed.length) return undefined
  const shown = removed.slice(0, 10).join(", ") + (removed.length > 10 ? `, and ${removed.length - 10} more` : "")
  return `removed ${removed.length} symlink${removed.length > 1 ? "s" : ""} from the memory folder: ${shown}`
}
