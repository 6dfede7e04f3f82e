// recall's receipts: which memory files and lines a session's replies cited, how often and when
// last, in JSON and text, and that forgetting the session takes them with it.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { runCliIn } from "./run-cli.js"

const NOW = Date.UTC(2026, 11, 1, 12)
const MINUTE = 60_000

type Cited = { path: string; start_line: number; end_line: number; count: number; last_cited: string; heading: string | null }

function home() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cli-cited-"))
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }))
  const dir = path.join(root, "home")
  fs.mkdirSync(path.join(dir, "memories"), { recursive: true })
  fs.writeFileSync(path.join(dir, "memories", "MEMORY.md"), "# Memory\n\n- deploys use make ship\n- tests need the vpn\n")
  const catalog = <T>(fn: (db: SqlDatabase) => T): T => {
    const { db } = openDatabase(path.join(dir, "memory.db"), { now: () => NOW })
    try {
      return fn(db)
    } finally {
      db.close()
    }
  }
  const inHome = (...argv: string[]) => runCliIn(root, [...argv, "--home", dir], NOW)
  return { catalog, inHome }
}

function learn(db: SqlDatabase, sessionId: string): void {
  const jobs = new Stage1Jobs(db, () => NOW)
  const claim = jobs.claim({ sessionId, updatedAt: NOW - MINUTE }, { workerId: "w", maxRunning: 9 })
  if (claim.type !== "claimed") throw new Error(claim.type)
  jobs.succeed(sessionId, claim.token, { rawMemory: "- something", rolloutSummary: "Learned something.", slug: "s", cwd: "/p" })
}

describe("recall's cited memory", () => {
  it("lists both entries a session's replies cited, with counts and when last, until the session is forgotten", async () => {
    const { catalog, inHome } = home()
    catalog((db) => {
      learn(db, "ses_alpha")
      let clock = NOW - 10 * MINUTE
      const store = new MemoryStore(db, () => clock)
      store.recordCitation("prt_1", "ses_alpha", [{ path: "MEMORY.md", start: 3, end: 3 }, { path: "MEMORY.md", start: 4, end: 4 }])
      clock = NOW - 5 * MINUTE
      store.recordCitation("prt_2", "ses_alpha", [{ path: "MEMORY.md", start: 3, end: 3 }])
      // The same part seen again by another hook adds nothing.
      store.recordCitation("prt_2", "ses_alpha", [{ path: "MEMORY.md", start: 3, end: 3 }])
      // Another session's citations are its own.
      store.recordCitation("prt_3", "ses_other", [{ path: "MEMORY.md", start: 4, end: 4 }])
    })

    const ran = await inHome("recall", "ses_alpha")
    expect(ran.code).toBe(0)
    expect(ran.json.cited as Cited[]).toEqual([
      { path: "MEMORY.md", start_line: 3, end_line: 3, count: 2, last_cited: new Date(NOW - 5 * MINUTE).toISOString(), heading: "- deploys use make ship" },
      { path: "MEMORY.md", start_line: 4, end_line: 4, count: 1, last_cited: new Date(NOW - 10 * MINUTE).toISOString(), heading: "- tests need the vpn" },
    ])
    const text = (await inHome("recall", "ses_alpha", "--text")).stdout
    expect(text).toContain("cited memory:\n")
    expect(text).toContain(`- MEMORY.md:3-3 (- deploys use make ship): cited 2x, last ${new Date(NOW - 5 * MINUTE).toISOString()}`)
    expect(text).toContain("- MEMORY.md:4-4 (- tests need the vpn): cited 1x")

    expect((await inHome("forget", "ses_alpha")).code).toBe(0)
    const after = await inHome("recall", "ses_alpha")
    expect(after.json.cited).toEqual([])
    expect((await inHome("recall", "ses_alpha", "--text")).stdout).toContain("no reply of this session cited memory")
    // Forgetting one session leaves the others' receipts.
    expect(((await inHome("recall", "ses_other")).json.cited as Cited[]).map((c) => c.count)).toEqual([1])
  })

  it("shows a cited path as redacted, with no heading read through it, and a range past the end without one", async () => {
    const { catalog, inHome } = home()
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    catalog((db) => {
      learn(db, "ses_alpha")
      const store = new MemoryStore(db, () => NOW)
      store.recordCitation("prt_1", "ses_alpha", [{ path: `notes/${secret}.md`, start: 1, end: 2 }, { path: "MEMORY.md", start: 90, end: 99 }, { path: "../outside.md", start: 1, end: 1 }])
    })
    const ran = await inHome("recall", "ses_alpha")
    expect(ran.code).toBe(0)
    expect(JSON.stringify(ran.json)).not.toContain(secret)
    const cited = ran.json.cited as Cited[]
    expect(cited).toHaveLength(3)
    for (const c of cited) expect(c.heading, c.path).toBeNull()
  })
})
