// The command-line tool's share of forgetting, in process: forget and what status, recall and
// export say while the forgetting waits for a consolidation; export's sweep of sessions kept out;
// what reset says it keeps; and the list of sessions kept out.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import { CheckpointStore } from "../../src/store/checkpoint-store.js"
import { openDatabase } from "../../src/store/database.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { resetBaseline } from "../../src/write/phase2/git-baseline.js"
import { runCliIn, type Ran } from "./run-cli.js"

const NOW = Date.UTC(2026, 11, 1, 12)
const HOUR = 3_600_000

/** One test's home and the CLI pointed at it; everything goes when the test ends. */
interface Fixture {
  root: string
  home: string
  /** The CLI in process with `--home` set. */
  inHome(...argv: string[]): Promise<Ran>
  /** memory.db, opened as another process would open it. */
  catalog<T>(fn: (db: SqlDatabase) => T): T
}

function learn(db: SqlDatabase, sessionId: string, text: string, updatedAt: number): void {
  const jobs = new Stage1Jobs(db, () => NOW)
  const claim = jobs.claim({ sessionId, updatedAt }, { workerId: "w", maxRunning: 9 })
  if (claim.type !== "claimed") throw new Error(claim.type)
  jobs.succeed(sessionId, claim.token, { rawMemory: `- ${text}`, rolloutSummary: `Learned: ${text}.`, slug: "s", cwd: "/p" })
}

const ALPHA = "deploys use make ship"
const BETA = "tests need the vpn"
const GAMMA = "GAMMA-SECRET the staging password rotates on fridays"

/**
 * A home after one consolidation of ses_alpha and ses_beta (both in MEMORY.md, under a baseline),
 * and ses_gamma learned since (a record no consolidation has read yet), plus a checkpoint.
 */
async function homeWithMemory(): Promise<Fixture> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cli-forget-"))
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }))
  const home = path.join(root, "home")
  fs.mkdirSync(home)
  const catalog = <T>(fn: (db: SqlDatabase) => T): T => {
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    try {
      return fn(db)
    } finally {
      db.close()
    }
  }
  catalog((db) => {
    learn(db, "ses_alpha", ALPHA, NOW - 3 * HOUR)
    learn(db, "ses_beta", BETA, NOW - 3 * HOUR)
    const phase2 = new Phase2Jobs(db, () => NOW - 2 * HOUR)
    const claim = phase2.claim("w")
    if (claim.type !== "claimed") throw new Error(claim.type)
    phase2.succeed(claim.token, claim.watermark, [
      { sessionId: "ses_alpha", sourceUpdatedAt: NOW - 3 * HOUR },
      { sessionId: "ses_beta", sourceUpdatedAt: NOW - 3 * HOUR },
    ])
    learn(db, "ses_gamma", GAMMA, NOW - HOUR)
    new CheckpointStore(db, () => NOW).update("ses_beta", () => ({ state: "{}", result: undefined }))
  })
  const memories = path.join(home, "memories")
  fs.mkdirSync(memories, { recursive: true })
  fs.writeFileSync(path.join(memories, "memory_summary.md"), `v1\n## Deploying\nThe user ${ALPHA}.\n`)
  fs.writeFileSync(path.join(memories, "MEMORY.md"), `# Memory\n- ${ALPHA}\n- ${BETA}\n`)
  await resetBaseline(memories, () => NOW)
  return { root, home, inHome: (...argv) => runCliIn(root, [...argv, "--home", home], NOW), catalog }
}

type VersionStatus = { version: string; waiting_to_be_forgotten: string[] }
type VersionRecall = { version: string; records: Array<{ session_id: string; consolidated: boolean }>; jobs: unknown[] }

