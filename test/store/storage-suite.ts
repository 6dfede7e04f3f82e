// The storage behaviour every SQLite driver must show. It runs under Node on each driver Node
// loads, node:sqlite and better-sqlite3 (storage.test.ts), and under Bun with bun:sqlite
// (storage-bun.test.ts runs bun-runner.ts inside the opencode binary), so it uses only node:assert
// and no test framework.
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { immediate, migrate, openDatabase, userVersion } from "../../src/store/database.js"
import { MIGRATIONS, type Migration } from "../../src/store/migrations.js"
import { openSqlite, type DriverName, type SqlDatabase } from "../../src/store/sqlite.js"
import { SearchIndexStore } from "../../src/store/search-index.js"
import { CITATION_RECEIPTS_PER_SESSION, MemoryStore } from "../../src/store/memory-store.js"

export interface SuiteContext {
  /** The driver this runtime is expected to pick. */
  driver: DriverName
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

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)

/** Files beside `file` that a recovery would have created. */
const movedAside = (file: string) => fs.readdirSync(path.dirname(file)).filter((name) => name.includes(".corrupt-"))

const tableNames = (db: SqlDatabase) =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all<{ name: string }>()
    .map((row) => row.name)

/** A real database holding enough rows to span many pages, all of them checkpointed into the file. */
export function populated(file: string): void {
  const { db } = openDatabase(file)
  const insert = db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ($id, $at)")
  immediate(db, () => {
    for (let i = 0; i < 2_000; i++) insert.run({ id: `ses_${String(i).padStart(5, "0")}_${"x".repeat(120)}`, at: i })
  })
  // bun:sqlite leaves the WAL in place on close.
  db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get()
  db.close()
}

