// Reading, replacing and creating one file of the memory folder without following a symlink, and
// without a reader ever seeing half a file: every write goes to a temporary file first, so a full
// disk (ENOSPC halfway through) leaves the old file, or no file, never a truncated one. Kept apart
// from git-baseline.ts, so the workspace can use files without loading the git library.
import fs from "node:fs"
import path from "node:path"
import { killPoint } from "./test-switches.js"

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
    killPoint("temp-written")
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
    killPoint("temp-written")
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

/** How the temporaries of this module are named: `.<file name>.<writer's pid>.tmp`. */
const TEMPORARY_NAME = /^\..+\.(\d+)\.tmp$/
/**
 * Far longer than any write takes between its temporary and the rename: a temporary this old is a
 * leftover whatever its pid says (the pid of a writer that died may belong to another process now).
 */
export const TEMPORARY_MAX_AGE_MS = 60 * 60_000

/**
 * Removes the temporaries below `root` (`.git` aside) that no writer will rename any more: their
 * writer's pid is not alive (or is this process's), or they are older than TEMPORARY_MAX_AGE_MS. A write killed between
 * its temporary and the rename leaves one that only a later process can find, and the writer's own
 * clear-first (temporaryFor) only helps a process with that same pid. Returns the removed paths,
 * relative. Never throws: a leftover costs disk, never memory.
 */
export function sweepTemporaries(root: string, alive: (pid: number) => boolean, now: number = Date.now()): string[] {
  const removed: string[] = []
  const folders = [""]
  for (let relative = folders.pop(); relative !== undefined; relative = folders.pop()) {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(root, relative), { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      const child = relative ? `${relative}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (child !== ".git") folders.push(child)
        continue
      }
      const pid = TEMPORARY_NAME.exec(entry.name)?.[1]
      if (!pid || !entry.isFile()) continue
      try {
        const stat = fs.lstatSync(path.join(root, child))
        // This process's own writes are synchronous, so none of its temporaries is in flight now.
        if (Number(pid) !== process.pid && alive(Number(pid)) && now - stat.mtimeMs < TEMPORARY_MAX_AGE_MS) continue
        fs.rmSync(path.join(root, child), { force: true })
        removed.push(child)
      } catch {
        // Renamed or removed by its writer meanwhile: nothing left to do.
      }
    }
  }
  return removed.sort()
}

/** A dot-name beside `file`, cleared first: a leftover of a crashed write never blocks the next one. */
function temporaryFor(file: string): string {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  fs.rmSync(temporary, { force: true })
  return temporary
}
