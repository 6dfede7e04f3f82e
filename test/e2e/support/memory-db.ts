// Reading the plugin's databases of a sandbox from a test, one short connection per query:
// memory.db (the catalog, and V1's outputs and jobs) or memory_v2.db (V2's).
import path from "node:path"
import { openDatabase } from "../../../src/store/database.js"
import { V2_MIGRATIONS } from "../../../src/store/migrations.js"
import type { MemoryVersion } from "../../../src/util/paths.js"
import type { Sandbox } from "./opencode.js"

export function query<T>(sandbox: Pick<Sandbox, "memoryHome">, sql: string, version: MemoryVersion = "v1"): T[] {
  const file = path.join(sandbox.memoryHome, version === "v1" ? "memory.db" : "memory_v2.db")
  const { db } = openDatabase(file, version === "v1" ? {} : { migrations: V2_MIGRATIONS })
  try {
    return db.prepare(sql).all<T>()
  } finally {
    db.close()
  }
}

/** The global consolidation row's status in a version's database, when there is one. */
export function phase2Status(sandbox: Pick<Sandbox, "memoryHome">, version: MemoryVersion = "v1"): string | undefined {
  return query<{ status: string }>(sandbox, "SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'", version)[0]?.status
}

/** True once the consolidation that follows a phase-1 pass has ended, either way. */
export function phase2Ended(sandbox: Sandbox, version: MemoryVersion = "v1"): boolean {
  return ["done", "failed"].includes(phase2Status(sandbox, version) ?? "")
}
