// What a memory home holds, read back for comparison: every table's rows, and every entry of a
// folder by content. The archive tests compare homes before and after an import or an export.
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { openSqlite } from "../../src/store/sqlite.js"

/** Every table's rows, in rowid order. */
export function rowsOf(file: string): Record<string, Record<string, unknown>[]> {
  const db = openSqlite(file)
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all<{ name: string }>()
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all()]))
  } finally {
    db.close()
  }
}

/** What is in a folder, recursively: file hashes, folders, symlink targets. */
export function snapshot(root: string): Record<string, string> {
  const result: Record<string, string> = {}
  if (!fs.existsSync(root)) return result
  for (const entry of fs.readdirSync(root, { recursive: true, encoding: "utf8" })) {
    const file = path.join(root, entry)
    const stat = fs.lstatSync(file)
    result[entry] = stat.isSymbolicLink()
      ? `-> ${fs.readlinkSync(file)}`
      : stat.isDirectory()
        ? "dir"
        : createHash("sha256").update(fs.readFileSync(file)).digest("hex")
  }
  return result
}
