// Restores a memory home from an archive. Everything is checked first (validate.ts), then the
// complete new content is built in a staging folder inside the home: each database created and
// migrated to the schema its rows were exported under, filled in one transaction, then migrated
// the rest of the way (so an older archive gets this build's data migrations too), then the
// files. Only then is the home touched, by renames (swap.ts). A failure before that removes the
// staging folder and leaves the home as it was.
//
// OpenCode must be closed during an import: a process that has the old memory.db open keeps the
// old (moved, then deleted) file and would go on writing into it. So an import is refused while the
// home's catalog lists a live plugin instance (store/instances.ts), before staging and again right
// before the swap.
import fs from "node:fs"
import path from "node:path"
import { STORE } from "../constants.js"
import { immediate, migrate, openDatabase } from "../store/database.js"
import { HomeInstances, type LiveInstance } from "../store/instances.js"
import { leaseOwners } from "../store/lease-owner.js"
import { corruptionReason } from "../store/recovery.js"
import { HomeSettings } from "../store/settings.js"
import { openSqlite, type SqlDatabase, type SqlValue } from "../store/sqlite.js"
import { VersionStore } from "../store/version-store.js"
import { memoryPaths } from "../util/paths.js"
import { snapshotDir } from "../write/phase2/run-snapshot.js"
import { ArchiveError, archiveIoError } from "./errors.js"
import { ARCHIVED_VERSIONS, EXCLUDED_DIRS, type Archive, type ArchiveDatabase, type ArchiveTable, type ArchivedVersion } from "./format.js"
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
  ARCHIVED_VERSIONS.flatMap((version) => [
    version.database,
    ...SIDECARS.map((suffix) => version.database + suffix),
    version.folder,
    // A copy left by a killed consolidation is what readers see and what the next run puts back (D24): it goes with the folder it copied.
    path.basename(snapshotDir(version.folder)),
  ]),
)

