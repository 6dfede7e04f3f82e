// What an import and an export refuse to do, and what an import keeps of the home it lands in:
// never swap the databases under a running OpenCode, never discard memory without --replace (but
// take a home a reset emptied), keep the home's own modes, forget times and reset epoch, and never
// export while a session waits to be forgotten.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it, onTestFinished } from "vitest"
import { ArchiveError, type ArchiveErrorCode } from "../../src/archive/errors.js"
import { exportHome } from "../../src/archive/export.js"
import { importArchive } from "../../src/archive/import.js"
import { cliHost } from "../../src/cli/cli-host.js"
import { Memory } from "../../src/memory.js"
import { CheckpointStore } from "../../src/store/checkpoint-store.js"
import { openDatabase } from "../../src/store/database.js"
import { HomeInstances } from "../../src/store/instances.js"
import { leaseBoot, leaseOwners } from "../../src/store/lease-owner.js"
import { MIGRATIONS, V2_MIGRATIONS } from "../../src/store/migrations.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import { ConsolidationReviews } from "../../src/store/reviews.js"
import { HomeSettings } from "../../src/store/settings.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { rowsOf, snapshot } from "./home-files.js"

const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url))
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const now = () => NOW
const HOUR = 60 * 60 * 1000

/** A fresh folder, removed when the test ends. */
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-import-guard-"))
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

function withDb<T>(file: string, fn: (db: SqlDatabase) => T, migrations = MIGRATIONS): T {
  const { db } = openDatabase(file, { migrations, now })
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

const catalogOf = (home: string) => path.join(home, "memory.db")

function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/** A learned record of `sessionId`, stored the way phase 1 stores one. */
function learn(db: SqlDatabase, sessionId: string, text: string): void {
  const jobs = new Stage1Jobs(db, now)
  const claim = jobs.claim({ sessionId, updatedAt: NOW - HOUR }, { workerId: "w", maxRunning: 9 })
  if (claim.type !== "claimed") throw new Error(`could not claim ${sessionId}: ${claim.type}`)
  jobs.succeed(sessionId, claim.token, { rawMemory: `- ${text}`, rolloutSummary: `Learned: ${text}.`, slug: "s", cwd: "/p" })
}

/** A home with memory in every place a reset empties: a record, a checkpoint, a review, a forget, both folders. */
function fullHome(): string {
  const home = path.join(tmp(), "home")
  withDb(catalogOf(home), (db) => {
    learn(db, "ses_full", "the deploy uses make ship")
    learn(db, "ses_gone", "the gone session's fact")
    new CheckpointStore(db, now).update("ses_full", () => ({ state: '{"todos":[]}', result: undefined }))
    new ConsolidationReviews(db, now).add("v1", { inputsAdded: ["rollout_summaries/a.md"], inputsRemoved: [], notes: [], changed: ["MEMORY.md"], sessions: 1 }, "+- the deploy uses make ship\n")
    db.prepare("INSERT INTO forget_queue (session_id, queued_at) VALUES ('ses_gone', $at)").run({ at: NOW - 1 })
    db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_out', 'disabled', $at)").run({ at: NOW - 2 })
  })
  write(path.join(home, "memories", "MEMORY.md"), "# Memory\n- the deploy uses make ship\n")
  write(path.join(home, "memories", ".git", "HEAD"), "ref: refs/heads/main\n")
  withDb(path.join(home, "memory_v2.db"), (db) => learn(db, "ses_v2", "v2 knows this"), V2_MIGRATIONS)
  write(path.join(home, "memories_v2", "MEMORY.md"), "# V2 memory\n")
  return home
}

/** The archive a second machine would bring: one record and its MEMORY.md. */
function archiveFrom(build?: (db: SqlDatabase) => void): string {
  const home = path.join(tmp(), "source")
  withDb(catalogOf(home), (db) => {
    learn(db, "ses_archived", "the archive's fact")
    build?.(db)
  })
  write(path.join(home, "memories", "MEMORY.md"), "# Memory\n- the archive's fact\n")
  return exportHome(home, { now }).archive
}

/** An OpenCode process that has `home` open, as the plugin registers itself at start. */
function register(home: string, owners = leaseOwners()): string {
  const id = `${owners.self.pid}:instance`
  withDb(catalogOf(home), (db) => new HomeInstances(db, owners, now).register(id))
  return id
}


function refusal(fn: () => unknown): ArchiveError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ArchiveError)
    return error as ArchiveError
  }
  throw new Error("expected an ArchiveError")
}

