// A corrupt memory.db is moved aside, never deleted: the file (with its -wal and -shm) goes to
// memory.db.corrupt-<UTC time>, where the user can still salvage it, and a fresh database takes
// its place. What counts as corrupt is narrow: SQLite saying the file is not a database or is
// malformed, or PRAGMA quick_check failing, while the database is being opened. A busy or locked
// database, an I/O error, or a database from a newer plugin are not corruption and are never moved.
import fs from "node:fs"
import { sleepSync } from "../util/sleep.js"

/** The files SQLite keeps beside a database; they belong to it and move with it. */
const SIDECARS = ["-wal", "-shm", "-journal"] as const
/** How long a process waits for another one's recovery before giving up on this open. */
const LOCK_WAIT_MS = 10_000
/** A recovery takes milliseconds; a lock this old was left by a process that died during one. */
const LOCK_STALE_MS = 60_000

/** PRAGMA quick_check found damage; `detail` is its first finding. */
export class QuickCheckFailed extends Error {
  constructor(readonly detail: string) {
    super(`quick_check failed: ${detail.replace(/\s+/g, " ").trim()}`)
    this.name = "QuickCheckFailed"
  }
}

/** Why `error` means the database file is corrupt, or undefined when it does not. */
export function corruptionReason(error: unknown): string | undefined {
  if (error instanceof QuickCheckFailed) return error.message
  const code = String((error as { code?: unknown })?.code ?? "")
  const message = String((error as Error)?.message ?? "")
  // Extended codes (SQLITE_CORRUPT_INDEX, ...) share the prefix.
  if (/^SQLITE_(CORRUPT|NOTADB)/.test(code) || /file is not a database|database disk image is malformed/i.test(message)) {
    return message || code
  }
  return undefined
}

export interface FileIdentity {
  dev: number
  ino: number
}

export function fileIdentity(file: string): FileIdentity | undefined {
  const stat = fs.statSync(file, { throwIfNoEntry: false })
  return stat ? { dev: stat.dev, ino: stat.ino } : undefined
}

/**
 * Moves the database found corrupt aside and returns where it went; undefined when the file is no
 * longer the one that was diagnosed (another process recovered it first, or it was replaced), in
 * which case the caller simply opens what is there now. Recoveries of one file are serialised by a
 * lock file, so two processes that found the same corruption never move a fresh database aside.
 */
export function moveAside(file: string, diagnosed: FileIdentity | undefined, now: number): string | undefined {
  return withLock(`${file}.recovering`, () => {
    const current = fileIdentity(file)
    if (!diagnosed || !current || current.dev !== diagnosed.dev || current.ino !== diagnosed.ino) return undefined
    const target = freeName(`${file}.corrupt-${stamp(now)}`)
    // The sidecars first: until the main file has gone, nobody can create a fresh database, and so
    // no fresh sidecars, under these names.
    for (const suffix of SIDECARS) renameIfPresent(`${file}${suffix}`, `${target}${suffix}`)
    fs.renameSync(file, target)
    return target
  })
}

function withLock<T>(lock: string, fn: () => T): T {
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: "wx" })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > LOCK_STALE_MS) fs.rmSync(lock, { force: true })
      else if (Date.now() >= deadline) throw new Error(`another process is recovering ${lock.replace(/\.recovering$/, "")}; try again later`)
      else sleepSync(50)
    }
  }
  try {
    return fn()
  } finally {
    fs.rmSync(lock, { force: true })
  }
}

/** 2026-11-30T12:00:00.000Z -> 20261130T120000Z: sortable, and no colons (not allowed on Windows). */
function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")
}

/** `base`, or `base-2`, `base-3`, ...: a rename must never replace an earlier moved-aside file. */
function freeName(base: string): string {
  const taken = (name: string) => [name, ...SIDECARS.map((suffix) => `${name}${suffix}`)].some((candidate) => fs.existsSync(candidate))
  let name = base
  for (let n = 2; taken(name); n++) name = `${base}-${n}`
  return name
}

function renameIfPresent(from: string, to: string): void {
  try {
    fs.renameSync(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
  }
}
