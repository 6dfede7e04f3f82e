// The instance's wiring: a note saved through the memory tools' port, and a mode change, each
// start the consolidation that folds them in, with no session extracted and no new session.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Memory } from "../../../src/memory.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000

let clock: number
let host: FakeHost
let memory: Memory
const diffs: string[] = []

beforeEach(async () => {
  clock = Date.UTC(2026, 10, 30, 12)
  diffs.length = 0
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-wake-"))
  host = new FakeHost(() => clock)
  host.responder = (_id, prompt) => {
    diffs.push(fs.readFileSync(path.join(prompt.directory, "phase2_workspace_diff.md"), "utf8"))
    fs.writeFileSync(path.join(prompt.directory, "MEMORY.md"), `# Task group: work\n- run ${diffs.length}\n`)
    fs.writeFileSync(path.join(prompt.directory, "memory_summary.md"), `v1\n- run ${diffs.length}\n`)
    return { text: "done" }
  }
  memory = new Memory({ home }, { host, env: {}, homedir: home, now: () => clock })
  await memory.start()
  const db = memory.store()!.db
  db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ('ses_a', $t, '- deploy with make ship', 'deploys', 'deploys', '/p', $t)",
  ).run({ t: clock - HOUR })
  expect((await memory.pipeline("v1").phase2!.run()).type).toBe("succeeded")
  clock += 7 * HOUR
  // The cooldown is over and a check finds nothing: from here only a change starts a consolidation.
  expect(await memory.pipeline("v1").phase2!.run()).toEqual({ type: "succeeded_no_changes" })
})
afterEach(async () => {
  await memory.dispose()
})

describe("what wakes phase 2 in an instance", () => {
  it("a note added through the tools' port is consolidated at once, with no new session", async () => {
    const written = memory.controls.addNote({ title: "Release day", note: "Never release on Fridays.", sessionId: "ses_chat" })
    await memory.pipeline("v1").phase2!.settled()
    expect(host.prompts).toHaveLength(2)
    expect(diffs[1]).toContain(`- A ${written.path}`)
    expect(diffs[1]).toContain("+Never release on Fridays.")
  })

  it("disabling a consolidated session starts the consolidation that forgets it", async () => {
    expect(await memory.controls.setMode("ses_a", "disabled")).toEqual({ previous: "enabled", forgotten: { versions: ["v1"], queued: ["v1"] } })
    await memory.pipeline("v1").phase2!.settled()
    expect(host.prompts).toHaveLength(2)
    expect(diffs[1]).toMatch(/^- D rollout_summaries\//m)
    expect(diffs[1]).toContain("-session_id: ses_a")
  })

  it("a mode change that moves nothing, or no change at all, starts nothing", async () => {
    await memory.controls.setMode("ses_other", "disabled", { checked: true })
    await memory.controls.setMode("ses_a", "enabled")
    await memory.pipeline("v1").phase2!.settled()
    expect(host.prompts).toHaveLength(1)
  })
})