/** Refused with `code`, the home's files exactly as they were. */
function expectRefused(archive: string, home: string, code: ArchiveErrorCode, options: { replace?: boolean } = {}): ArchiveError {
  const before = snapshot(home)
  const error = refusal(() => importArchive(archive, home, { ...options, now }))
  expect(error.code, error.message).toBe(code)
  expect(snapshot(home)).toEqual(before)
  return error
}

const sessionIds = (home: string) => rowsOf(catalogOf(home)).stage1_outputs!.map((row) => row.session_id)

/** A home as `controls.reset()` leaves it, run by the core itself over `fullHome()`. */
async function resetHome(): Promise<string> {
  const home = fullHome()
  const memory = new Memory({ home }, { host: cliHost(), env: {}, homedir: tmp(), passive: true, packageDir: PACKAGE_DIR, now })
  try {
    expect(memory.openStores()).toBe(true)
    // Both versions' records: two in memory.db, one in memory_v2.db.
    expect(await memory.controls.reset()).toMatchObject({ type: "reset", outputs: 3 })
  } finally {
    await memory.dispose()
  }
  return home
}

describe("an import beside a running OpenCode", () => {
  it("is refused, with and without replace, naming the process, while memory.db lists a live instance", () => {
    const archive = archiveFrom()
    // An empty home, so only the running OpenCode can be what refuses the import without replace.
    const empty = path.join(tmp(), "empty")
    withDb(catalogOf(empty), () => undefined)
    register(empty)
    const full = fullHome()
    register(full)
    for (const [home, replace] of [[empty, false], [full, true]] as const) {
      const error = expectRefused(archive, home, "opencode_running", { replace })
      expect(error.message).toContain(`process ${process.pid} on ${os.hostname()}`)
      expect(error.message).toContain("nothing was changed")
    }
    expect(sessionIds(full)).toEqual(["ses_full", "ses_gone"])
    // The refusal dropped nothing: the live registration is still there for the next check.
    expect(rowsOf(catalogOf(full)).plugin_instances).toHaveLength(1)
  })

  it("goes through once the instance unregistered, with and without replace", () => {
    const archive = archiveFrom()
    const empty = path.join(tmp(), "empty")
    withDb(catalogOf(empty), () => undefined)
    const full = fullHome()
    for (const home of [empty, full]) {
      const id = register(home)
      withDb(catalogOf(home), (db) => new HomeInstances(db, leaseOwners(), now).unregister(id))
    }
    expect(importArchive(archive, empty, { now }).files).toBe(1)
    expect(importArchive(archive, full, { replace: true, now }).files).toBe(1)
    for (const home of [empty, full]) expect(sessionIds(home)).toEqual(["ses_archived"])
  })

  it("goes through when the registered process is dead on this boot, as after OpenCode was killed without dispose", () => {
    const archive = archiveFrom()
    // A process that has exited: its pid names nothing on this boot any more.
    const exited = spawnSync(process.execPath, ["-e", ""]).pid!
    expect(exited).toBeGreaterThan(0)
    const home = fullHome()
    register(home, leaseOwners({ self: { pid: exited, boot: leaseBoot() } }))
    expect(importArchive(archive, home, { replace: true, now }).files).toBe(1)
    expect(sessionIds(home)).toEqual(["ses_archived"])
  })
})

