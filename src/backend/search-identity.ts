// When a cached read of a file or folder may be reused: it still has the identity it had when it
// was read (inode, device, size, mtime, ctime), and it had already been unchanged for longer than
// a timestamp tick at that moment. Without the second rule, a change made within the same clock
// tick as the read (file systems stamp times from a coarse clock: a few ms on Linux, up to 2 s on
// FAT) could leave every field as it was and go unseen. An entry read too soon is not trusted and
// is read again by the next query, until it settles. ctime cannot be set back by utimes, so an
// edit that restores size and mtime is still seen.
import type fs from "node:fs"

/** Longer than the coarsest timestamp granularity of common file systems (FAT: 2 s). */
export const SETTLE_MS = 2_000

export interface Identity {
  ino: number
  dev: number
  size: number
  mtimeMs: number
  ctimeMs: number
  /** Whether the times were already older than the settle time when the contents were read. */
  settled: boolean
}

/** `stat`'s identity, with `readAt` the time (ms) taken before the contents were read. */
export function identityOf(stat: fs.Stats, readAt: number, settleMs: number): Identity {
  return {
    ino: stat.ino,
    dev: stat.dev,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    settled: readAt - Math.max(stat.ctimeMs, stat.mtimeMs) >= settleMs,
  }
}

/** Whether contents read under `identity` are still those `stat` describes. */
export function stillValid(identity: Identity, stat: fs.Stats): boolean {
  return (
    identity.settled &&
    identity.ino === stat.ino &&
    identity.dev === stat.dev &&
    identity.size === stat.size &&
    identity.mtimeMs === stat.mtimeMs &&
    identity.ctimeMs === stat.ctimeMs
  )
}
