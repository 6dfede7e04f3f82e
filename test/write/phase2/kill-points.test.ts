// What a kill at each step of a consolidation leaves, proven by killing a real process there: a
// child (kill-worker.ts, under Bun) runs the real code and SIGKILLs itself at a named point of it
// (ENV_TEST_KILL_AT), then this test looks at what a reader sees and what the next run does.
// Readers only ever see committed memory: the folder, or while a consolidation is unfinished the
// whole copy it keeps (run-snapshot.ts); what a killed process left is removed by whoever finds it.
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { exportHome } from "../../../src/archive/export.js"
import { importArchive } from "../../../src/archive/import.js"
import { LocalMemoryBackend } from "../../../src/backend/local-backend.js"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { ReadPath } from "../../../src/read/read-path.js"
import { loadReadPathTemplates } from "../../../src/read/render.js"
import { openDatabase } from "../../../src/store/database.js"
import { HomeInstances } from "../../../src/store/instances.js"
import { leaseOwners } from "../../../src/store/lease-owner.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { ENV_TEST_ROOT } from "../../../src/util/paths.js"
import { replaceFile, sweepTemporaries, TEMPORARY_MAX_AGE_MS } from "../../../src/util/regular-file.js"
import { ENV_TEST_KILL_AT } from "../../../src/util/test-switches.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { v1Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { Phase2 } from "../../../src/write/phase2/phase2.js"
import { hasWholeSnapshot, readableRoot, restoreSnapshot, snapshotDir, snapshotFile, takeSnapshot } from "../../../src/write/phase2/run-snapshot.js"
import { checkV1Summary } from "../../../src/write/phase2/workspace.js"
import { opencodeBinary } from "../../e2e/support/opencode.js"
import { FakeHost } from "../../fakes/host.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const worker = fileURLToPath(new URL("./kill-worker.ts", import.meta.url))
const opencode = opencodeBinary()
const HOUR = 3_600_000
const facts = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `- fact ${from + i}`).join("\n")
/** The summary of the last good consolidation: 12 facts. */
const TWELVE = `v1\n## What's in memory\n${facts(1, 12)}\n`
const HANDBOOK = "# Task group: deploys\n- make ship\n"
/** A run's output that is valid but that no run validated: 8 facts, a new handbook line and skill. */
const EIGHT = `v1\n## What's in memory\n${facts(1, 8)}\n`
const NEW_HANDBOOK = `${HANDBOOK}- only in the unvalidated run\n`
const NEW_SKILL = "skills/deploy/SKILL.md"

let clock: number
let dir: string
let root: string
let db: SqlDatabase
let host: FakeHost
const disposers: Array<() => Promise<void>> = []

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-kill-points-"))
  root = path.join(dir, "memories")
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

function phase2(): Phase2 {
  const p = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    strategy: v1Consolidation(loadConsolidationTemplates(templatesDir)),
    templatesDir,
    excludedSessions: () => new MemoryStore(db, () => clock).sessionsNotEnabled(),
    memoryRoot: root,
    jobs: () => new Phase2Jobs(db, () => clock),
    helperSessions: new Set(),
    consolidationModel: () => undefined,
    onConsolidated: () => undefined,
    diagnostics: new Diagnostics(host, () => clock),
    breaker: new RateLimitBreaker(() => clock),
    workerId: "test",
  })
  disposers.push(() => p.dispose())
  return p
}

function learn(sessionId: string, fact: string): void {
  db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ($id, $t, $raw, $summary, 'deploys', '/p', $t)",
  ).run({ id: sessionId, t: clock - HOUR, raw: `- ${fact}`, summary: `The user said: ${fact}` })
  new Stage1Jobs(db, () => clock).enqueuePhase2(clock - HOUR)
}

/** A good consolidation that left 12 facts, and a new input for the next run. */
async function consolidatedOnce(): Promise<void> {
  learn("ses_a", "deploys use make ship")
  host.responder = (_id, prompt) => {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), HANDBOOK)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), TWELVE)
    return { text: "done" }
  }
  expect(await phase2().run()).toMatchObject({ type: "succeeded" })
  learn("ses_b", "tests need the vpn")
  clock += 7 * HOUR
}