describe("forget", () => {
  it("forgets a consolidated session's records and queues its removal from the folder", async () => {
    const { root, inHome, catalog } = await homeWithMemory()
    const before = await inHome("recall", "ses_alpha")
    expect((before.json.versions as VersionRecall[]).find((v) => v.version === "v1")!.records).toEqual([expect.objectContaining({ session_id: "ses_alpha", consolidated: true })])

    // A session memory holds needs no question to OpenCode, so an OpenCode that cannot run is no obstacle.
    const ran = await inHome("forget", "ses_alpha", "--opencode", path.join(root, "no-such-opencode"))
    expect(ran).toMatchObject({ code: 0, json: { session_id: "ses_alpha", forgotten_from: ["v1"], forgetting_queued: ["v1"] } })
    // What it says from now on can be learned again; what it said before, never.
    expect(catalog((db) => db.prepare("SELECT memory_mode, forgotten_before FROM session_meta WHERE session_id = 'ses_alpha'").get())).toEqual({ memory_mode: "enabled", forgotten_before: NOW })
  })

  it("shows the session in status as waiting to be forgotten from v1, in JSON and text", async () => {
    const { inHome } = await homeWithMemory()
    expect(((await inHome("status")).json.versions as VersionStatus[]).every((v) => v.waiting_to_be_forgotten.length === 0)).toBe(true)
    await inHome("forget", "ses_alpha")
    const status = await inHome("status")
    expect(status.code).toBe(0)
    const versions = status.json.versions as VersionStatus[]
    expect(versions.find((v) => v.version === "v1")!.waiting_to_be_forgotten).toEqual(["ses_alpha"])
    expect(versions.find((v) => v.version === "v2")!.waiting_to_be_forgotten).toEqual([])
    expect((await inHome("status", "--text")).stdout).toContain("1 session waiting to be forgotten from v1")
  })

  it("leaves recall answering for the session, known with nothing learned", async () => {
    const { inHome } = await homeWithMemory()
    await inHome("forget", "ses_alpha")
    const recall = await inHome("recall", "ses_alpha")
    expect(recall.code).toBe(0)
    expect(recall.json).toMatchObject({ session_id: "ses_alpha", mode: "enabled" })
    for (const version of recall.json.versions as VersionRecall[]) {
      expect(version.records, version.version).toEqual([])
      expect(version.jobs, version.version).toEqual([])
    }
    // The other sessions are untouched.
    expect((await inHome("view", "--all")).json.records).toEqual(expect.arrayContaining([expect.objectContaining({ session_id: "ses_beta" })]))
  })

  it("makes export refuse until a consolidation removed it, writing no archive", async () => {
    const { root, inHome } = await homeWithMemory()
    await inHome("forget", "ses_alpha")
    const file = path.join(root, "memory.archive.json")
    const ran = await inHome("export", file)
    expect(ran).toMatchObject({ code: 1, json: { error: { code: "forgetting_pending" } } })
    expect((ran.json.error as { message: string }).message).toContain("ses_alpha")
    expect(fs.readdirSync(root).filter((name) => name.startsWith("memory.archive"))).toEqual([])
  })
})

