// Restores a memory home from an archive. Everything is checked first (validate.ts), then the
// complete new content is built in a staging folder inside the home: each database created and
// migrated to the schema its rows were exported under, filled in one transaction, then migrated
// the rest of the way (so an older archive gets this build's data migrations too), then the
// files. Only then is the home touched, by renames (swap.ts). A failure before that removes the
// staging folder and leaves the home as it was.
//
// OpenCode should be closed during an import: a process that has the old memory.db open keeps
// the old (moved, then deleted) file, and SQLite refuses its writes once it notices the move.
import fs from "node:fs"
import path from "node:path"
import { STORE } from "../constants.js"
import { immediate, migrate, openDatabase } from "../store/database.js"
import { corruptionReason } from "../store/recovery.js"
import { openSqlite, type SqlDatabase, type SqlValue } from "../store/sqlite.js"
import { VersionStore } from "../store/version-store.js"
import { memoryPaths } from "../util/paths.js"
import { ArchiveError, archiveIoError } from "./errors.js"
import { ARCHIVED_VERSIONS, type Archive, type ArchiveDatabase, type ArchiveTable, type ArchivedVersion } from "./format.js"
import { STAGING_PREFIX, remove, swapEntries } from "./swap.js"
import { decodeCell, quoteIdentifier } from "./tables.js"
import { validateArchive, type ValidArchive } from "./validate.js"

export interface ImportOptions {
  /** Discard the memory the home holds and put the archive's in its place. */
  replace?: boolean
  now?: () => number
}

export interface ImportResult {
  files: number
  /** Rows per table, keyed "memory.db/jobs". */
  tables: Record<string, number>
  /** Set when the import is done but the backup of the previous memory could not be deleted. */
  leftover?: string
}

const UNCHANGED = "Nothing was changed."

/** The files SQLite keeps beside a database: they belong to it and are swapped with it. */
const SIDECARS = ["-wal", "-shm", "-journal"] as const

/** Every top-level entry of a home that an import replaces; nothing else in the home is touched. */
const HOME_ENTRIES: readonly string[] = Object.freeze(
  ARCHIVED_VERSIONS.flatMap((version) => [version.database, ...SIDECARS.map((suffix) => version.database + suffix), version.folder]),
)

export function importArchive(text: string | Buffer, home: string, options: ImportOptions = {}): ImportResult {
  const now = options.now ?? Date.now
  const valid = validateArchive(text)
  const replace = options.replace === true
  checkHome(home, replace, now)
  let created: string | undefined
  let staging: string
  try {
    created = fs.mkdirSync(home, { recursive: true })
    staging = fs.mkdtempSync(path.join(home, STAGING_PREFIX))
  } catch (error) {
    throw archiveIoError(`create a staging folder in ${home}`, error, "Nothing was changed; check that the folder is writable.")
  }
  let tables: Record<string, number>
  try {
    tables = stageDatabases(staging, valid.archive, now)
    stageFiles(staging, valid.files)
    // Again, right before the swap: OpenCode may have started, or a consolidation begun, meanwhile.
    checkHome(home, replace, now)
  } catch (error) {
    remove(staging)
    if (created !== undefined) removeEmptyFolders(home, created)
    throw error instanceof ArchiveError ? error : archiveIoError(`build the imported memory in ${home}`, error, UNCHANGED)
  }
  const leftover = swapEntries(home, staging, HOME_ENTRIES)
  return { files: valid.files.length, tables, ...(leftover ? { leftover } : {}) }
}

/**
 * A home may receive an archive when it holds no memory yet; with `replace`, when no consolidation
 * holds a live lease in it (that one would go on editing a folder that is no longer the home's).
 */
function checkHome(home: string, replace: boolean, now: () => number): void {
  const stat = fs.statSync(home, { throwIfNoEntry: false })
  if (stat && !stat.isDirectory()) throw new ArchiveError("io", `${home} is not a folder; pass the memory home's folder.`)
  if (!stat) return
  if (!replace) {
    const occupied = HOME_ENTRIES.filter((name) => holdsSomething(path.join(home, name)))
    if (occupied.length) {
      throw new ArchiveError(
        "home_not_empty",
        `${home} already holds memory (${occupied.join(", ")}); nothing was changed. Import into an empty home, or import again with --replace to discard that memory for the archive's (export it first if you may want it back).`,
      )
    }
    return
  }
  for (const version of ARCHIVED_VERSIONS) {
    const file = memoryPaths(home, "option", version.version).db
    if (!fs.existsSync(file)) continue
    const running = liveConsolidation(file, version, now)
    if (running) {
      throw new ArchiveError(
        "consolidation_running",
        `A ${version.version} consolidation is running in ${home} (its lease lasts until ${new Date(running.leaseUntil).toISOString()}); nothing was changed. Wait until it finishes, or close OpenCode, then import again.`,
      )
    }
  }
}

