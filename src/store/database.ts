// Opens memory.db: pragmas for several OpenCode processes sharing one file, an integrity check,
// then migrations. A database found corrupt while opening is moved aside (recovery.ts) and a fresh
// one created in its place; once it has opened and passed the check it is never moved.
//
// The check reads every page (quick_check) where an open is rare and its process long-lived: the
// plugin's memory.db, once per OpenCode start. Elsewhere it reads the header and the schema only:
// the search index (derived, so a damaged page met during use gets it deleted and built again, and
// a page no search reads misleads none), and every database the command-line tool opens (a
// quick_check of a 44 MB index cost 200-600 ms of every call; damage met later is reported as a
// damaged database, and `doctor` runs the full integrity_check).
import fs from "node:fs"
import path from "node:path"
import { STORE } from "../constants.js"
import { sleepSync } from "../util/sleep.js"
import { MIGRATIONS, type Migration } from "./migrations.js"
import { QuickCheckFailed, corruptionReason, fileIdentity, moveAside } from "./recovery.js"
import { openSqlite, type SqlDatabase } from "./sqlite.js"

export interface OpenOptions {
  migrations?: readonly Migration[]
  /** Opens the file with a driver; tests wrap it to inject driver faults. */
  connect?: (file: string) => SqlDatabase
  /** Names a moved-aside database (memory.db.corrupt-<UTC time>). */
  now?: () => number
  /** What the open checks: every page (PRAGMA quick_check, the default), or the header and schema only. */
  check?: DatabaseCheck
}

export type DatabaseCheck = "pages" | "header"

export interface OpenedDatabase {
  db: SqlDatabase
  /** Schema version before and after this open. */
  migrated: { from: number; to: number }
  /** Set when the file was corrupt: where it was moved, and what SQLite said. The caller warns. */
  recovered?: { movedTo: string; reason: string }
}

export function openDatabase(file: string, options: OpenOptions = {}): OpenedDatabase {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  // The file being diagnosed: it is moved only if it is still this one when the move happens.
  const diagnosed = fileIdentity(file)
  const first = openChecked(file, options)
  if ("db" in first) return migrateOpened(first.db, options)
  const movedTo = moveAside(file, diagnosed, (options.now ?? Date.now)())
  // Nothing moved: another process recovered the file first, so open what is there now.
  const second = openChecked(file, options)
  if (!("db" in second)) throw new Error(`${path.basename(file)} is corrupt (${second.corrupt}) and could not be replaced`)
  const opened = migrateOpened(second.db, options)
  return movedTo === undefined ? opened : { ...opened, recovered: { movedTo, reason: first.corrupt } }
}

/**
 * Connects, sets the pragmas and runs the check: PRAGMA quick_check, which reads every page once, so
 * that a damaged page shows here rather than in the middle of a job, or a read of the schema. An
 * error that says "corrupt" before the check has passed is answered as `corrupt`; anything else,
 * busy included, is thrown.
 */
function openChecked(file: string, options: OpenOptions): { db: SqlDatabase } | { corrupt: string } {
  const db = (options.connect ?? openSqlite)(file)
  try {
    // The busy timeout comes first, so every later statement waits for other processes' locks.
    db.exec(`PRAGMA busy_timeout = ${STORE.BUSY_TIMEOUT_MS}`)
    // Switching a fresh file to WAL needs an exclusive lock, and SQLite reports SQLITE_BUSY for it
    // at once, without consulting the busy timeout, when another process is doing the same.
    retryWhileBusy(() => db.prepare("PRAGMA journal_mode = WAL").get(), STORE.BUSY_TIMEOUT_MS)
    db.exec("PRAGMA synchronous = NORMAL")
    db.exec("PRAGMA foreign_keys = ON")
    retryWhileBusy(() => (options.check === "header" ? headerCheck(db) : quickCheck(db)), STORE.BUSY_TIMEOUT_MS)
    return { db }
  } catch (error) {
    db.close()
    const corrupt = corruptionReason(error)
    if (corrupt === undefined) throw error
    return { corrupt }
  }
}

/** After the check: a failure here (a newer schema, a broken migration, even "corrupt") never moves the file. */
function migrateOpened(db: SqlDatabase, options: OpenOptions): { db: SqlDatabase; migrated: { from: number; to: number } } {
  try {
    const migrated = retryWhileBusy(() => migrate(db, options.migrations ?? MIGRATIONS), STORE.BUSY_TIMEOUT_MS)
    return { db, migrated }
  } catch (error) {
    db.close()
    throw error
  }
}

/** Throws QuickCheckFailed with SQLite's first finding unless the check answers "ok". */
function quickCheck(db: SqlDatabase): void {
  const rows = db.prepare("PRAGMA quick_check(1)").all<{ quick_check: string }>()
  const finding = rows[0]?.quick_check
  if (rows.length !== 1 || finding !== "ok") throw new QuickCheckFailed(finding ?? "no answer")
}

/** Reads the header and the whole schema: a file that is not a database, or whose schema pages are damaged, throws. */
export function headerCheck(db: SqlDatabase): void {
  db.prepare("SELECT COUNT(*) AS n FROM sqlite_schema").get()
}

/**
 * Applies the migrations above the database's `user_version` inside one IMMEDIATE transaction.
 * The version is read after the write lock is taken, so when two processes open a fresh file at
 * once, the second one waits, then finds nothing left to do.
 */
export function migrate(db: SqlDatabase, migrations: readonly Migration[]): { from: number; to: number } {
  assertOrdered(migrations)
  return immediate(db, () => {
    const from = userVersion(db)
    const latest = migrations.at(-1)?.version ?? 0
    if (from > latest) throw new Error(`memory.db has schema version ${from}, newer than this plugin knows (${latest}); update the plugin`)
    for (const migration of migrations) {
      if (migration.version <= from) continue
      db.exec(migration.sql)
      db.exec(`PRAGMA user_version = ${migration.version}`)
    }
    return { from, to: Math.max(from, latest) }
  })
}

export function userVersion(db: SqlDatabase): number {
  return Number(db.prepare("PRAGMA user_version").get<{ user_version: number }>()?.user_version ?? 0)
}

/**
 * Runs `fn` in a BEGIN IMMEDIATE transaction: the write lock is taken up front, not on first write.
 * On failure the original error is what throws: after SQLITE_FULL (or IOERR, NOMEM) SQLite has
 * already rolled the transaction back, so our ROLLBACK finds none and its own complaint must not
 * replace the cause.
 */
export function immediate<T>(db: SqlDatabase, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE")
  try {
    const result = fn()
    db.exec("COMMIT")
    return result
  } catch (error) {
    try {
      db.exec("ROLLBACK")
    } catch {
      // Already rolled back by SQLite; nothing is left open on the connection.
    }
    throw error
  }
}

/** Runs `fn`, retrying for up to `budgetMs` while SQLite answers SQLITE_BUSY. */
export function retryWhileBusy<T>(fn: () => T, budgetMs: number): T {
  const deadline = Date.now() + budgetMs
  for (let attempt = 0; ; attempt++) {
    try {
      return fn()
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error
      sleepSync(Math.min(100, 5 * 2 ** attempt))
    }
  }
}

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return code === "SQLITE_BUSY" || /database is locked|SQLITE_BUSY/i.test(String((error as Error)?.message ?? ""))
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${migration.name} is numbered ${migration.version}, expected ${index + 1}`)
  })
}