export function importArchive(text: string | Buffer, home: string, options: ImportOptions = {}): ImportResult {
  const now = options.now ?? Date.now
  const valid = validateArchive(text)
  const replace = options.replace === true
  const local = checkHome(home, replace, now)
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
    tables = stageDatabases(staging, valid.archive, now, local)
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
 * A home may receive an archive when it holds no memory yet (a home that was reset holds none);
 * with `replace`, when no consolidation holds a live lease in it (that one would go on editing a
 * folder that is no longer the home's). Never while an OpenCode process has the home open: it would
 * go on writing into the old database, and what it wrote would be lost. Returns what the home's own
 * catalog says about its sessions, which the import keeps.
 */
function checkHome(home: string, replace: boolean, now: () => number): LocalChoices | undefined {
  const stat = fs.statSync(home, { throwIfNoEntry: false })
  if (stat && !stat.isDirectory()) throw new ArchiveError("io", `${home} is not a folder; pass the memory home's folder.`)
  if (!stat) return undefined
  const catalog = memoryPaths(home, "option", "v1").db
  const local = fs.existsSync(catalog) ? readCatalog(catalog, now) : undefined
  if (local?.instances.length) {
    const who = local.instances.map((instance) => `process ${instance.pid} on ${instance.host}`).join(", ")
    throw new ArchiveError(
      "opencode_running",
      `OpenCode has this memory home open (${who}); nothing was changed. Close OpenCode (every window, and \`opencode serve\`), then import again: a running OpenCode would go on writing into the memory it opened, and those changes would be lost.`,
    )
  }
  if (!replace) {
    const occupied = HOME_ENTRIES.filter((name) => holdsMemory(path.join(home, name)))
    if (occupied.length) {
      throw new ArchiveError(
        "home_not_empty",
        `${home} already holds memory (${occupied.join(", ")}); nothing was changed. Import into an empty home, or import again with --replace to discard that memory for the archive's (export it first if you may want it back).`,
      )
    }
    return local
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
  return local
}

/** What the home's own catalog knows that an import must not undo. */
interface LocalChoices {
  /** OpenCode processes with the home open. */
  instances: LiveInstance[]
  /** Sessions kept out of memory here, and sessions forgotten here (with their forget time). */
  sessions: Array<{ session_id: string; memory_mode: string; updated_at: number; forgotten_before: number | null }>
  /** The last reset here: sessions said before it are not learned again after the import either. */
  resetEpoch: number | undefined
}

/** Reads the home's catalog as it is (any schema this build knows), without migrating or moving it. */
function readCatalog(file: string, now: () => number): LocalChoices | undefined {
  try {
    const db = openSqlite(file)
    try {
      db.exec(`PRAGMA busy_timeout = ${STORE.BUSY_TIMEOUT_MS}`)
      const has = (table: string) => db.prepare("SELECT 1 AS yes FROM sqlite_master WHERE type = 'table' AND name = $table").get({ table }) !== undefined
      const columns = (table: string) => new Set(db.prepare("SELECT name FROM pragma_table_info($table)").all<{ name: string }>({ table }).map((row) => row.name))
      const instances = has("plugin_instances") ? new HomeInstances(db, leaseOwners(), now).live({ prune: false }) : []
      const forgetting = has("session_meta") && columns("session_meta").has("forgotten_before")
      const sessions = has("session_meta")
        ? db
            .prepare(`SELECT session_id, memory_mode, updated_at, ${forgetting ? "forgotten_before" : "NULL AS forgotten_before"} FROM session_meta WHERE memory_mode <> 'enabled'${forgetting ? " OR forgotten_before IS NOT NULL" : ""}`)
            .all<LocalChoices["sessions"][number]>()
        : []
      const epoch = has("settings") ? db.prepare("SELECT value FROM settings WHERE key = 'reset_epoch'").get<{ value: string }>()?.value : undefined
      return { instances, sessions, resetEpoch: epoch === undefined || !Number.isFinite(Number(epoch)) ? undefined : Number(epoch) }
    } finally {
      db.close()
    }
  } catch (error) {
    // A catalog SQLite cannot read has no choices to keep and no instance that could use it.
    if (corruptionReason(error) !== undefined) return undefined
    throw archiveIoError("read the home's memory.db", error, "Nothing was changed; try again, or close OpenCode first.")
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

/** Tables whose rows are memory: what a database must be without to take an archive. */
const MEMORY_TABLES = ["stage1_outputs", "session_checkpoints", "consolidation_reviews", "forget_queue"]

/**
 * Whether a home entry holds memory: a database with a learned record, a checkpoint, a review or a
 * pending forget (modes, stamps, settings and counts alone are not memory: a reset leaves them), or
 * a memory folder with a file in it (outside its git baseline). A database SQLite cannot read, a
 * sidecar without its database, and any other file count as memory: not this import's to discard.
 */
function holdsMemory(file: string): boolean {
  const stat = fs.lstatSync(file, { throwIfNoEntry: false })
  if (!stat) return false
  if (stat.isDirectory()) return folderHoldsFiles(file)
  // A sidecar belongs to its database, which decides; one left without its database may hold
  // committed pages of it, and is not this import's to discard.
  const sidecar = SIDECARS.find((suffix) => file.endsWith(suffix))
  if (sidecar) return !fs.existsSync(file.slice(0, -sidecar.length))
  try {
    const db = openSqlite(file)
    try {
      db.exec(`PRAGMA busy_timeout = ${STORE.BUSY_TIMEOUT_MS}`)
      for (const table of MEMORY_TABLES) {
        if (db.prepare("SELECT 1 AS yes FROM sqlite_master WHERE type = 'table' AND name = $table").get({ table }) === undefined) continue
        if (db.prepare(`SELECT 1 AS yes FROM ${quoteIdentifier(table)} LIMIT 1`).get() !== undefined) return true
      }
      return false
    } finally {
      db.close()
    }
  } catch {
    return true
  }
}

function folderHoldsFiles(folder: string): boolean {
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    if (EXCLUDED_DIRS.includes(entry.name.toLowerCase())) continue
    if (!entry.isDirectory() || folderHoldsFiles(path.join(folder, entry.name))) return true
  }
  return false
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

function stageDatabases(staging: string, archive: Archive, now: () => number, local: LocalChoices | undefined): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const version of ARCHIVED_VERSIONS) {
    const database = archive.databases[version.database]
    if (!database) continue
    stageDatabase(path.join(staging, version.database), version, database, archive.schema[version.schema], now, version.version === "v1" ? local : undefined)
    for (const [name, table] of Object.entries(database.tables)) counts[`${version.database}/${name}`] = table.rows.length
  }
  return counts
}

function stageDatabase(file: string, version: ArchivedVersion, database: ArchiveDatabase, schemaVersion: number, now: () => number, local: LocalChoices | undefined): void {
  const { db } = openDatabase(file, { migrations: version.migrations.slice(0, schemaVersion), now })
  try {
    immediate(db, () => {
      // Checked at commit rather than per row, so the order of the tables cannot matter.
      db.exec("PRAGMA defer_foreign_keys = ON")
      for (const [name, table] of Object.entries(database.tables)) insertRows(db, version.database, name, table)
    })
    migrate(db, version.migrations)
    releaseLeases(db)
    if (version.version === "v1") {
      // Nobody has the new home open yet; the exporting machine's registrations mean nothing here.
      db.prepare("DELETE FROM plugin_instances").run()
      if (local) keepLocalChoices(db, local)
    }
  } finally {
    db.close()
  }
}

/**
 * The home's own sessions stay as the user left them: a session kept out stays out (whatever mode
 * the archive gives an id of the same name), a forget time stays (the later one wins), and so does
 * the last reset. The imported records of a session kept out are dropped by the plugin's next pass,
 * like any record of such a session (control/forgetting.ts).
 */
function keepLocalChoices(db: SqlDatabase, local: LocalChoices): void {
  immediate(db, () => {
    const keep = db.prepare(
      `INSERT INTO session_meta (session_id, memory_mode, updated_at, forgotten_before) VALUES ($id, $mode, $at, $forgotten)
       ON CONFLICT (session_id) DO UPDATE SET
         memory_mode = CASE WHEN excluded.memory_mode <> 'enabled' THEN excluded.memory_mode ELSE memory_mode END,
         updated_at = MAX(updated_at, excluded.updated_at),
         forgotten_before = CASE WHEN forgotten_before IS NULL OR excluded.forgotten_before > forgotten_before THEN COALESCE(excluded.forgotten_before, forgotten_before) ELSE forgotten_before END`,
    )
    for (const row of local.sessions) keep.run({ id: row.session_id, mode: row.memory_mode, at: row.updated_at, forgotten: row.forgotten_before })
    if (local.resetEpoch !== undefined) new HomeSettings(db).setResetEpoch(local.resetEpoch)
  })
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
