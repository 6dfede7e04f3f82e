// The exchanges inside phase 2, with one fake host: imports reach the diff of the same run,
// the export follows a success only, and the version rules hold.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HelperPrompt, HelperReply } from "../../src/host.js"
import { Memory } from "../../src/memory.js"
import { FakeHost } from "../fakes/host.js"

const HOUR = 3_600_000
let clock: number
let home: string
let codexHome: string
let claudeHome: string
let host: FakeHost
const memories: Memory[] = []

/** The scripted consolidator: records the diff it was given, then writes valid V1 or V2 artifacts. */
const diffs: string[] = []
function respond(_id: string, prompt: HelperPrompt): HelperReply {
  const diff = fs.readFileSync(path.join(prompt.directory, "phase2_workspace_diff.md"), "utf8")
  diffs.push(diff)
  const v2 = path.basename(prompt.directory) === "memories_v2"
  const summary = v2 ? "v1\n## User Profile\nx\n## User preferences\n## General Tips\n## What's in Memory\n" : "v1\n## User profile\nFrom the diff.\n"
  fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), summary)
  // Keeps Codex's fact only while the diff adds it (a removal is forgetting).
  const added = /^\+(?!\+\+).*CODEX-FACT/m.test(diff)
  if (!v2) fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `# Task group\n- ${added ? "[from codex] CODEX-FACT" : "nothing"}\n`)
  return { text: "done" }
}

async function start(options: Record<string, unknown>): Promise<Memory> {
  const memory = new Memory({ home, codex_interop: { import: true, export: true, codex_home: codexHome }, claude_import: { enabled: true, claude_home: claudeHome }, ...options }, { host, env: {}, homedir: home, now: () => clock })
  memories.push(memory)
  await memory.start()
  return memory
}

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-p2x-"))
  home = path.join(root, "home")
  codexHome = path.join(root, "codex")
  claudeHome = path.join(root, "claude")
  fs.mkdirSync(path.join(codexHome, "memories"), { recursive: true })
  fs.writeFileSync(path.join(codexHome, "memories", "MEMORY.md"), "# Codex\n- CODEX-FACT: builds with cargo nextest\n")
  fs.mkdirSync(path.join(claudeHome, "projects", "-repo", "memory"), { recursive: true })
  fs.writeFileSync(path.join(claudeHome, "projects", "-repo", "memory", "MEMORY.md"), "- CLAUDE-FACT: the repo uses pnpm\n")
  fs.writeFileSync(path.join(claudeHome, "projects", "-repo", "s.jsonl"), `${JSON.stringify({ cwd: root })}\n`)
  host = new FakeHost(() => clock)
  host.responder = respond
  diffs.length = 0
})
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

describe("phase 2 with the exchanges on", () => {
  it("consolidates Codex's and Claude Code's memory in the run that imported them, then exports the result", async () => {
    const memory = await start({})
    expect(await memory.pipeline("v1").phase2!.run()).toMatchObject({ type: "succeeded" })
    expect(diffs).toHaveLength(1)
    expect(diffs[0]).toContain("extensions/codex_import/resources/codex/MEMORY.md")
    expect(diffs[0]).toContain("CODEX-FACT")
    expect(diffs[0]).toContain("extensions/external_agent_import/resources/-repo/MEMORY.md")
    expect(diffs[0]).toContain("CLAUDE-FACT")
    const exported = path.join(codexHome, "memories", "extensions", "opencode_import")
    expect(fs.readFileSync(path.join(exported, "resources", "opencode", "MEMORY.md"), "utf8")).toContain("[from codex] CODEX-FACT")
    expect(fs.readFileSync(path.join(exported, "instructions.md"), "utf8")).toContain("[from opencode]")
    // Codex's V2 folder does not exist, and is not made.
    expect(fs.existsSync(path.join(codexHome, "memories_v2"))).toBe(false)
    const text = memory.controls.inspect().text
    expect(text).toContain("exchange: codex import: from")
    expect(text).toContain("exchange: codex export: to")
    expect(text).toContain("exchange: claude import: from")
  })

  it("forgets what Codex forgot, at the next run", async () => {
    const memory = await start({})
    await memory.pipeline("v1").phase2!.run()
    fs.rmSync(path.join(codexHome, "memories", "MEMORY.md"))
    clock += 7 * HOUR
    expect(await memory.pipeline("v1").phase2!.run()).toMatchObject({ type: "succeeded" })
    expect(diffs.at(-1)).toMatch(/- D extensions\/codex_import\/resources\/codex\/MEMORY\.md/)
    expect(fs.readFileSync(path.join(home, "memories", "MEMORY.md"), "utf8")).not.toContain("CODEX-FACT")
  })

  it("does not export after a failed consolidation", async () => {
    host.responder = () => ({ text: "", error: { name: "APIError", message: "boom" } })
    const memory = await start({})
    expect(await memory.pipeline("v1").phase2!.run()).toMatchObject({ type: "failed" })
    expect(fs.existsSync(path.join(codexHome, "memories", "extensions"))).toBe(false)
  })

  it("runs the Codex exchange through the V1 writer only; the Claude import for V2 too", async () => {
    const memory = await start({ version: "v2" })
    expect(memory.warnings).toContain('option "codex_interop": the exchange with Codex runs through the Memory V1 writer, and only V2 learns here (version "v2" without dual_write); it is off')
    expect(await memory.pipeline("v2").phase2!.run()).toMatchObject({ type: "succeeded" })
    expect(diffs[0]).not.toContain("codex_import")
    expect(diffs[0]).toContain("CLAUDE-FACT")
    expect(fs.existsSync(path.join(codexHome, "memories", "extensions"))).toBe(false)
    const dual = await start({ version: "v2", dual_write: true, home: path.join(home, "dual") })
    expect(dual.pipeline("v1").snapshot().extensions?.map((line) => line.split(":")[0])).toEqual(["codex import", "codex export", "claude import"])
    expect(dual.pipeline("v2").snapshot().extensions?.map((line) => line.split(":")[0])).toEqual(["claude import"])
  })

  it("turns the Codex exchange off when Codex's memory folder is this one, and says so", async () => {
    const memory = await start({ codex_interop: { import: true, export: true, codex_home: home } })
    expect(memory.warnings.some((w) => w.startsWith("codex_interop is off: Codex's memory folder"))).toBe(true)
    expect(memory.pipeline("v1").snapshot().extensions?.map((line) => line.split(":")[0])).toEqual(["claude import"])
    expect(memory.controls.inspect().text).toContain("codex_interop is off")
  })
})
