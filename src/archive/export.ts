// Writes a memory home into one archive (format.ts). The databases are opened the way the plugin
// opens them, which brings an older home up to this build's schema, as its next start would, so
// the archive's schema numbers describe its rows; apart from that they are only read. A database
// the home does not have is not created: memory.db is archived as its empty tables (the plugin
// creates it on first start anyway), a missing memory_v2.db is left out.
import fs from "node:fs"
import path from "node:path"
import { sortByCodePoints } from "../backend/safe-path.js"
import { openDatabase } from "../store/database.js"
import type { Migration } from "../store/migrations.js"
import { memoryPaths } from "../util/paths.js"
import { readRegularFile } from "../util/regular-file.js"
import { readableRoot, WHOLE_MARKER } from "../write/phase2/run-snapshot.js"
import { ArchiveError, archiveIoError } from "./errors.js"
import {
  ARCHIVE_FORMAT,
  ARCHIVE_MAX_BYTES,
  ARCHIVE_VERSION,
  ARCHIVED_VERSIONS,
  EXCLUDED_DIRS,
  archiveChecksum,
  archivePathProblem,
  encodeFileContent,
  sha256Hex,
  type Archive,
  type ArchiveDatabase,
  type ArchiveFile,
} from "./format.js"
import { migratedSchema, readTables } from "./tables.js"

export interface ExportSummary {
  files: number
  /** The archived files' own size, before encoding. */
  bytes: number
  /** Rows per table, keyed "memory.db/jobs". */
  tables: Record<string, number>
}

export interface ExportResult {
  /** The archive's JSON text. */
  archive: string
  summary: ExportSummary
  /** What was passed over, one line each: symlinks, special files, names no archive can carry. */
  skipped: string[]
}

const NOT_EXPORTED = "Nothing was exported."

interface FoundFile {
  /** Archive path: "memories/MEMORY.md". */
  path: string
  absolute: string
  size: number
}

export function exportHome(home: string, options: { now?: () => number } = {}): ExportResult {
  const now = options.now ?? Date.now
  const located = ARCHIVED_VERSIONS.map((version) => ({ version, paths: memoryPaths(home, "option", version.version) }))
  const present = (file: string) => fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined
  if (!located.some(({ paths }) => present(paths.db) || present(paths.memoryRoot))) {
    throw new ArchiveError(
      "no_home",
      `${home} holds no memory: it has neither memory.db nor a memories folder. Check the path (the plugin's "home" option or OPENCODE_CODEX_MEMORY_HOME, if you set one).`,
    )
  }

  const skipped: string[] = []
  const found: FoundFile[] = []
  // An unfinished consolidation's output is not memory yet: the copy it keeps is archived instead (D24).
  for (const { version, paths } of located) findFiles(readableRoot(paths.memoryRoot), version.folder, found, skipped)
  const total = found.reduce((sum, file) => sum + file.size, 0)
  // Checked before reading anything: the files alone already make the archive too large.
  if (total > ARCHIVE_MAX_BYTES) throw tooLarge(total, found)

  const databases: Partial<Record<string, ArchiveDatabase>> = {}
  const tables: Record<string, number> = {}
  for (const { version, paths } of located) {
    const exists = fs.existsSync(paths.db)
    if (!exists && version.version !== "v1") continue
    const archived = exists ? readDatabase(paths.db, version.database, version.migrations, now) : emptyDatabase(version.migrations)
    databases[version.database] = archived
    for (const [name, table] of Object.entries(archived.tables)) tables[`${version.database}/${name}`] = table.rows.length
  }
  // A session waiting to be forgotten may still be in MEMORY.md or the summary: an archive made now
  // would carry it on.
  const waiting = new Set(Object.values(databases).flatMap((database) => (database?.tables.forget_queue?.rows ?? []).map((row) => String(row[0]))))
  if (waiting.size) {
    throw new ArchiveError(
      "forgetting_pending",
      `${waiting.size === 1 ? "1 session is" : `${waiting.size} sessions are`} waiting to be forgotten (${[...waiting].slice(0, 5).join(", ")}${waiting.size > 5 ? ", ..." : ""}): the memory files may still hold what was learned from ${waiting.size === 1 ? "it" : "them"}, and an archive would carry it on. ${NOT_EXPORTED} The next consolidation removes it within minutes while OpenCode runs; export again once \`opencode-codex-memory status\` no longer lists it.`,
    )
  }

  const files: ArchiveFile[] = []
  let bytes = 0
  for (const file of found) {
    const content = readRegularFile(file.absolute)
    if (content === undefined) {
      skipped.push(`${file.path}: changed or went away while it was being read; not archived`)
      continue
    }
    bytes += content.length
    files.push({ path: file.path, ...encodeFileContent(content), sha256: sha256Hex(content) })
  }

  const body: Omit<Archive, "checksum"> = {
    format: ARCHIVE_FORMAT,
    archive_version: ARCHIVE_VERSION,
    created_at: new Date(now()).toISOString(),
    schema: { catalog: ARCHIVED_VERSIONS[0].migrations.length, v2: ARCHIVED_VERSIONS[1].migrations.length },
    databases: databases as Archive["databases"],
    files: sortByCodePoints(files, (file) => file.path),
  }
  const archive = JSON.stringify({ ...body, checksum: archiveChecksum(body) })
  const size = Buffer.byteLength(archive, "utf8")
  if (size > ARCHIVE_MAX_BYTES) throw tooLarge(size, found)
  return { archive, summary: { files: files.length, bytes, tables }, skipped }
}

