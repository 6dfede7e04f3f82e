// The storage behaviour every SQLite driver must show. It runs under Node with better-sqlite3
// (storage.test.ts) and under Bun with bun:sqlite (storage-bun.test.ts runs bun-runner.ts inside the
// opencode binary), so it uses only node:assert and no test framework.
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { immediate, migrate, openDatabase, userVersion } from "../../src/store/database.js"
import { MIGRATIONS, type Migration } from "../../src/store/migrations.js"

export interface SuiteContext {
  /** The driver this runtime is expected to pick. */
  driver: "bun:sqlite" | "better-sqlite3"
  /** Starts `count` separate processes that each open `file` at the same moment; resolves with their exit codes and output. */
  openInProcesses(file: string, count: number): Promise<{ code: number | null; output: string }[]>
}

export interface StorageCase {
  name: string
  run(context: SuiteContext): void | Promise<void>
}

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-store-")), "nested", "memory.db")
}

export const storageCases: StorageCase[] = [
  {
    name: "opens a fresh file with the runtime's driver, WAL and a busy timeout",
    run({ driver }) {
      const { db, migrated } = openDatabase(tempFile())
      try {
        assert.equal(db.driver, driver)
        assert.deepEqual(migrated, { from: 0, to: MIGRATIONS.length })
        assert.equal(db.prepare("PRAGMA journal_mode").get<{ journal_mode: string }>()?.journal_mode, "wal")
        assert.equal(db.prepare("PRAGMA busy_timeout").get<{ timeout: number }>()?.timeout, 5000)
      } finally {
        db.close()
      }
    },
  },
  {
    name: "applies migrations once and leaves a reopened database alone",
    run() {
      const file = tempFile()
      openDatabase(file).db.close()
      const { db, migrated } = openDatabase(file)
      try {
        assert.deepEqual(migrated, { from: MIGRATIONS.length, to: MIGRATIONS.length })
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string }>()
        assert.deepEqual(tables.map((t) => t.name), ["citation_parts", "cited_files", "jobs", "session_meta", "stage1_outputs"])
      } finally {
        db.close()
      }
    },
  },
  {
    name: "a failing migration rolls back entirely and keeps the old version",
    run() {
      const file = tempFile()
      openDatabase(file).db.close()
      const broken: Migration[] = [
        ...MIGRATIONS,
        { version: MIGRATIONS.length + 1, name: "half-broken", sql: "CREATE TABLE extra (id INTEGER); INSERT INTO missing_table VALUES (1);" },
      ]
      assert.throws(() => openDatabase(file, { migrations: broken }), /missing_table/)
      const { db } = openDatabase(file)
      try {
        assert.equal(userVersion(db), MIGRATIONS.length)
        assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'extra'").get(), undefined)
      } finally {
        db.close()
      }
    },
  },
  {
    name: "refuses a database from a newer plugin instead of touching it",
    run() {
      const file = tempFile()
      const { db } = openDatabase(file)
      db.exec("PRAGMA user_version = 999")
      db.close()
      assert.throws(() => openDatabase(file), /schema version 999, newer/)
    },
  },
  {
    name: "rejects migrations that are not numbered 1, 2, 3, ...",
    run() {
      const { db } = openDatabase(tempFile())
      try {
        assert.throws(() => migrate(db, [{ version: 2, name: "gap", sql: "" }]), /expected 1/)
      } finally {
        db.close()
      }
    },
  },
  {
    name: "named parameters, missing rows and change counts read the same on every driver",
    run() {
      const { db } = openDatabase(tempFile())
      try {
        const insert = db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $at)")
        assert.equal(insert.run({ id: "ses_a", mode: "enabled", at: 1 }).changes, 1)
        assert.equal(insert.run({ id: "ses_b", mode: "polluted", at: 2 }).changes, 1)
        const select = db.prepare("SELECT session_id, memory_mode, updated_at FROM session_meta WHERE session_id = $id")
        assert.deepEqual(select.get({ id: "ses_b" }), { session_id: "ses_b", memory_mode: "polluted", updated_at: 2 })
        assert.equal(select.get({ id: "ses_none" }), undefined)
        assert.equal(db.prepare("UPDATE session_meta SET updated_at = 3").run().changes, 2)
        assert.deepEqual(db.prepare("SELECT session_id FROM session_meta ORDER BY session_id").all(), [{ session_id: "ses_a" }, { session_id: "ses_b" }])
        assert.throws(() => insert.run({ id: "ses_c", mode: "bogus", at: 1 }), /CHECK constraint/)
      } finally {
        db.close()
      }
    },
  },
  {
    name: "an immediate transaction commits on success and rolls back on error",
    run() {
      const { db } = openDatabase(tempFile())
      try {
        const count = () => db.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n
        immediate(db, () => db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ('ses_1', 1)").run())
        assert.throws(() =>
          immediate(db, () => {
            db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ('ses_2', 1)").run()
            throw new Error("abort")
          }),
        )
        assert.equal(count(), 1)
      } finally {
        db.close()
      }
    },
  },
  {
    name: "a second connection waits for the writer instead of failing with SQLITE_BUSY",
    run() {
      const file = tempFile()
      const first = openDatabase(file).db
      const second = openDatabase(file).db
      try {
        first.exec("BEGIN IMMEDIATE")
        first.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ('ses_w', 1)").run()
        // A reader still sees the last committed state while the writer holds its lock (WAL).
        assert.equal(second.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n, 0)
        first.exec("COMMIT")
        assert.equal(second.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n, 1)
      } finally {
        first.close()
        second.close()
      }
    },
  },
  {
    name: "several processes opening one fresh home at once all succeed and migrate once",
    async run(context) {
      const file = tempFile()
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const results = await context.openInProcesses(file, 4)
      for (const result of results) assert.equal(result.code, 0, result.output)
      const froms = results.map((r) => JSON.parse(r.output.trim().split("\n").at(-1) ?? "{}").from as number)
      // Exactly one process found the file empty; the others found it already migrated.
      assert.equal(froms.filter((from) => from === 0).length, 1, JSON.stringify(froms))
      assert.equal(froms.filter((from) => from === MIGRATIONS.length).length, 3, JSON.stringify(froms))
      const { db } = openDatabase(file)
      try {
        assert.equal(userVersion(db), MIGRATIONS.length)
        assert.equal(db.prepare("PRAGMA integrity_check").get<{ integrity_check: string }>()?.integrity_check, "ok")
      } finally {
        db.close()
      }
    },
  },
]
