// A consolidation that does not succeed changes nothing a conversation sees: the folder is put back
// exactly as it was before the consolidator ran, whether the run left invalid files, failed, was
// interrupted, or its process died (the next run puts the copy back first). Meanwhile the read path
// never injects a summary that fails the version's check.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { ReadPath } from "../../../src/read/read-path.js"
import { loadReadPathTemplates } from "../../../src/read/render.js"
import { openDatabase } from "../../../src/store/database.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { v1Consolidation, v2Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { Phase2 } from "../../../src/write/phase2/phase2.js"
import { hasWholeSnapshot, restoreSnapshot, snapshotDir, snapshotFile, takeSnapshot } from "../../../src/write/phase2/run-snapshot.js"
import { checkV1Summary } from "../../../src/write/phase2/workspace.js"
import { FakeHost } from "../../fakes/host.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const HOUR = 3_600_000
const GOOD_SUMMARY = "v1\n## What's in memory\n- deploys use make ship\n"
const GOOD_HANDBOOK = "# Task group: deploys\n- make ship\n"

let clock: number
let dir: string
let root: string
let db: SqlDatabase
let host: FakeHost
const disposers: Array<() => Promise<void>> = []

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-failed-run-"))
  root = path.join(dir, "memories")
  db = openDatabase(path.join(dir, "memory.db")).db
  host = new FakeHost(() => clock)
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

function phase2(version: "v1" | "v2" = "v1"): Phase2 {
  const templates = loadConsolidationTemplates(templatesDir)
  const p = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    strategy: version === "v1" ? v1Consolidation(templates) : v2Consolidation(templates),
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

/** Every file of the folder but the baseline, by content. */
function folder(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of fs.readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (entry === ".git" || entry.startsWith(`.git${path.sep}`)) continue
    const file = path.join(root, entry)
    if (fs.lstatSync(file).isFile()) out[entry] = fs.readFileSync(file, "utf8")
  }
  return out
}

/** A good first consolidation, then a second input that the next run is given. */
async function consolidatedOnce(): Promise<Record<string, string>> {
  learn("ses_a", "deploys use make ship")
  host.responder = (_id, prompt) => {
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), GOOD_HANDBOOK)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), GOOD_SUMMARY)
    return { text: "done" }
  }
  expect(await phase2().run()).toMatchObject({ type: "succeeded" })
  learn("ses_b", "tests need the vpn")
  clock += 7 * HOUR
  return folder()
}

describe("a consolidation that does not succeed changes nothing", () => {
  const badRuns: Array<[string, (directory: string) => void]> = [
    ["empties MEMORY.md and the summary", (d) => {
      fs.writeFileSync(path.join(d, "MEMORY.md"), "")
      fs.writeFileSync(path.join(d, "memory_summary.md"), "")
    }],
    ["writes pages of junk without the v1 line, and a stray file", (d) => {
      fs.writeFileSync(path.join(d, "memory_summary.md"), "junk ".repeat(40_000))
      fs.writeFileSync(path.join(d, "stray.md"), "left behind")
      fs.mkdirSync(path.join(d, "skills", "broken"), { recursive: true })
      fs.writeFileSync(path.join(d, "skills", "broken", "SKILL.md"), "half a skill")
    }],
    ["deletes the handbook and an input", (d) => {
      fs.rmSync(path.join(d, "MEMORY.md"))
      fs.rmSync(path.join(d, "raw_memories.md"))
    }],
  ]
  for (const [what, damage] of badRuns) {
    it(`a run that ${what} is undone byte for byte, and the next good run builds on the old memory`, async () => {
      const before = await consolidatedOnce()
      let given: Record<string, string> = {}
      host.responder = (_id, prompt) => {
        given = folder()
        damage(prompt.directory)
        return { text: "done" }
      }
      expect(await phase2().run()).toMatchObject({ type: "failed" })
      // The folder is as the consolidator found it: the new input synced, nothing of its damage.
      expect(folder()).toEqual(given)
      expect(folder()["memory_summary.md"]).toBe(before["memory_summary.md"])
      expect(folder()["MEMORY.md"]).toBe(GOOD_HANDBOOK)
      expect(fs.existsSync(snapshotDir(root))).toBe(false)

      // The next run sees the same work and the old memory to build on.
      clock += 2 * HOUR
      let seen = ""
      host.responder = (_id, prompt) => {
        seen = fs.readFileSync(path.join(prompt.directory, "MEMORY.md"), "utf8")
        fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `${GOOD_HANDBOOK}- vpn for tests\n`)
        fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), GOOD_SUMMARY)
        return { text: "done" }
      }
      expect(await phase2().run()).toMatchObject({ type: "succeeded" })
      expect(seen).toBe(GOOD_HANDBOOK)
    })
  }

  it("a run whose agent fails, or that is interrupted at shutdown, is undone too", async () => {
    const before = await consolidatedOnce()
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\nhalf written")
      return { text: "", error: { name: "APIError", message: "the provider failed" } }
    }
    expect(await phase2().run()).toMatchObject({ type: "failed" })
    expect(folder()["memory_summary.md"]).toBe(before["memory_summary.md"])

    clock += 2 * HOUR
    const p = phase2()
    let started: () => void = () => undefined
    const consolidating = new Promise<void>((resolve) => (started = resolve))
    host.responder = (_id, prompt, signal) =>
      new Promise((_resolve, reject) => {
        fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), "")
        signal.addEventListener("abort", () => reject(signal.reason))
        started()
      })
    const run = p.run()
    await consolidating
    await p.dispose()
    expect(await run).toEqual({ type: "released" })
    expect(folder()["MEMORY.md"]).toBe(GOOD_HANDBOOK)
  })

  it("a copy left by a run whose process died is put back by the next consolidation, and served meanwhile", async () => {
    await consolidatedOnce()
    // A run got as far as the consolidator, which emptied the summary, then the process died.
    takeSnapshot(root)
    fs.writeFileSync(path.join(root, "memory_summary.md"), "")
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
    expect(read.blockFor({ sessionID: "ses_chat", system: [] })).toContain("deploys use make ship")

    let found = ""
    host.responder = (_id, prompt) => {
      found = fs.readFileSync(path.join(prompt.directory, "memory_summary.md"), "utf8")
      return { text: "", error: { name: "APIError", message: "down" } }
    }
    await phase2().run()
    expect(found).toBe(GOOD_SUMMARY)
    expect(folder()["memory_summary.md"]).toBe(GOOD_SUMMARY)
  })

  it("V2: an invalid summary never replaces the last valid one", async () => {
    learn("ses_a", "deploys use make ship")
    const valid = "v1\n## User Profile\nA developer.\n## User preferences\n- none\n## General Tips\n- none\n## What's in Memory\n- deploys\n"
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), valid)
      return { text: "done" }
    }
    expect(await phase2("v2").run()).toMatchObject({ type: "succeeded" })
    learn("ses_b", "tests need the vpn")
    clock += 7 * HOUR
    host.responder = (_id, prompt) => {
      fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), "v1\nno headings at all\n")
      return { text: "done" }
    }
    expect(await phase2("v2").run()).toMatchObject({ type: "failed" })
    expect(fs.readFileSync(path.join(root, "memory_summary.md"), "utf8")).toBe(valid)
  })
})