/** The real driver, with `fault` given each SQL text first: it throws to inject a driver error. */
function faulty(fault: (sql: string) => void): (file: string) => SqlDatabase {
  return (file) => {
    const db = openSqlite(file)
    return {
      driver: db.driver,
      exec: (sql) => (fault(sql), db.exec(sql)),
      prepare: (sql) => (fault(sql), db.prepare(sql)),
      close: () => db.close(),
    }
  }
}

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code })

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
        assert.deepEqual(tables.map((t) => t.name), ["citation_parts", "citation_receipts", "cited_files", "consolidated_sessions", "consolidation_reviews", "forget_queue", "jobs", "memory_session_versions", "plugin_instances", "redaction_log", "session_catalog", "session_checkpoints", "session_meta", "settings", "spend_ledger", "stage1_outputs"])
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
    name: "a transaction that fills the database fails with SQLite's own SQLITE_FULL, and the database goes on working",
    run() {
      const { db } = openDatabase(tempFile())
      try {
        const count = () => db.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n
        immediate(db, () => db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ('ses_1', 1)").run())
        // The file may not grow: a big enough transaction runs out of pages, as on a full disk,
        // and SQLite rolls it back itself before our ROLLBACK runs.
        const pages = db.prepare("PRAGMA page_count").get<{ page_count: number }>()!.page_count
        db.prepare(`PRAGMA max_page_count = ${pages + 2}`).get()
        const insert = db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ($id, 1)")
        let failure: unknown
        try {
          immediate(db, () => {
            for (let i = 0; i < 5_000; i++) insert.run({ id: `ses_big_${i}_${"x".repeat(200)}` })
          })
        } catch (error) {
          failure = error
        }
        assert.match(String((failure as Error | undefined)?.message), /full/i)
        assert.doesNotMatch(String((failure as Error).message), /rollback/i)
        assert.equal((failure as { code?: string }).code, "SQLITE_FULL")
        assert.equal(count(), 1)
        // Nothing is left open on the connection: the next transaction commits.
        db.prepare(`PRAGMA max_page_count = ${pages + 1_000}`).get()
        immediate(db, () => db.prepare("INSERT INTO session_meta (session_id, updated_at) VALUES ('ses_2', 1)").run())
        assert.equal(count(), 2)
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
    name: "a file that is not a database is moved aside, and a fresh database takes its place",
    run() {
      const file = tempFile()
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const garbage = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7 + 13) % 251))
      fs.writeFileSync(file, garbage)
      const { db, migrated, recovered } = openDatabase(file, { now: () => NOW })
      try {
        assert.ok(recovered, "no recovery reported")
        assert.equal(recovered.movedTo, `${file}.corrupt-20261130T120000Z`)
        assert.match(recovered.reason, /not a database/)
        assert.deepEqual(fs.readFileSync(recovered.movedTo), garbage)
        assert.deepEqual(migrated, { from: 0, to: MIGRATIONS.length })
        const fresh = openDatabase(tempFile()).db
        try {
          assert.deepEqual(tableNames(db), tableNames(fresh))
        } finally {
          fresh.close()
        }
        assert.equal(fs.existsSync(`${file}.recovering`), false)
      } finally {
        db.close()
      }
      // The fresh database is healthy: the next open leaves it alone.
      const again = openDatabase(file, { now: () => NOW })
      again.db.close()
      assert.equal(again.recovered, undefined)
      assert.deepEqual(movedAside(file), ["memory.db.corrupt-20261130T120000Z"])
    },
  },
  {
    name: "a healthy database is opened as it is and never moved",
    run() {
      const file = tempFile()
      populated(file)
      for (let i = 0; i < 2; i++) {
        const { db, recovered } = openDatabase(file)
        try {
          assert.equal(recovered, undefined)
          assert.equal(db.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n, 2_000)
        } finally {
          db.close()
        }
      }
      assert.deepEqual(movedAside(file), [])
    },
  },
  {
    name: "a database with a damaged page fails quick_check and is moved aside byte for byte, with its -wal and -shm",
    run() {
      const file = tempFile()
      populated(file)
      const bytes = fs.readFileSync(file)
      const pageSize = bytes.readUInt16BE(16)
      const pages = bytes.length / pageSize
      assert.ok(pages > 10, `only ${pages} pages`)
      // Scribble over a page in the middle of the table's b-tree: the header stays readable.
      const page = Math.floor(pages / 2)
      bytes.fill(0xa5, page * pageSize, (page + 1) * pageSize)
      fs.writeFileSync(file, bytes)
      // Another process still has it open, so its -wal and -shm outlive this process's connection.
      const holder = openSqlite(file)
      holder.prepare("SELECT COUNT(*) AS n FROM sqlite_master").get()
      try {
        const { db, recovered } = openDatabase(file, { now: () => NOW })
        try {
          assert.ok(recovered, "no recovery reported")
          assert.match(recovered.reason, /quick_check|malformed/)
          assert.deepEqual(fs.readFileSync(recovered.movedTo), bytes)
          for (const suffix of ["-wal", "-shm"]) assert.ok(fs.existsSync(`${recovered.movedTo}${suffix}`), `${suffix} stayed behind`)
          assert.equal(db.prepare("SELECT COUNT(*) AS n FROM session_meta").get<{ n: number }>()?.n, 0)
          assert.equal(userVersion(db), MIGRATIONS.length)
        } finally {
          db.close()
        }
      } finally {
        holder.close()
      }
    },
  },
  {
    name: "a busy, locked or failing database is never taken for a corrupt one",
    run() {
      const file = tempFile()
      populated(file)
      const before = fs.readFileSync(file)
      const faults: Array<[string, Error]> = [
        ["PRAGMA synchronous", sqliteError("SQLITE_BUSY", "database is locked")],
        ["PRAGMA foreign_keys", sqliteError("SQLITE_LOCKED", "database table is locked")],
        ["PRAGMA foreign_keys", sqliteError("SQLITE_IOERR_READ", "disk I/O error")],
      ]
      for (const [statement, error] of faults) {
        const connect = faulty((sql) => {
          if (sql.startsWith(statement)) throw error
        })
        assert.throws(() => openDatabase(file, { connect }), (thrown) => thrown === error)
      }
      assert.deepEqual(movedAside(file), [])
      assert.deepEqual(fs.readFileSync(file), before)
    },
  },
  {
    name: "once a database has passed its check, even a corruption error does not move it",
    run() {
      const file = tempFile()
      populated(file)
      const connect = faulty((sql) => {
        if (sql === "BEGIN IMMEDIATE") throw sqliteError("SQLITE_CORRUPT", "database disk image is malformed")
      })
      assert.throws(() => openDatabase(file, { connect }), /malformed/)
      assert.deepEqual(movedAside(file), [])
      const { db, recovered } = openDatabase(file)
      db.close()
      assert.equal(recovered, undefined)
    },
  },
  {
    name: "the ranked search index: BM25 over FTS5 with contentless deletes, blocks kept by hash, records replaced, filters applied",
    run() {
      const file = tempFile()
      const store = SearchIndexStore.open(file)
      try {
        const identity = { ino: 1, dev: 1, size: 10, mtimeMs: 1, ctimeMs: 1, settled: true }
        const chunk = (hash: string, body: string, startLine: number) => ({ hash, context: "", body, startLine, endLine: startLine })
        store.replaceFile("MEMORY.md", identity, [chunk("a", "the retry budget is five", 1), chunk("b", "a budget for the retry of jobs", 3)])
        const match = '"retry" OR "budget" OR "retry budget"'
        const all = { scope: "", records: true }
        assert.deepEqual(store.query(match, all, 10, 0).map((row) => [row.body, Number(row.start_line)]), [["the retry budget is five", 1], ["a budget for the retry of jobs", 3]])
        // A block kept by hash keeps its words and moves; a new one is added, a gone one removed.
        store.replaceFile("MEMORY.md", { ...identity, size: 20 }, [chunk("c", "deploys wait for the retry budget", 1), { ...chunk("a", "", 5), kept: true }])
        assert.deepEqual(store.query(match, all, 10, 0).map((row) => [row.body, Number(row.start_line)]), [["the retry budget is five", 5], ["deploys wait for the retry budget", 1]])
        assert.deepEqual([...store.hashesOf("MEMORY.md")].sort(), [["a", 1], ["c", 1]])
        store.replaceRecords("fp1", [{ sessionId: "ses_x", chunks: [{ ...chunk("r", "retry budget for ses_x", 1), field: "raw_memory", projectKey: "git:/a/.git", projectName: "github.com/acme/app" }] }])
        assert.equal(store.recordsFingerprint(), "fp1")
        assert.deepEqual(store.query(match, { scope: "", records: true, project: "app" }, 10, 0).map((row) => row.source), ["record:ses_x"])
        assert.deepEqual(store.query(match, { scope: "MEMORY.md", records: false }, 10, 0).length, 2)
        store.replaceFile("MEMORY.md", undefined, [])
        assert.deepEqual(store.query(match, all, 10, 0).map((row) => row.source), ["record:ses_x"])
        assert.deepEqual(store.counts(), { files: 0, chunks: 1 })
      } finally {
        store.close()
      }
    },
  },
  {
    name: "citation receipts: per citing session and range, counted once a part, capped with the oldest dropped, gone when the session is forgotten or memory reset",
    run() {
      const { db } = openDatabase(tempFile())
      try {
        let clock = NOW
        const store = new MemoryStore(db, () => clock)
        const memory = { path: "MEMORY.md", start: 3, end: 5 }
        const skill = { path: "skills/ship/SKILL.md", start: 1, end: 2 }
        assert.equal(store.recordCitation("prt_1", "ses_a", [memory, skill, memory]), true)
        clock = NOW + 1_000
        assert.equal(store.recordCitation("prt_2", "ses_a", [memory]), true)
        assert.equal(store.recordCitation("prt_2", "ses_a", [memory]), false)
        // No citing session (a part seen without one): counted, but no receipt to show anywhere.
        assert.equal(store.recordCitation("prt_3", undefined, [skill]), true)
        store.recordCitation("prt_4", "ses_b", [skill])
        assert.deepEqual(store.receiptsOf("ses_a"), [
          { ...memory, count: 2, lastAt: NOW + 1_000 },
          { ...skill, count: 1, lastAt: NOW },
        ])
        assert.deepEqual(store.receiptsOf("ses_nobody"), [])

        // A session citing more than the cap keeps its newest rows.
        for (let i = 0; i < CITATION_RECEIPTS_PER_SESSION + 10; i++) {
          clock = NOW + 10_000 + i
          store.recordCitation(`prt_many_${i}`, "ses_c", [{ path: "MEMORY.md", start: i + 1, end: i + 1 }])
        }
        const kept = store.receiptsOf("ses_c")
        assert.equal(kept.length, CITATION_RECEIPTS_PER_SESSION)
        assert.equal(kept.at(-1)?.start, 11)
        assert.equal(kept[0]?.start, CITATION_RECEIPTS_PER_SESSION + 10)
        // The cap is per session: the others keep theirs.
        assert.equal(store.receiptsOf("ses_a").length, 2)

        // Forgotten for any reason, the session's receipts go; a polluted one keeps its checkpoint, not its receipts.
        store.forgetSession("ses_a", { deleted: false, keepCheckpoint: true })
        assert.deepEqual(store.receiptsOf("ses_a"), [])
        assert.equal(store.receiptsOf("ses_b").length, 1)
        store.forgetSession("ses_b", { deleted: true })
        assert.deepEqual(store.receiptsOf("ses_b"), [])
        store.clearCitations()
        assert.deepEqual(store.receiptsOf("ses_c"), [])
      } finally {
        db.close()
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
