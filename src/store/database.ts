// Opens memory.db: pragmas for several OpenCode processes sharing one file, then migrations.
import fs from "node:fs"
import path from "node:path"
import { STORE } from "../constants.js"
import { MIGRATIONS, type Migration } from "./migrations.js"
import { openSqlite, type SqlDatabase } from "./sqlite.js"

export interface OpenOptions {
  migrations?: readonly Migration[]
}

export interface OpenedDatabase {
  db: SqlDatabase
  /** Schema version before and after this open. */
  migrated: { from: number; to: number }
}

export function openDatabase(file: string, options: OpenOptions = {}): OpenedDatabase {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const db = openSqlite(file)
  try {
    // The busy timeout comes first, so every later statement waits for other processes' locks.
    db.exec(`PRAGMA busy_timeout = ${STORE.BUSY_TIMEOUT_MS}`)
    // Switching a fresh file to WAL needs an exclusive lock, and SQLite reports SQLITE_BUSY for it
    // at once, without consulting the busy timeout, when another process is doing the same.
    retryWhileBusy(() => db.prepare("PRAGMA journal_mode = WAL").get(), STORE.BUSY_TIMEOUT_MS)
    db.exec("PRAGMA synchronous = NORMAL")
    db.exec("PRAGMA foreign_keys = ON")
    const migrated = retryWhileBusy(() => migrate(db, options.migrations ?? MIGRATIONS), STORE.BUSY_TIMEOUT_MS)
    return { db, migrated }
  } catch (error) {
    db.close()
    throw error
  }
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

/** Runs `fn` in a BEGIN IMMEDIATE transaction: the write lock is taken up front, not on first write. */
export function immediate<T>(db: SqlDatabase, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE")
  try {
    const result = fn()
    db.exec("COMMIT")
    return result
  } catch (error) {
    db.exec("ROLLBACK")
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

/** Blocks the thread: the drivers are synchronous, and this only runs while opening the database. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${migration.name} is numbered ${migration.version}, expected ${index + 1}`)
  })
}
