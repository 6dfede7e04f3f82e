// Reading a database's tables as an archive carries them, and the schema a build expects. Tables
// are discovered from sqlite_master rather than listed, so a table a later migration adds is
// archived without touching this file; SQLite's own (sqlite_*) tables are its bookkeeping. The
// schema version itself is PRAGMA user_version, recorded in the archive's `schema` field.
import { migrate } from "../store/database.js"
import type { Migration } from "../store/migrations.js"
import { openSqlite, type SqlDatabase, type SqlValue } from "../store/sqlite.js"
import { ArchiveError } from "./errors.js"
import type { ArchiveCell, ArchiveTable } from "./format.js"

/** Table name -> column names, in declaration order. */
export type TableSchema = Map<string, string[]>

export function tableSchema(db: SqlDatabase): TableSchema {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all<{ name: string }>()
  const schema: TableSchema = new Map()
  for (const { name } of tables) {
    // table_info leaves out generated columns, which cannot be inserted anyway.
    const columns = db.prepare("SELECT name FROM pragma_table_info($table) ORDER BY cid").all<{ name: string }>({ table: name })
    schema.set(name, columns.map((column) => column.name))
  }
  return schema
}

/** The tables `migrations` create, read from a throwaway in-memory database. */
export function migratedSchema(migrations: readonly Migration[]): TableSchema {
  const db = openSqlite(":memory:")
  try {
    migrate(db, migrations)
    return tableSchema(db)
  } finally {
    db.close()
  }
}

/**
 * Every row of every table, in one read transaction so the tables agree with each other. Rows come
 * in rowid order (the order they were inserted in), so re-importing reproduces the same archive.
 */
export function readTables(db: SqlDatabase, database: string): Record<string, ArchiveTable> {
  const tables: Record<string, ArchiveTable> = {}
  db.exec("BEGIN")
  try {
    for (const [name, columns] of tableSchema(db)) {
      const list = columns.map(quoteIdentifier).join(", ")
      const order = hasRowid(db, name) ? " ORDER BY rowid" : ""
      const rows = db.prepare(`SELECT ${list} FROM ${quoteIdentifier(name)}${order}`).all<Record<string, unknown>>()
      tables[name] = { columns, rows: rows.map((row) => columns.map((column) => encodeCell(row[column], `${database} table ${name}`))) }
    }
  } finally {
    db.exec("ROLLBACK")
  }
  return tables
}

/** A name for SQL text; used only for names checked against the schema. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

export function encodeCell(value: unknown, where: string): ArchiveCell {
  if (value === null || value === undefined || typeof value === "string") return value ?? null
  if (typeof value === "number" && Number.isFinite(value)) return value
  if (typeof value === "bigint" && Number.isSafeInteger(Number(value))) return Number(value)
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString("base64") }
  throw new ArchiveError("io", `The ${where} holds a value JSON cannot carry (${String(value)}); nothing was exported.`)
}

export function decodeCell(value: ArchiveCell): SqlValue {
  return value !== null && typeof value === "object" ? Buffer.from(value.base64, "base64") : value
}

/** A WITHOUT ROWID table has no rowid to order by; it is stored, and so scanned, in key order. */
function hasRowid(db: SqlDatabase, table: string): boolean {
  return db.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = $table").get<{ wr: number }>({ table })?.wr === 0
}
