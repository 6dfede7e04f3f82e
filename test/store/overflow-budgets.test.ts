// Both version databases keep the budgets an overflow refused on their job rows (migrations 13 and V2's 6).
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { V2_MIGRATIONS } from "../../src/store/migrations.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"

const opened: SqlDatabase[] = []
afterEach(() => {
  for (const db of opened.splice(0)) db.close()
})

function open(file: "memory.db" | "memory_v2.db"): SqlDatabase {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-overflow-db-"))
  const { db } = openDatabase(path.join(dir, file), file === "memory_v2.db" ? { migrations: V2_MIGRATIONS } : {})
  opened.push(db)
  return db
}

const columns = (db: SqlDatabase, table: string) => db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all<{ name: string }>().map((row) => row.name)

describe("the overflow note on job rows", () => {
  for (const file of ["memory.db", "memory_v2.db"] as const) {
    it(`exists in ${file}, for both phases' jobs`, () => {
      const db = open(file)
      expect(columns(db, "jobs")).toContain("overflow_budgets")
      const stage1 = new Stage1Jobs(db, () => 1_000)
      const claim = stage1.claim({ sessionId: "ses_a", updatedAt: 500 }, { workerId: "w", maxRunning: 4 })
      expect(claim.type).toBe("claimed")
      expect(stage1.noteOverflow("ses_a", (claim as { token: string }).token, [7_200])).toBe(true)
      const phase2 = new Phase2Jobs(db, () => 1_000)
      const consolidation = phase2.claim("w")
      expect(phase2.noteOverflow((consolidation as { token: string }).token, [40_000])).toBe(true)
      expect(db.prepare("SELECT kind, overflow_budgets FROM jobs ORDER BY kind").all()).toEqual([
        { kind: "memory_consolidate_global", overflow_budgets: "[40000]" },
        { kind: "memory_stage1", overflow_budgets: "[7200]" },
      ])
    })
  }

  it("and memory.db's ledger counts overflows", () => {
    expect(columns(open("memory.db"), "spend_ledger")).toContain("overflows")
  })
})
