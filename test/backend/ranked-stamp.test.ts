// The ranked index across processes: a new process (a CLI call) trusts what the last full check of
// the folder saw, kept in the index, for as long as the folders are unchanged and the check is
// recent, and still never shows text a file no longer holds; the index is opened without reading
// every page, and damage met during a search has it built again.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import { FULL_SWEEP_MS } from "../../src/backend/ranked-search.js"
import { openSqlite, type SqlDatabase } from "../../src/store/sqlite.js"

let home: string
let root: string
let index: string
let clock: number
const opened: LocalMemoryBackend[] = []

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-stamp-"))
  root = path.join(home, "memories")
  index = path.join(home, "memory_index.db")
  fs.mkdirSync(path.join(root, "rollout_summaries"), { recursive: true })
  clock = Date.now() + 60_000
})
afterEach(() => {
  for (const backend of opened.splice(0)) backend.ranked.close()
  fs.rmSync(home, { recursive: true, force: true })
})

/** A backend as a new process opens one: nothing of the last one's but the index file. */
function process(connect?: (file: string) => SqlDatabase): LocalMemoryBackend {
  for (const backend of opened.splice(0)) backend.ranked.close()
  const backend = new LocalMemoryBackend({ root, index: { file: index, now: () => clock, settleMs: 0, ...(connect ? { connect } : {}) } })
  opened.push(backend)
  return backend
}

const write = (relative: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), text)
}
const search = (backend: LocalMemoryBackend, query: string) => backend.search({ queries: [query], match_mode: "ranked" })
const where = (result: { matches: Array<{ path: string; line: number }> }) => result.matches.map((m) => `${m.path}:${m.line}`).sort()

const SUMMARY = "rollout_summaries/2026-03-01T10-00-00-aB3x-kafka.md"

describe("the sweep stamp", () => {
  beforeEach(() => {
    write("MEMORY.md", "## Kafka\n- the kafka brokers restart on sundays\n")
    write(SUMMARY, "session_id: ses_a\n\nAbout kafka partitions.\n")
    write("rollout_summaries/2026-03-02T10-00-00-cD4y-redis.md", "session_id: ses_b\n\nAbout redis.\n")
    write("skills/kafka/SKILL.md", "# Kafka\nRebalance the kafka partitions by hand.\n")
  })

  it("lets a new process check only the files edited in place while the last full check is recent", async () => {
    expect((await search(process(), "kafka")).files_scanned).toBe(4)
    // Unchanged folders, a recent check: only MEMORY.md and the skill are looked at.
    const second = await search(process(), "kafka")
    expect(second.files_scanned).toBe(2)
    expect(where(second)).toEqual(["MEMORY.md:1", `${SUMMARY}:3`, "skills/kafka/SKILL.md:1"])
    // An edit in place of MEMORY.md is seen by the next process at once.
    fs.writeFileSync(path.join(root, "MEMORY.md"), "## Kafka\n- the brokers now restart on mondays\n")
    expect(where(await search(process(), "mondays"))).toEqual(["MEMORY.md:1"])
  })

  it("makes a full check when a folder changed: a file added, removed or renamed", async () => {
    await search(process(), "kafka")
    write("rollout_summaries/2026-03-03T10-00-00-eF5z-zookeeper.md", "session_id: ses_c\n\nAbout zookeeper.\n")
    const added = await search(process(), "zookeeper")
    expect(added.files_scanned).toBe(5)
    expect(where(added)).toEqual(["rollout_summaries/2026-03-03T10-00-00-eF5z-zookeeper.md:3"])
    fs.rmSync(path.join(root, "skills/kafka/SKILL.md"))
    expect(where(await search(process(), "rebalance"))).toEqual([])
    fs.renameSync(path.join(root, SUMMARY), path.join(root, "rollout_summaries/2026-03-01T10-00-00-aB3x-renamed.md"))
    expect(where(await search(process(), "partitions"))).toEqual(["rollout_summaries/2026-03-01T10-00-00-aB3x-renamed.md:3"])
  })

  it("lstats every rollout summary once the last full check is FULL_SWEEP_MS old, and sees one edited in place", async () => {
    await search(process(), "kafka")
    clock += FULL_SWEEP_MS
    // Nothing changed: every file is looked at, the stamp renewed, and the next process trusts it again.
    expect((await search(process(), "kafka")).files_scanned).toBe(4)
    expect((await search(process(), "kafka")).files_scanned).toBe(2)
    fs.writeFileSync(path.join(root, SUMMARY), "session_id: ses_a\n\nAbout kafka and its zookeeper.\n")
    clock += FULL_SWEEP_MS
    expect(where(await search(process(), "zookeeper"))).toEqual([`${SUMMARY}:3`])
  })

  it("never shows a rollout summary's old text, even while the stamp is trusted", async () => {
    await search(process(), "partitions")
    fs.writeFileSync(path.join(root, SUMMARY), "session_id: ses_a\n\nNothing about it any more.\n")
    const result = await search(process(), "partitions")
    expect(result.matches.map((m) => m.text).join("\n")).not.toContain("About kafka partitions")
  })

  it("makes a full check after the plugin said it changed the folder", async () => {
    const backend = process()
    await search(backend, "kafka")
    backend.invalidate()
    expect((await search(backend, "kafka")).files_scanned).toBe(4)
    expect((await search(backend, "kafka")).files_scanned).toBe(2)
  })
})

describe("opening the index", () => {
  it("reads no page beyond the header and schema, and builds the index again after damage met in a search", async () => {
    write("MEMORY.md", "## Pool\n- pgbouncer pool size is 40\n")
    expect(where(await search(process(), "pgbouncer"))).toEqual(["MEMORY.md:1"])
    const statements: string[] = []
    let damaged = true
    const connect = (file: string): SqlDatabase => {
      const db = openSqlite(file)
      const check = (sql: string) => {
        statements.push(sql)
        if (damaged && sql.includes("bm25(")) {
          damaged = false
          throw Object.assign(new Error("database disk image is malformed"), { code: "SQLITE_CORRUPT" })
        }
      }
      return { driver: db.driver, exec: (sql) => (check(sql), db.exec(sql)), prepare: (sql) => (check(sql), db.prepare(sql)), close: () => db.close() }
    }
    const reasons: string[] = []
    const backend = new LocalMemoryBackend({ root, index: { file: index, now: () => clock, settleMs: 0, connect, onRebuild: (reason) => reasons.push(reason) } })
    opened.push(backend)
    expect(where(await search(backend, "pgbouncer"))).toEqual(["MEMORY.md:1"])
    expect(statements.some((sql) => /quick_check|integrity_check/.test(sql))).toBe(false)
    expect(reasons).toEqual([expect.stringContaining("malformed")])
    expect(fs.readdirSync(home).filter((name) => name.includes("corrupt"))).toEqual([])
  })
})