describe("an import without replace into a home that was reset", () => {
  it("is accepted: a reset home holds no memory, though its modes, epoch and ledger rows stay", async () => {
    const home = await resetHome()
    // What the reset kept is there, so the acceptance is not that of an empty folder.
    const kept = rowsOf(catalogOf(home))
    expect(kept.session_meta!.map((row) => row.session_id)).toContain("ses_out")
    expect(kept.settings!.map((row) => row.key)).toContain("reset_epoch")
    expect(kept.jobs!.length).toBeGreaterThan(0)
    expect(importArchive(archiveFrom(), home, { now }).files).toBe(1)
    expect(sessionIds(home)).toEqual(["ses_archived"])
    expect(fs.readFileSync(path.join(home, "memories", "MEMORY.md"), "utf8")).toContain("the archive's fact")
  })

  it("is accepted with the memory folders left as git baselines only", async () => {
    const home = await resetHome()
    write(path.join(home, "memories", ".git", "HEAD"), "ref: refs/heads/main\n")
    write(path.join(home, "memories_v2", ".git-baseline-next", "HEAD"), "ref: refs/heads/main\n")
    fs.mkdirSync(path.join(home, "memories", "rollout_summaries"))
    expect(importArchive(archiveFrom(), home, { now }).files).toBe(1)
  })

  const additions: Array<[string, string, (home: string) => void]> = [
    ["a record", "memory.db", (home) => withDb(catalogOf(home), (db) => learn(db, "ses_new", "a new fact"))],
    ["a checkpoint", "memory.db", (home) => withDb(catalogOf(home), (db) => new CheckpointStore(db, now).update("ses_new", () => ({ state: "{}", result: undefined })))],
    ["a review", "memory.db", (home) => withDb(catalogOf(home), (db) => new ConsolidationReviews(db, now).add("v1", { inputsAdded: [], inputsRemoved: [], notes: [], changed: ["MEMORY.md"], sessions: 0 }, "+x\n"))],
    ["a forget-queue row", "memory.db", (home) => withDb(catalogOf(home), (db) => db.prepare("INSERT INTO forget_queue (session_id, queued_at) VALUES ('ses_new', 1)").run())],
    ["a V2 record", "memory_v2.db", (home) => withDb(path.join(home, "memory_v2.db"), (db) => learn(db, "ses_new", "a v2 fact"), V2_MIGRATIONS)],
    ["a V2 forget-queue row", "memory_v2.db", (home) => withDb(path.join(home, "memory_v2.db"), (db) => db.prepare("INSERT INTO forget_queue (session_id, queued_at) VALUES ('ses_new', 1)").run(), V2_MIGRATIONS)],
    ["a file in the memory folder", "memories", (home) => write(path.join(home, "memories", "notes", "n.md"), "a note\n")],
    ["an empty file in the V2 folder", "memories_v2", (home) => write(path.join(home, "memories_v2", "x.md"), "")],
  ]
  for (const [what, entry, add] of additions) {
    it(`is refused as home_not_empty once the home holds ${what}, naming ${entry}`, async () => {
      const home = await resetHome()
      add(home)
      const error = expectRefused(archiveFrom(), home, "home_not_empty")
      expect(error.message).toContain(`(${entry})`)
    })
  }
})

