// Records follow their session's project as a listing places it (D26's re-key of a home made under
// an older project rule): each listed session's records take its project, records of unlisted
// sessions follow the one place their old key went, and nothing a record's own cleaning kept out
// comes back through a new key or name.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { followProjects, type CurrentProject } from "../../src/store/record-projects.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"

let dir: string
let db: SqlDatabase

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "record-projects-"))
  db = openDatabase(path.join(dir, "memory.db")).db
})
afterEach(() => {
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

function record(id: string, cwd: string, project?: { key: string; name: string }): void {
  const jobs = new Stage1Jobs(db)
  const claim = jobs.claim({ sessionId: id, updatedAt: 1 }, { workerId: "w", maxRunning: 99 })
  if (claim.type !== "claimed") throw new Error(claim.type)
  jobs.succeed(id, claim.token, { rawMemory: "- x", rolloutSummary: "x", slug: null, cwd, ...(project ? { project } : {}) })
}

const projects = () => Object.fromEntries(db.prepare("SELECT session_id, project_key, project_name FROM stage1_outputs ORDER BY session_id").all<{ session_id: string; project_key: string | null; project_name: string | null }>().map((row) => [row.session_id, [row.project_key, row.project_name]]))
const current = (entries: Record<string, CurrentProject>) => new Map(Object.entries(entries))

describe("followProjects", () => {
  it("moves a listed session's records (its compacted segments too) to its project, and unlisted records of the same old key with them", () => {
    // A closed segment's record first: recording it drops an older open-segment record.
    record("ses_a#1", "/src/clone-a", { key: "git:/src/clone-a/.git", name: "clone-a" })
    record("ses_a", "/src/clone-a", { key: "git:/src/clone-a/.git", name: "clone-a" })
    record("ses_b", "/elsewhere/clone-b", { key: "git:/elsewhere/clone-b/.git", name: "clone-b" })
    record("ses_archived", "/src/clone-a/docs", { key: "git:/src/clone-a/.git", name: "clone-a" })
    record("ses_other", "/src/other", { key: "git:/src/other/.git", name: "other" })
    const moved = followProjects(db, current({ ses_a: { key: "host:6067841925f7", name: "clone-a" }, ses_b: { key: "host:6067841925f7", name: "clone-b" } }))
    expect(moved).toBe(4)
    expect(projects()).toEqual({
      ses_a: ["host:6067841925f7", "clone-a"],
      "ses_a#1": ["host:6067841925f7", "clone-a"],
      ses_b: ["host:6067841925f7", "clone-b"],
      ses_archived: ["host:6067841925f7", "clone-a"],
      ses_other: ["git:/src/other/.git", "other"],
    })
    // Nothing left to move.
    expect(followProjects(db, current({ ses_a: { key: "host:6067841925f7", name: "clone-a" } }))).toBe(0)
  })

  it("renames the `.bare` layout's records and re-keys OpenCode 2's hashed plain folders, from text the record holds", () => {
    record("ses_m", "/src/proj/main", { key: "git:/src/proj/.bare", name: ".bare" })
    record("ses_n", "/src/notes", { key: "host:9b19fd5f0426a7399cef6559334beed84e9b2cc6", name: "notes" })
    followProjects(db, current({ ses_m: { key: "git:/src/proj/.bare", name: "proj" }, ses_n: { key: "dir:/src/notes", name: "notes" } }))
    expect(projects()).toEqual({ ses_m: ["git:/src/proj/.bare", "proj"], ses_n: ["dir:/src/notes", "notes"] })
  })

  it("clears the project of a session whose folder is no project now (a home behind a link), and of its old key's unlisted records", () => {
    record("ses_h", "/data/home/u", { key: "dir:/data/home/u", name: "u" })
    record("ses_h2", "/data/home/u", { key: "dir:/data/home/u", name: "u" })
    followProjects(db, current({ ses_h: null }))
    expect(projects()).toEqual({ ses_h: [null, null], ses_h2: [null, null] })
  })

  it("takes no key or name with text the record's own cleaning kept out", () => {
    // Extraction cut the private codename from this record; a listing (title and folder only) did not.
    record("ses_p", "/src/-tools", { key: "dir:/src/-tools", name: "-tools" })
    followProjects(db, current({ ses_p: { key: "dir:/src/zeta-tools", name: "github.com/acme/zeta-tools" } }))
    expect(projects()).toEqual({ ses_p: ["dir:/src/-tools", "-tools"] })
    // An opaque id is taken, the name is not.
    followProjects(db, current({ ses_p: { key: "host:421627ddecb5d8121bbc38f403de81320c0efdec", name: "github.com/acme/zeta-tools" } }))
    expect(projects()).toEqual({ ses_p: ["host:421627ddecb5d8121bbc38f403de81320c0efdec", "-tools"] })
  })

  it("leaves unlisted records alone when their old key went to more than one place", () => {
    record("ses_1", "/src/mono/a", { key: "git:/src/mono/.git", name: "mono" })
    record("ses_2", "/src/mono/b", { key: "git:/src/mono/.git", name: "mono" })
    record("ses_3", "/src/mono/c", { key: "git:/src/mono/.git", name: "mono" })
    followProjects(db, current({ ses_1: { key: "map:A", name: "A" }, ses_2: { key: "host:abc123", name: "mono" } }))
    // `map:A` holds a name the record never held, so ses_1 stays; ses_3 stays too, as its old key now belongs in two places.
    expect(projects()).toEqual({ ses_1: ["git:/src/mono/.git", "mono"], ses_2: ["host:abc123", "mono"], ses_3: ["git:/src/mono/.git", "mono"] })
  })
})
