// Reading the plugin's memory.db of a sandbox from a test, one short connection per query.
import path from "node:path"
import { openDatabase } from "../../../src/store/database.js"
import type { Sandbox } from "./opencode.js"

export function query<T>(sandbox: Sandbox, sql: string): T[] {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return db.prepare(sql).all<T>()
  } finally {
    db.close()
  }
}