describe("a -wal sidecar in a home", () => {
  /**
   * A home whose memory.db-wal holds committed rows memory.db does not, as a process killed with
   * the database open leaves it: the files are copied while the writer still has them open.
   */
  function crashedHome(fill: (db: SqlDatabase) => void, options: { withDatabase: boolean }): string {
    const live = path.join(tmp(), "live")
    const { db } = openDatabase(catalogOf(live), { now })
    try {
      db.exec("PRAGMA wal_autocheckpoint = 0")
      fill(db)
      const home = path.join(tmp(), "crashed")
      fs.mkdirSync(home)
      expect(fs.statSync(`${catalogOf(live)}-wal`).size).toBeGreaterThan(0)
      if (options.withDatabase) fs.copyFileSync(catalogOf(live), catalogOf(home))
      fs.copyFileSync(`${catalogOf(live)}-wal`, `${catalogOf(home)}-wal`)
      return home
    } finally {
      db.close()
    }
  }

  it("is judged with its database: a record committed only to the WAL makes the home hold memory", () => {
    const home = crashedHome((db) => learn(db, "ses_wal", "only in the WAL"), { withDatabase: true })
    // The database file alone does not have it: only reading it with its WAL finds memory.
    const alone = path.join(tmp(), "alone.db")
    fs.copyFileSync(catalogOf(home), alone)
    expect(rowsOf(alone).stage1_outputs ?? []).toEqual([])
    const error = refusal(() => importArchive(archiveFrom(), home, { now }))
    expect(error.code, error.message).toBe("home_not_empty")
    expect(error.message).toContain("(memory.db)")
    // SQLite may fold the WAL into the database while reading it; the record itself is kept.
    expect(sessionIds(home)).toEqual(["ses_wal"])
  })

  it("is judged with its database: a WAL of modes alone leaves the home without memory", () => {
    const home = crashedHome((db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_m', 'disabled', 1)").run(), { withDatabase: true })
    expect(importArchive(archiveFrom(), home, { now }).files).toBe(1)
    expect(rowsOf(catalogOf(home)).session_meta).toEqual([expect.objectContaining({ session_id: "ses_m", memory_mode: "disabled" })])
  })

  it("counts as memory when its database is missing, whatever it holds", () => {
    const home = crashedHome((db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_m', 'enabled', 1)").run(), { withDatabase: false })
    const error = expectRefused(archiveFrom(), home, "home_not_empty")
    expect(error.message).toContain("(memory.db-wal)")
    expect(fs.readdirSync(home)).toEqual(["memory.db-wal"])
  })
})

describe("the home's own choices across an import", () => {
  it("keep a session disabled in the home disabled, though the archive says enabled", () => {
    const archive = archiveFrom((db) => {
      learn(db, "ses_shared", "the shared session's fact")
      db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_shared', 'enabled', $at)").run({ at: NOW })
    })
    const meta = JSON.parse(archive).databases["memory.db"].tables.session_meta
    expect(meta.rows.map((row: unknown[]) => row[meta.columns.indexOf("memory_mode")])).toEqual(["enabled"])
    for (const replace of [false, true]) {
      const home = path.join(tmp(), "home")
      withDb(catalogOf(home), (db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_shared', 'disabled', $at)").run({ at: NOW - HOUR }))
      if (replace) withDb(catalogOf(home), (db) => learn(db, "ses_local", "held here"))
      importArchive(archive, home, { replace, now })
      const rows = rowsOf(catalogOf(home)).session_meta!
      expect(rows.find((row) => row.session_id === "ses_shared")).toMatchObject({ memory_mode: "disabled" })
      // The archive's record of it came along; the plugin's next pass forgets it (kept out keeps nothing).
      expect(sessionIds(home)).toContain("ses_shared")
    }
  })

  it("keep the later forget time of a session, the home's or the archive's", () => {
    const EARLY = NOW - 2 * HOUR
    const LATE = NOW - HOUR
    const forgetAt = (db: SqlDatabase, id: string, at: number) =>
      db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at, forgotten_before) VALUES ($id, 'enabled', $at, $at)").run({ id, at })
    const archive = archiveFrom((db) => {
      forgetAt(db, "ses_home_later", EARLY)
      forgetAt(db, "ses_archive_later", LATE)
    })
    const home = path.join(tmp(), "home")
    withDb(catalogOf(home), (db) => {
      forgetAt(db, "ses_home_later", LATE)
      forgetAt(db, "ses_archive_later", EARLY)
      forgetAt(db, "ses_home_only", EARLY)
    })
    importArchive(archive, home, { now })
    const forgotten = Object.fromEntries(rowsOf(catalogOf(home)).session_meta!.map((row) => [row.session_id, row.forgotten_before]))
    expect(forgotten).toEqual({ ses_home_later: LATE, ses_archive_later: LATE, ses_home_only: EARLY })
  })

  it("cannot bring back what a forget removed: the plugin's next pass drops imported records learned before the forget time", async () => {
    // The archive holds a record of ses_forgot learned an hour before NOW (learn() uses NOW - HOUR).
    const archive = archiveFrom((db) => learn(db, "ses_forgot", "the forgotten session's fact"))
    const home = path.join(tmp(), "home")
    withDb(catalogOf(home), (db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at, forgotten_before) VALUES ('ses_forgot', 'enabled', $at, $at)").run({ at: NOW - HOUR / 2 }))
    importArchive(archive, home, { now })
    expect(sessionIds(home)).toContain("ses_forgot")
    const memory = new Memory({ home }, { host: cliHost(), env: {}, homedir: home, packageDir: PACKAGE_DIR, now, passive: true })
    onTestFinished(() => memory.dispose())
    expect(memory.openStores()).toBe(true)
    expect(memory.forgetting.sweep()).toBe(1)
    expect(sessionIds(home)).not.toContain("ses_forgot")
    expect(sessionIds(home)).toContain("ses_archived")
    // A record learned after the forget time is what the session said later: it stays.
    withDb(catalogOf(home), (db) => db.prepare("UPDATE session_meta SET forgotten_before = $at WHERE session_id = 'ses_forgot'").run({ at: NOW - 2 * HOUR }))
    withDb(catalogOf(home), (db) => learn(db, "ses_forgot", "said after the forget"))
    expect(memory.forgetting.sweep()).toBe(0)
    expect(sessionIds(home)).toContain("ses_forgot")
  })

  it("keep the home's reset epoch when the archive's is older or missing, and take a newer one", () => {
    const epoch = (home: string) => withDb(catalogOf(home), (db) => new HomeSettings(db, now).resetEpoch())
    const cases: Array<[string, number | undefined, number, number]> = [
      ["older", NOW - 2 * HOUR, NOW - HOUR, NOW - HOUR],
      ["missing", undefined, NOW - HOUR, NOW - HOUR],
      ["newer", NOW - HOUR, NOW - 2 * HOUR, NOW - HOUR],
    ]
    for (const [name, archived, local, expected] of cases) {
      const archive = archiveFrom((db) => (archived === undefined ? undefined : new HomeSettings(db, now).setResetEpoch(archived)))
      const home = path.join(tmp(), "home")
      withDb(catalogOf(home), (db) => new HomeSettings(db, now).setResetEpoch(local))
      importArchive(archive, home, { now })
      expect(epoch(home), name).toBe(expected)
    }
  })

  it("do not include the archive's plugin instances: the exporting machine's processes mean nothing here", () => {
    const archive = archiveFrom((db) => {
      // Recently seen on another machine: here it would count as live for a day.
      new HomeInstances(db, leaseOwners({ self: { pid: 4242, boot: "another-machine" } }), now, "elsewhere").register("4242:elsewhere")
    })
    const instances = JSON.parse(archive).databases["memory.db"].tables.plugin_instances
    expect(instances.rows).toHaveLength(1)
    const home = path.join(tmp(), "home")
    importArchive(archive, home, { now })
    expect(rowsOf(catalogOf(home)).plugin_instances).toEqual([])
    // So the next import is not refused as if that machine's OpenCode were running here.
    expect(importArchive(archive, home, { replace: true, now }).files).toBe(1)
  })
})

describe("an export while forgetting is pending", () => {
  it("is refused, naming the session, whichever version's forget queue holds it, and writes nothing", () => {
    for (const [file, migrations, session] of [["memory.db", MIGRATIONS, "ses_v1_waiting"], ["memory_v2.db", V2_MIGRATIONS, "ses_v2_waiting"]] as const) {
      const home = path.join(tmp(), "home")
      withDb(catalogOf(home), (db) => learn(db, "ses_kept", "kept"))
      withDb(path.join(home, file), (db) => db.prepare("INSERT INTO forget_queue (session_id, queued_at) VALUES ($id, $at)").run({ id: session, at: NOW - 1 }), migrations)
      write(path.join(home, "memories", "MEMORY.md"), "# Memory\n- still names the waiting session's fact\n")
      const before = fs.readdirSync(home).sort()
      const error = refusal(() => exportHome(home, { now }))
      expect(error.code, error.message).toBe("forgetting_pending")
      expect(error.message).toContain(session)
      expect(error.message).toContain("1 session is waiting to be forgotten")
      expect(fs.readdirSync(home).sort()).toEqual(before)
      // Once a consolidation settled the queue, the same home exports.
      withDb(path.join(home, file), (db) => db.prepare("DELETE FROM forget_queue").run(), migrations)
      expect(exportHome(home, { now }).summary.files).toBe(1)
    }
  })
})
