// Reading, replacing and creating one file of the memory folder without following a symlink, and
// without a reader ever seeing half a file: every write goes to a temporary file first, so a full
// disk (ENOSPC halfway through) leaves the old file, or no file, never a truncated one. Kept apart
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
export function replaceFile(file: string, bytes: Buffer | string): void {
  const temporary = temporaryFor(file)
  try {
    fs.writeFileSync(temporary, bytes, { flag: "wx" })
    fs.renameSync(temporary, file)
  } catch (error) {
    // A full disk can fail the write halfway: the partial copy goes, the file stays as it was.
    fs.rmSync(temporary, { force: true })
    throw error
  }
}

/**
 * Creates `file` with `bytes`, failing with EEXIST when anything (a file, a symlink) is already
 * there. Written beside it first and then hard-linked into place, which is atomic and refuses an
 * existing name, so the file appears whole or not at all.
 */
export function createFile(file: string, bytes: Buffer | string): void {
  const temporary = temporaryFor(file)
  try {
    fs.writeFileSync(temporary, bytes, { flag: "wx" })
    fs.linkSync(temporary, file)
  } finally {
    fs.rmSync(temporary, { force: true })
  }
}

/**
 * Puts a copy of `source` at `file`, as replaceFile does, but by hard link: no file data is
 * written, so putting memory back works on a disk too full for a copy. `source` must stay as it
 * is (nothing writes into it in place). Across filesystems the bytes are copied instead.
 */
export function linkFile(source: string, file: string): void {
  const temporary = temporaryFor(file)
  try {
    fs.linkSync(source, temporary)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error
    return replaceFile(file, fs.readFileSync(source))
  }
  try {
    fs.renameSync(temporary, file)
  } catch (error) {
    fs.rmSync(temporary, { force: true })
    throw error
  }
}

/** A dot-name beside `file`, cleared first: a leftover of a crashed write never blocks the next one. */
function temporaryFor(file: string): string {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  fs.rmSync(temporary, { force: true })
  return temporary
}
