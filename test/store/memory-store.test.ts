import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { JOBS } from "../../src/constants.js"
import { openDatabase } from "../../src/store/database.js"
import { leaseOwners } from "../../src/store/lease-owner.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { VersionStore } from "../../src/store/version-store.js"

let file: string
let clock: number
const opened: SqlDatabase[] = []

function connect(): MemoryStore {
  const { db } = openDatabase(file)
  opened.push(db)
  return new MemoryStore(db, () => clock)
}

function seedOutput(store: MemoryStore, sessionId: string): void {
  store.db
    .prepare(
      `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at)
       VALUES ($id, 1, 'raw', 'summary', 1)`,
    )
    .run({ id: sessionId })
}

const version = (store: MemoryStore, owners?: ReturnType<typeof leaseOwners>) => new VersionStore("v1", store.db, () => clock, owners)

const usage = (store: MemoryStore, id: string) =>
  store.db.prepare("SELECT usage_count, last_usage FROM stage1_outputs WHERE session_id = $id").get<{ usage_count: number; last_usage: number | null }>({ id })

beforeEach(() => {
  file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-ms-")), "memory.db")
  clock = 1_000_000
})
afterEach(() => {
  for (const db of opened.splice(0)) db.close()
})

describe("MemoryStore", () => {
  it("reads unknown sessions as enabled and keeps the mode it is given", () => {
    const store = connect()
    expect(store.mode("ses_new")).toBe("enabled")
    expect(store.setMode("ses_new", "disabled")).toBe("enabled")
    expect(store.setMode("ses_new", "polluted")).toBe("disabled")
    expect(store.mode("ses_new")).toBe("polluted")
  })

  it("counts a cited part once, even when two connections record it", () => {
    const a = connect()
    const b = connect()
    seedOutput(a, "ses_src")
    clock = 2_000_000
    // What Memory.recordCitation does: a part counted for the first time bumps the cited sessions.
    const record = (store: MemoryStore, part: string, sessions: string[], files: { path: string; start: number; end: number }[]) => {
      const first = store.recordCitation(part, "ses_user", files)
      if (first) version(store).bumpUsage(sessions)
      return first
    }
    expect(record(a, "prt_1", ["ses_src", "ses_src"], [{ path: "MEMORY.md", start: 3, end: 5 }])).toBe(true)
    expect(record(b, "prt_1", ["ses_src"], [{ path: "MEMORY.md", start: 3, end: 5 }])).toBe(false)
    expect(usage(a, "ses_src")).toEqual({ usage_count: 1, last_usage: 2_000_000 })
    expect(record(b, "prt_2", ["ses_src", "ses_unknown"], [])).toBe(true)
    expect(usage(b, "ses_src")?.usage_count).toBe(2)
    const cited = a.db.prepare("SELECT path, usage_count, last_range FROM cited_files").all()
    expect(cited).toEqual([{ path: "MEMORY.md", usage_count: 1, last_range: "3-5" }])
    // Usage is bookkeeping only: it queues no consolidation (an earlier port re-ran phase 2 after every citation).
    expect(version(a).counts().jobs).toEqual([])
  })

  it("resets outputs, jobs and citations, keeps session modes and version stamps, and leaves phase 2 done with no success (no cooldown)", () => {
    const store = connect()
    const v1 = version(store)
    seedOutput(store, "ses_a")
    store.setMode("ses_b", "disabled")
    expect(store.stampVersion("ses_b", "v2")).toBe("v2")
    store.recordCitation("prt_1", undefined, [{ path: "MEMORY.md", start: 1, end: 1 }])
    store.db.prepare("INSERT INTO jobs (kind, job_key, status, retry_remaining) VALUES ('memory_stage1', 'ses_a', 'done', 3)").run()
    clock = 5_000_000
    expect(v1.reset()).toEqual({ type: "reset", outputs: 1, jobs: 1 })
    store.clearCitations()
    expect(v1.counts().outputs).toBe(0)
    expect(store.counts()).toMatchObject({ citedParts: 0, citedFiles: 0, sessionsByVersion: { v1: 0, v2: 1 } })
    expect(store.mode("ses_b")).toBe("disabled")
    expect(store.stampedVersion("ses_b")).toBe("v2")
    expect(v1.phase2Job()).toMatchObject({ status: "done", finished_at: 5_000_000, last_success_at: null })
    expect(v1.counts().jobs).toEqual([{ kind: JOBS.PHASE2, status: "done", count: 1 }])
  })

  it("stamps a session's version once: the first stamp wins, later ones and peeks read it", () => {
    const a = connect()
    const b = connect()
    expect(a.stampedVersion("ses_x")).toBeUndefined()
    expect(a.stampVersion("ses_x", "v2")).toBe("v2")
    expect(b.stampVersion("ses_x", "v1")).toBe("v2")
    expect(b.stampedVersion("ses_x")).toBe("v2")
    expect(a.counts().sessionsByVersion).toEqual({ v1: 0, v2: 1 })
  })

  it("refuses to reset while another process holds a live consolidation lease", () => {
    const mine = version(connect())
    const theirs = connect()
    seedOutput(theirs, "ses_a")
    theirs.db
      .prepare("INSERT INTO jobs (kind, job_key, status, lease_until, retry_remaining) VALUES ($kind, $key, 'running', $until, 3)")
      .run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, until: clock + 60_000 })
    expect(mine.reset()).toEqual({ type: "refused_consolidation_running", leaseUntil: clock + 60_000 })
    expect(mine.counts().outputs).toBe(1)
    // A lease whose owner process is gone on this machine does not block the reset.
    const boot = "boot-1"
    theirs.db.prepare("UPDATE jobs SET owner_pid = 4242, owner_boot = $boot WHERE kind = $kind").run({ boot, kind: JOBS.PHASE2 })
    const judge = new VersionStore("v1", mine.db, () => clock, leaseOwners({ self: { pid: 1, boot }, exists: (pid) => pid !== 4242 }))
    expect(judge.reset().type).toBe("reset")
    seedOutput(theirs, "ses_b")
    theirs.db
      .prepare("UPDATE jobs SET status = 'running', lease_until = $until, owner_pid = NULL WHERE kind = $kind")
      .run({ kind: JOBS.PHASE2, until: clock + 60_000 })
    expect(mine.reset().type).toBe("refused_consolidation_running")
    // Once the lease has run out, the reset goes through.
    clock += 120_000
    expect(mine.reset().type).toBe("reset")
  })
})