/** What the killed run's consolidator writes. */
function nextRunWrites(files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, "next", file)), { recursive: true })
    fs.writeFileSync(path.join(dir, "next", file), text)
  }
}

/** Runs the worker; it is killed at `killAt` (or exits when the point is never reached). */
function runWorker(args: string[], killAt: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(opencode, [worker, ...args], {
      env: { ...process.env, BUN_BE_BUN: "1", [ENV_TEST_ROOT]: dir, [ENV_TEST_KILL_AT]: killAt },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("error", reject)
    // "close" comes after the child was reaped: its pid is no longer alive for the next run.
    child.on("close", (code, signal) => resolve({ code, signal, output }))
  })
}

async function killedAt(point: string): Promise<void> {
  const run = await runWorker(["consolidate", dir, String(clock)], point)
  expect(run, run.output).toMatchObject({ signal: "SIGKILL" })
}

/** Readers wired as VersionPipeline wires them, each a fresh instance (a new conversation, another process). */
function readers() {
  const read = new ReadPath({
    memoryRoot: root,
    summaryFile: path.join(root, "memory_summary.md"),
    dedicatedTools: true,
    templates: loadReadPathTemplates(templatesDir),
    isHelperSession: () => false,
    onRefuse: () => undefined,
    accepts: checkV1Summary,
    pendingCopy: { summaryFile: snapshotFile(root, "memory_summary.md"), whole: () => hasWholeSnapshot(root) },
  })
  const backend = new LocalMemoryBackend({ root, view: () => readableRoot(root) })
  return {
    block: () => read.blockFor({ sessionID: "ses_chat", system: [] }) ?? "",
    read: async (file: string) => (await backend.read({ path: file })).content,
    found: async (text: string) => (await backend.search({ queries: [text] })).matches.length,
    ranked: async (text: string) => (await backend.search({ queries: [text], match_mode: "ranked" })).matches.length,
    list: async (folder = "") => (await backend.list({ path: folder })).entries.map((entry) => entry.path),
  }
}

/** Every file of the folder but the baseline, by content. */
function folder(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of fs.readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (entry === ".git" || entry.startsWith(`.git${path.sep}`)) continue
    const file = path.join(root, entry)
    if (fs.lstatSync(file).isFile()) out[entry.split(path.sep).join("/")] = fs.readFileSync(file, "utf8")
  }
  return out
}

/** What killed processes left beside the folder (copies being built or removed). */
function besideFolder(): string[] {
  return fs.readdirSync(dir).filter((name) => name.startsWith(".memories.before-consolidation")).sort()
}

/** The next run succeeds; returns the folder as its consolidator found it. */
async function nextGoodRun(write: Record<string, string> = { "memory_summary.md": TWELVE }): Promise<Record<string, string>> {
  clock += 2 * HOUR
  let found: Record<string, string> = {}
  host.responder = (_id, prompt) => {
    found = folder()
    for (const [file, text] of Object.entries(write)) fs.writeFileSync(path.join(prompt.directory, file), text)
    return { text: "done" }
  }
  expect(await phase2().run()).toMatchObject({ type: "succeeded" })
  return found
}

