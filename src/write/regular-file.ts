// Reading and replacing one file of the memory folder without following a symlink. Kept apart
// from git-baseline.ts, so the workspace can use files without loading the git library.
import fs from "node:fs"
import path from "node:path"

/**
 * A regular file's bytes, or undefined when it is gone or no longer a regular file. The open
 * refuses a symlink swapped in after the walk, and O_NONBLOCK keeps a swapped-in FIFO from hanging.
 */
export function readRegularFile(absolute: string): Buffer | undefined {
  let fd: number
  try {
    fd = fs.openSync(absolute, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0))
  } catch (error) {
    if (["ENOENT", "ELOOP", "ENOTDIR", "ENXIO"].includes((error as NodeJS.ErrnoException).code ?? "")) return undefined
    throw error
  }
  try {
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd) : undefined
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Writes `bytes` beside `file` and renames it over: a reader never sees half a file, and a symlink
 * in the way is replaced rather than followed. The dot-name keeps a leftover out of the workspace
 * walk and the diff.
 */
export function replaceFile(file: string, bytes: Buffer): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  fs.rmSync(temporary, { force: true })
  try {
    fs.writeFileSync(temporary, bytes, { flag: "wx" })
    fs.renameSync(temporary, file)
  } catch (error) {
    // A full disk can fail the write halfway: the partial copy goes, the file stays as it was.
    fs.rmSync(temporary, { force: true })
    throw error
  }
}