describe("export", () => {
  it("first forgets the records of a session kept out by another process, so the archive does not carry them", async () => {
    const { root, inHome, catalog } = await homeWithMemory()
    // Another process set the mode (no forgetting ran here): the record is still in memory.db.
    catalog((db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_gamma', 'disabled', $at)").run({ at: NOW - 1 }))
    const recall = await inHome("recall", "ses_gamma")
    expect((recall.json.versions as VersionRecall[]).find((v) => v.version === "v1")!.records).toHaveLength(1)

    const file = path.join(root, "memory.archive.json")
    expect(await inHome("export", file)).toMatchObject({ code: 0, json: { file } })
    const archive = fs.readFileSync(file, "utf8")
    expect(archive).not.toContain("GAMMA-SECRET")
    // The rest of memory is there: the sweep took that one session only.
    expect(archive).toContain(ALPHA)
    expect(archive).toContain(BETA)
    expect((await inHome("recall", "ses_gamma")).json).toMatchObject({ mode: "disabled", versions: expect.arrayContaining([expect.objectContaining({ version: "v1", records: [], jobs: [] })]) })
  })

  it("refuses when the session kept out was consolidated: its text may still be in the folder", async () => {
    const { root, inHome, catalog } = await homeWithMemory()
    catalog((db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_beta', 'disabled', $at)").run({ at: NOW - 1 }))
    const file = path.join(root, "memory.archive.json")
    const ran = await inHome("export", file)
    expect(ran).toMatchObject({ code: 1, json: { error: { code: "forgetting_pending" } } })
    expect((ran.json.error as { message: string }).message).toContain("ses_beta")
    expect(fs.existsSync(file)).toBe(false)
    // The sweep did forget the record, and queued its removal from the folder.
    const status = await inHome("status")
    expect((status.json.versions as VersionStatus[]).find((v) => v.version === "v1")!.waiting_to_be_forgotten).toEqual(["ses_beta"])
  })
})

describe("reset", () => {
  it("says what it erased and what it keeps, and status then names the last reset", async () => {
    const { home, inHome, catalog } = await homeWithMemory()
    catalog((db) => db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_out', 'disabled', $at)").run({ at: NOW - HOUR }))
    await inHome("forget", "ses_alpha")
    expect((await inHome("status", "--text")).stdout).not.toContain("last reset:")

    const ran = await inHome("reset", "--yes")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.json).toMatchObject({ reset: true, outputs: 2, checkpoints: 1 })
    expect(ran.json.kept).toEqual(expect.arrayContaining(["session modes", "forget times"]))
    expect(fs.existsSync(path.join(home, "memories", "MEMORY.md"))).toBe(false)

    const text = (await inHome("status", "--text")).stdout
    expect(text).toContain(`last reset: ${new Date(NOW).toISOString()}`)
    // What it said it keeps is kept: the mode, and the forget time.
    expect((await inHome("modes")).json).toEqual({ sessions: [{ session_id: "ses_out", mode: "disabled", since: new Date(NOW - HOUR).toISOString() }] })
    expect(catalog((db) => db.prepare("SELECT forgotten_before FROM session_meta WHERE session_id = 'ses_alpha'").get())).toEqual({ forgotten_before: NOW })
    // The queue went with the records: nothing waits to be forgotten from an empty folder.
    expect(((await inHome("status")).json.versions as VersionStatus[]).every((v) => v.waiting_to_be_forgotten.length === 0)).toBe(true)
  })
})

describe("modes", () => {
  it("lists no session when none is kept out", async () => {
    const { inHome } = await homeWithMemory()
    expect(await inHome("modes")).toMatchObject({ code: 0, json: { sessions: [] } })
    expect((await inHome("modes", "--text")).stdout).toContain("no session is kept out of memory")
  })

  it("lists the disabled and polluted sessions with the time each was kept out, newest first", async () => {
    const { inHome, catalog } = await homeWithMemory()
    catalog((db) => {
      const set = db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $at)")
      set.run({ id: "ses_old_off", mode: "disabled", at: NOW - 3 * HOUR })
      // Pollution is recorded by the plugin when a session read external context.
      set.run({ id: "ses_polluted", mode: "polluted", at: NOW - HOUR })
      set.run({ id: "ses_back_in", mode: "enabled", at: NOW - 30 * 60_000 })
      set.run({ id: "ses_mid_off", mode: "disabled", at: NOW - 2 * HOUR })
    })
    const ran = await inHome("modes")
    expect(ran.code).toBe(0)
    expect(ran.json).toEqual({
      sessions: [
        { session_id: "ses_polluted", mode: "polluted", since: new Date(NOW - HOUR).toISOString() },
        { session_id: "ses_mid_off", mode: "disabled", since: new Date(NOW - 2 * HOUR).toISOString() },
        { session_id: "ses_old_off", mode: "disabled", since: new Date(NOW - 3 * HOUR).toISOString() },
      ],
    })
    const lines = (await inHome("modes", "--text")).stdout.trim().split("\n")
    expect(lines).toEqual([
      `ses_polluted  polluted  since ${new Date(NOW - HOUR).toISOString()}`,
      `ses_mid_off  disabled  since ${new Date(NOW - 2 * HOUR).toISOString()}`,
      `ses_old_off  disabled  since ${new Date(NOW - 3 * HOUR).toISOString()}`,
    ])
  })
})
