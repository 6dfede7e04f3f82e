import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"

const opened: SqlDatabase[] = []
function store(): MemoryStore {
  const { db } = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-rl-")), "memory.db"))
  opened.push(db)
  return new MemoryStore(db, () => 42)
}
afterEach(() => {
  for (const db of opened.splice(0)) db.close()
})

describe("the redaction audit", () => {
  it("sums the counts of every extraction by class", () => {
    const s = store()
    s.recordRedactions("ses_a", { "github-token": 2, "secret-assignment": 1 }, "transcript")
    s.recordRedactions("ses_a", { "github-token": 1 }, "answer")
    s.recordRedactions("ses_b", { jwt: 3, "private-span": 1 })
    expect(s.redactionTotals()).toEqual({ "github-token": 3, "secret-assignment": 1, jwt: 3, "private-span": 1 })
  })

  it("stores counts, stage and time only, and nothing for an extraction without redactions", () => {
    const s = store()
    s.recordRedactions("ses_a", {}, "transcript")
    s.recordRedactions("ses_a", { "github-token": 0 }, "answer")
    expect(s.db.prepare("SELECT COUNT(*) AS n FROM redaction_log").get<{ n: number }>()?.n).toBe(0)
    s.recordRedactions("ses_a", { "github-token": 1 }, "answer")
    expect(s.db.prepare("SELECT session_id, stage, recorded_at, counts FROM redaction_log").all()).toEqual([
      { session_id: "ses_a", stage: "answer", recorded_at: 42, counts: '{"github-token":1}' },
    ])
  })

  it("reads nothing for a fresh database", () => {
    expect(store().redactionTotals()).toEqual({})
  })
})