/**
 * The regular files below `root`, without reading them. Git baselines are left out silently (the
 * next consolidation rebuilds them); symlinks, which are never followed, special files and names
 * an archive cannot carry are reported.
 */
function findFiles(root: string, folder: string, found: FoundFile[], skipped: string[]): void {
  const stat = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!stat) return
  if (!stat.isDirectory()) {
    skipped.push(`${folder}: ${stat.isSymbolicLink() ? "a symlink, not followed" : "not a folder"}; nothing in it was archived`)
    return
  }
  const walk = (absolute: string, relative: string): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(absolute, { withFileTypes: true })
    } catch (error) {
      throw archiveIoError(`read the folder ${relative}`, error, NOT_EXPORTED)
    }
    for (const entry of sortByCodePoints(entries, (item) => item.name)) {
      if (EXCLUDED_DIRS.includes(entry.name.toLowerCase())) continue
      if (relative === folder && entry.name === WHOLE_MARKER) continue
      const child = `${relative}/${entry.name}`
      const childAbsolute = path.join(absolute, entry.name)
      if (entry.isSymbolicLink()) skipped.push(`${child}: a symlink, not followed`)
      else if (entry.isDirectory()) walk(childAbsolute, child)
      else if (!entry.isFile()) skipped.push(`${child}: not a regular file`)
      else {
        const problem = archivePathProblem(child)
        if (problem) skipped.push(`${child}: its name ${problem}`)
        else found.push({ path: child, absolute: childAbsolute, size: fs.lstatSync(childAbsolute).size })
      }
    }
  }
  walk(root, folder)
}

function readDatabase(file: string, name: string, migrations: readonly Migration[], now: () => number): ArchiveDatabase {
  let opened: ReturnType<typeof openDatabase>
  try {
    opened = openDatabase(file, { migrations, now })
  } catch (error) {
    throw archiveIoError(`open ${name}`, error, NOT_EXPORTED)
  }
  try {
    if (opened.recovered) {
      throw new ArchiveError(
        "io",
        `${name} was corrupt (${opened.recovered.reason}). It was moved to ${opened.recovered.movedTo}, where it can still be salvaged, and an empty one took its place; nothing was exported, since the archive would have lost what it held.`,
      )
    }
    return { tables: readTables(opened.db, name) }
  } catch (error) {
    throw error instanceof ArchiveError ? error : archiveIoError(`read ${name}`, error, NOT_EXPORTED)
  } finally {
    opened.db.close()
  }
}

function emptyDatabase(migrations: readonly Migration[]): ArchiveDatabase {
  const tables: ArchiveDatabase["tables"] = {}
  for (const [name, columns] of migratedSchema(migrations)) tables[name] = { columns, rows: [] }
  return { tables }
}

function tooLarge(size: number, found: readonly FoundFile[]): ArchiveError {
  const largest = [...found].sort((a, b) => b.size - a.size).slice(0, 3)
  const names = largest.length ? ` The largest files: ${largest.map((file) => `${file.path} (${kib(file.size)})`).join(", ")}.` : ""
  return new ArchiveError(
    "too_large",
    `The archive would be ${kib(size)}, more than the ${kib(ARCHIVE_MAX_BYTES)} an archive may hold, so it could not be imported; nothing was written.${names} Remove or shorten what the memory no longer needs, then export again.`,
  )
}

function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`
}