describe("the snapshot itself", () => {
  it("puts back changed and deleted files, removes added ones outside extensions/, and keeps notes that arrived meanwhile", () => {
    fs.mkdirSync(path.join(root, "skills", "deploy"), { recursive: true })
    fs.writeFileSync(path.join(root, "MEMORY.md"), GOOD_HANDBOOK)
    fs.writeFileSync(path.join(root, "skills", "deploy", "SKILL.md"), "ship it")
    fs.mkdirSync(path.join(root, ".git"))
    fs.writeFileSync(path.join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
    takeSnapshot(root)
    fs.writeFileSync(path.join(root, "MEMORY.md"), "broken")
    fs.rmSync(path.join(root, "skills"), { recursive: true })
    fs.mkdirSync(path.join(root, "junk"), { recursive: true })
    fs.writeFileSync(path.join(root, "junk", "a.md"), "junk")
    fs.mkdirSync(path.join(root, "extensions", "ad_hoc", "notes"), { recursive: true })
    fs.writeFileSync(path.join(root, "extensions", "ad_hoc", "notes", "new.md"), "a note saved during the run")
    fs.writeFileSync(path.join(root, ".git", "HEAD"), "changed by a commit\n")
    expect(restoreSnapshot(root)).toBe(true)
    expect(folder()).toEqual({
      "MEMORY.md": GOOD_HANDBOOK,
      [path.join("skills", "deploy", "SKILL.md")]: "ship it",
      [path.join("extensions", "ad_hoc", "notes", "new.md")]: "a note saved during the run",
    })
    expect(fs.existsSync(path.join(root, "junk"))).toBe(false)
    // The baseline is the plugin's own, never part of the copy.
    expect(fs.readFileSync(path.join(root, ".git", "HEAD"), "utf8")).toBe("changed by a commit\n")
    expect(restoreSnapshot(root)).toBe(false)
  })
})

describe("the read path", () => {
  const readPath = (accepts = checkV1Summary) =>
    new ReadPath({
      memoryRoot: root,
      summaryFile: path.join(root, "memory_summary.md"),
      dedicatedTools: true,
      templates: loadReadPathTemplates(templatesDir),
      isHelperSession: () => false,
      onRefuse: () => undefined,
      accepts,
      pendingCopy: { summaryFile: snapshotFile(root, "memory_summary.md"), whole: () => hasWholeSnapshot(root) },
    })
  const call = { sessionID: "ses_chat", system: [] }

  it("never injects a summary without its version line: it serves the last valid one, byte for byte", () => {
    fs.mkdirSync(root, { recursive: true })
    const summary = path.join(root, "memory_summary.md")
    fs.writeFileSync(summary, GOOD_SUMMARY)
    const read = readPath()
    const good = read.blockFor(call)
    expect(good).toContain("deploys use make ship")
    fs.writeFileSync(summary, "junk ".repeat(40_000))
    expect(read.blockFor(call)).toBe(good)
    // A fresh instance (a restart) has no last good summary to serve: nothing is injected.
    expect(readPath().blockFor(call)).toBeUndefined()
    // A summary that is gone (a reset) is no memory, however good the last one was.
    fs.rmSync(summary)
    expect(read.blockFor(call)).toBeUndefined()
  })
})