describe("a consolidation killed at each step", () => {
  it("killed right after its consolidator wrote the files: every reader keeps the copy's memory until the next run puts it back", async () => {
    await consolidatedOnce()
    nextRunWrites({ "memory_summary.md": EIGHT, "MEMORY.md": NEW_HANDBOOK, [NEW_SKILL]: "ship with care" })
    await killedAt("consolidator-wrote")
    // The folder holds the run's output, valid but never validated, and the whole copy beside it.
    expect(folder()["memory_summary.md"]).toBe(EIGHT)
    expect(hasWholeSnapshot(root)).toBe(true)

    const reader = readers()
    const block = reader.block()
    expect(block).toContain("- fact 12")
    expect(await reader.read("memory_summary.md")).toContain("- fact 12")
    expect(await reader.read("MEMORY.md")).toBe(HANDBOOK.trimEnd())
    expect(await reader.found("only in the unvalidated run")).toBe(0)
    expect(await reader.ranked("unvalidated")).toBe(0)
    expect(await reader.list()).not.toContain("skills")
    // Asked again, the same bytes (the cache keyed by file identity still serves them).
    expect(reader.block()).toBe(block)
    // An export (the CLI's) archives the copy too, without its marker.
    const archived = (JSON.parse(exportHome(dir, { now: () => clock }).archive) as { files: Array<{ path: string; content: string }> }).files
    expect(archived.find((file) => file.path === "memories/memory_summary.md")?.content).toBe(TWELVE)
    expect(archived.map((file) => file.path).filter((file) => file.includes("skills") || file.includes("before-consolidation"))).toEqual([])

    // The next run finds memory as it was before the killed one, and what a reader sees never changed.
    const found = await nextGoodRun({ "memory_summary.md": TWELVE, "MEMORY.md": HANDBOOK })
    expect(found["memory_summary.md"]).toBe(TWELVE)
    expect(found["MEMORY.md"]).toBe(HANDBOOK)
    expect(found[NEW_SKILL]).toBeUndefined()
    expect(reader.block()).toBe(block)
    expect(besideFolder()).toEqual([])
  })

  it("killed midway through taking the copy: no copy is read or restored, the half-built one is removed by the next run", async () => {
    await consolidatedOnce()
    nextRunWrites({ "memory_summary.md": EIGHT })
    await killedAt("snapshot-copying")
    expect(hasWholeSnapshot(root)).toBe(false)
    expect(besideFolder()).toEqual([expect.stringMatching(/^\.memories\.before-consolidation\.\d+\.tmp$/)])
    const before = folder()
    expect(before["memory_summary.md"]).toBe(TWELVE)
    expect(readers().block()).toContain("- fact 12")

    // Nothing of the folder is deleted as if a copy had lacked it.
    const found = await nextGoodRun()
    expect(found).toEqual(before)
    expect(besideFolder()).toEqual([])
  })

  it("killed midway through dropping the copy after a valid run: readers see that run's output, and the next run keeps it", async () => {
    await consolidatedOnce()
    nextRunWrites({ "memory_summary.md": EIGHT, "MEMORY.md": NEW_HANDBOOK, [NEW_SKILL]: "ship with care" })
    await killedAt("snapshot-removing")
    // The copy was renamed away before any of it was deleted: none is left under its name.
    expect(fs.existsSync(snapshotDir(root))).toBe(false)
    expect(besideFolder()).toEqual([expect.stringMatching(/^\.memories\.before-consolidation\.\d+-[0-9a-f]+\.removing$/)])
    const reader = readers()
    expect(reader.block()).toContain("- fact 8")
    expect(reader.block()).not.toContain("- fact 12")
    expect(await reader.read(NEW_SKILL)).toBe("ship with care")

    // The old code's half-deleted copy was restored as if whole, deleting every file it lacked.
    const found = await nextGoodRun({ "memory_summary.md": EIGHT })
    expect(found[NEW_SKILL]).toBe("ship with care")
    expect(found["MEMORY.md"]).toBe(NEW_HANDBOOK)
    expect(folder()[NEW_SKILL]).toBe("ship with care")
    expect(besideFolder()).toEqual([])
  })

  it("killed midway through removing the copy while a failed run is put back: the folder is as before, and readers never saw the failure", async () => {
    await consolidatedOnce()
    nextRunWrites({ "memory_summary.md": "junk without its version line\n", [NEW_SKILL]: "half a skill" })
    await killedAt("snapshot-removing")
    expect(fs.existsSync(snapshotDir(root))).toBe(false)
    expect(folder()["memory_summary.md"]).toBe(TWELVE)
    expect(folder()[NEW_SKILL]).toBeUndefined()
    expect(readers().block()).toContain("- fact 12")
    await nextGoodRun()
    expect(besideFolder()).toEqual([])
  })

  it("killed between a temporary's write and its rename: the file is old or new, never cut, and the next run removes the temporary", async () => {
    await consolidatedOnce()
    nextRunWrites({ "memory_summary.md": EIGHT })
    await killedAt("temp-written")
    const leftovers = Object.keys(folder()).filter((file) => /(^|\/)\.[^/]+\.\d+\.tmp$/.test(file))
    expect(leftovers).toHaveLength(1)
    expect(folder()["memory_summary.md"]).toBe(TWELVE)
    // A dot-name: no reader lists or searches it.
    const reader = readers()
    expect(await reader.list(path.posix.dirname(leftovers[0]!).replace(/^\.$/, ""))).not.toContain(leftovers[0])
    expect(reader.block()).toContain("- fact 12")

    await nextGoodRun()
    expect(Object.keys(folder()).filter((file) => /\.tmp$/.test(file))).toEqual([])
  })

  it("an instance killed without dispose leaves a row that the next instance to register drops", async () => {
    const run = await runWorker(["register", dir], "none")
    expect(run, run.output).toMatchObject({ signal: "SIGKILL" })
    const count = () => Number(db.prepare("SELECT count(*) AS n FROM plugin_instances").get<{ n: number }>()!.n)
    expect(count()).toBe(1)
    new HomeInstances(db, leaseOwners()).register("pid:this-test")
    expect(count()).toBe(1)
    expect(db.prepare("SELECT instance_id FROM plugin_instances").get<{ instance_id: string }>()!.instance_id).toBe("pid:this-test")
  })
})