/** The folders this import created, from `home` up to `created`, the first of them; each only if still empty. */
function removeEmptyFolders(home: string, created: string): void {
  for (let folder = path.resolve(home); ; folder = path.dirname(folder)) {
    try {
      fs.rmdirSync(folder)
    } catch {
      return
    }
    if (folder === path.resolve(created) || path.dirname(folder) === folder) return
  }
}

/** A database or sidecar that exists, or a memory folder with any entry in it. */
function holdsSomething(file: string): boolean {
  const stat = fs.lstatSync(file, { throwIfNoEntry: false })
  if (!stat) return false
  return !stat.isDirectory() || fs.readdirSync(file).length > 0
}

/** VersionStore's rule, on the database as it is: it is about to be replaced, so it is neither migrated nor recovered. */
function liveConsolidation(file: string, version: ArchivedVersion, now: () => number): { leaseUntil: number } | undefined {
  try {
    const db = openSqlite(file)
    try {
      db.exec(`PRAGMA busy_timeout = ${STORE.BUSY_TIMEOUT_MS}`)
      const jobs = db.prepare("SELECT 1 AS yes FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").get()
      return jobs ? new VersionStore(version.version, db, now).liveConsolidation() : undefined
    } finally {
      db.close()
    }
  } catch (error) {
    // A database SQLite cannot read holds no lease anyone could be working under.
    if (corruptionReason(error) !== undefined) return undefined
    throw archiveIoError(`check ${version.database} for a running consolidation`, error, "Nothing was changed; try again, or close OpenCode first.")
  }
}

function stageDatabases(staging: string, archive: Archive, now: () => number): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const version of ARCHIVED_VERSIONS) {
    const database = archive.databases[version.database]
    if (!database) continue
    stageDatabase(path.join(staging, version.database), version, database, archive.schema[version.schema], now)
    for (const [name, table] of Object.entries(database.tables)) counts[`${version.database}/${name}`] = table.rows.length
  }
  return counts
}

function stageDatabase(file: string, version: ArchivedVersion, database: ArchiveDatabase, schemaVersion: number, now: () => number): void {
  const { db } = openDatabase(file, { migrations: version.migrations.slice(0, schemaVersion), now })
  try {
    immediate(db, () => {
      // Checked at commit rather than per row, so the order of the tables cannot matter.
      db.exec("PRAGMA defer_foreign_keys = ON")
      for (const [name, table] of Object.entries(database.tables)) insertRows(db, version.database, name, table)
    })
    migrate(db, version.migrations)
    releaseLeases(db)
  } finally {
    db.close()
  }
}

/** Names were checked against the schema (validate.ts); every value goes in as a parameter. */
function insertRows(db: SqlDatabase, database: string, name: string, table: ArchiveTable): void {
  if (!table.rows.length) return
  const sql = table.columns.length
    ? `INSERT INTO ${quoteIdentifier(name)} (${table.columns.map(quoteIdentifier).join(", ")}) VALUES (${table.columns.map((_, i) => `$c${i}`).join(", ")})`
    : `INSERT INTO ${quoteIdentifier(name)} DEFAULT VALUES`
  const statement = db.prepare(sql)
  table.rows.forEach((row, index) => {
    const params: Record<string, SqlValue> = {}
    row.forEach((cell, i) => (params[`c${i}`] = decodeCell(cell)))
    try {
      statement.run(params)
    } catch (error) {
      const detail = (error as Error).message
      const code = String((error as { code?: unknown }).code ?? "")
      if (!/^SQLITE_(CONSTRAINT|MISMATCH)/.test(code) && !/constraint failed|datatype mismatch/i.test(detail)) throw error
      throw new ArchiveError("invalid_archive", `Row ${index + 1} of ${database}/${name} was refused by the database (${detail}); the archive was edited or damaged. Nothing was changed.`)
    }
  })
}

/**
 * A running job's lease names a process on the exporting machine: here it means nothing, and would
 * keep the job from running until it expired. The job is left pending, to be claimed afresh.
 */
function releaseLeases(db: SqlDatabase): void {
  db.prepare(
    `UPDATE jobs SET status = 'pending', ownership_token = NULL, lease_until = NULL, owner_pid = NULL, owner_boot = NULL
     WHERE status = 'running'`,
  ).run()
}

function stageFiles(staging: string, files: ValidArchive["files"]): void {
  for (const file of files) {
    const absolute = path.join(staging, ...file.path.split("/"))
    try {
      fs.mkdirSync(path.dirname(absolute), { recursive: true })
      // "wx": two archive paths that name one file (on a case-insensitive disk) fail, never overwrite.
      const fd = fs.openSync(absolute, "wx")
      try {
        fs.writeFileSync(fd, file.bytes)
        // On disk before the swap makes it the home's.
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
    } catch (error) {
      throw archiveIoError(`write ${file.path}`, error, UNCHANGED)
    }
  }
}
