// Git's small metadata files (HEAD, `.git` files, commondir, config) read without git: bounded,
// non-blocking and fail-open, so a FIFO or a huge file planted in a session's folder costs nothing.
import fs from "node:fs"

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