describe("leftovers without a kill", () => {
  it("a copy cut short under the copy's own name (what a recursive delete killed partway left) is neither read nor restored", () => {
    fs.mkdirSync(path.join(root, "skills", "deploy"), { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), TWELVE)
    fs.writeFileSync(path.join(root, "MEMORY.md"), HANDBOOK)
    fs.writeFileSync(path.join(root, NEW_SKILL), "ship it")
    takeSnapshot(root)
    expect(hasWholeSnapshot(root)).toBe(true)
    // Cut short: its marker and most files gone, as a delete stopped midway leaves it.
    for (const entry of fs.readdirSync(snapshotDir(root))) if (entry !== "memory_summary.md") fs.rmSync(path.join(snapshotDir(root), entry), { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), EIGHT)
    expect(hasWholeSnapshot(root)).toBe(false)
    expect(readers().block()).toContain("- fact 8")
    let partial = false
    expect(restoreSnapshot(root, () => (partial = true))).toBe(false)
    expect(partial).toBe(true)
    expect(folder()).toEqual({ "memory_summary.md": EIGHT, "MEMORY.md": HANDBOOK, [NEW_SKILL]: "ship it" })
    expect(fs.existsSync(snapshotDir(root))).toBe(false)
  })

  it("an import takes away a copy left beside the folder: readers then see the imported memory, and no run puts the copy back", () => {
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), TWELVE)
    const archive = exportHome(dir, { now: () => clock }).archive
    fs.writeFileSync(path.join(root, "memory_summary.md"), EIGHT)
    takeSnapshot(root)
    expect(readers().block()).toContain("- fact 8")
    importArchive(archive, dir, { replace: true, now: () => clock })
    expect(besideFolder()).toEqual([])
    expect(readers().block()).toContain("- fact 12")
  })

  it("a temporary is removed when its writer is dead, is this process, or it is older than the bound; a live writer's fresh one stays", () => {
    fs.mkdirSync(path.join(root, "sub"), { recursive: true })
    replaceFile(path.join(root, "kept.md"), "whole")
    const alive = 4242
    const make = (name: string, age = 0) => {
      fs.writeFileSync(path.join(root, name), "half")
      const at = new Date(Date.now() - age)
      fs.utimesSync(path.join(root, name), at, at)
    }
    make(`.kept.md.${alive}.tmp`)
    make(`sub/.old.md.${alive}.tmp`, TEMPORARY_MAX_AGE_MS + 60_000)
    make(".dead.md.4343.tmp")
    make(`.mine.md.${process.pid}.tmp`)
    make(".not-a-temporary.tmp")
    const removed = sweepTemporaries(root, (pid) => pid === alive)
    expect(removed).toEqual([".dead.md.4343.tmp", `.mine.md.${process.pid}.tmp`, `sub/.old.md.${alive}.tmp`].sort())
    expect(fs.readdirSync(root).sort()).toEqual([".kept.md.4242.tmp", ".not-a-temporary.tmp", "kept.md", "sub"])
  })
})
