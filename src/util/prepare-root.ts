// A memory folder is created when missing and refused when it is a symlink: a link could point
// the helpers' sandbox, and every write, anywhere.
import fs from "node:fs"

export function prepareRoot(root: string): void {
  const stat = fs.lstatSync(root, { throwIfNoEntry: false })
  if (stat?.isSymbolicLink()) throw new Error(`memory folder ${root} is a symlink; refusing to use it`)
  if (!stat) fs.mkdirSync(root, { recursive: true })
}
