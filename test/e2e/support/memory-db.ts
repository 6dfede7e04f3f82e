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

/** The global consolidation row's status, when there is one. */
export function phase2Status(sandbox: Sandbox): string | undefined {
  return query<{ status: string }>(sandbox, "SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'")[0]?.status
}

/** True once the consolidation that follows a phase-1 pass has ended, either way. */
export function phase2Ended(sandbox: Sandbox): boolean {
  return ["done", "failed"].includes(phase2Status(sandbox) ?? "")
}
