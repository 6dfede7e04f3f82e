// A helper model OpenCode does not offer: said with its cause and a guess, before any helper
// session is made, and the model rests like a rate-limited one instead of spending retries.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { JOBS } from "../../../src/constants.js"
import { Memory } from "../../../src/memory.js"
import { unknownModelMessage } from "../../../src/write/helpers/model-check.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000
const OFFERED = ["fake/fake-model", "fake/other-model", "openai/gpt-5-mini"]
const conversation = [
  { info: { id: "msg_1", role: "user", sessionID: "s" }, parts: [{ id: "prt_1", type: "text", text: "deploys use make ship" }] },
  { info: { id: "msg_2", role: "assistant", sessionID: "s" }, parts: [{ id: "prt_2", type: "text", text: "Done." }] },
]

let clock: number
let home: string
let host: FakeHost
const memories: Memory[] = []

async function start(options: Record<string, unknown>): Promise<Memory> {
  const memory = new Memory({ home, ...options }, { host, env: {}, homedir: home, now: () => clock })
  memories.push(memory)
  await memory.start()
  return memory
}

beforeEach(() => {
  clock = Date.UTC(2026, 11, 1, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-model-"))
  host = new FakeHost(() => clock)
  host.offeredModels = OFFERED
})
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
  fs.rmSync(home, { recursive: true, force: true })
})

describe("unknownModelMessage", () => {
  it("names the model, guesses the nearest offered one, and says which option to set", () => {
    expect(unknownModelMessage("fake/fake-modle", OFFERED, "extract_model")).toBe("OpenCode's providers offer no model fake/fake-modle; did you mean fake/fake-model? Set extract_model to one `opencode models` lists")
    expect(unknownModelMessage("anthropic/claude-x", OFFERED, "extract_model")).toBe("OpenCode's providers offer no model anthropic/claude-x Set extract_model to one `opencode models` lists")
    expect(unknownModelMessage("fake/fake-model", OFFERED, "extract_model")).toBeUndefined()
    // A host that lists nothing cannot say.
    expect(unknownModelMessage("fake/x", [], "extract_model")).toBeUndefined()
  })
})

describe("a helper model OpenCode does not offer", () => {
  it("fails the extraction with the cause before any helper session, spends no retry, and rests the model", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR }, conversation)
    const memory = await start({ extract_model: "fake/fake-modle" })
    await memory.pipeline("v1").phase1!.pass()
    expect(host.created).toEqual([])
    const job = memory.pipeline("v1").store()!.jobsOf("ses_a")[0]!
    expect(job).toMatchObject({ status: "failed", retry_remaining: JOBS.RETRIES })
    expect(job.last_error).toContain("OpenCode's providers offer no model fake/fake-modle; did you mean fake/fake-model?")
    const report = memory.controls.inspect().text
    expect(report).toContain("## Paused models")
    expect(report).toContain("fake/fake-modle: paused until")
  })

  it("extracts as before with a model OpenCode offers, or when the host cannot list its models", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR }, conversation)
    host.offeredModels = undefined
    const memory = await start({ extract_model: "fake/fake-modle" })
    await memory.pipeline("v1").phase1!.pass()
    expect(host.created).toHaveLength(1)
  })

  it("fails the consolidation with the cause before any helper session", async () => {
    const memory = await start({ consolidation_model: "openai/gpt-5-mimi" })
    memory
      .pipeline("v1")
      .store()!
      .db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ('ses_a', $t, '- a fact', 'about a', $t)")
      .run({ t: clock - 7 * HOUR })
    host.addSession({ id: "ses_a", updatedAt: clock - 7 * HOUR })
    const outcome = await memory.pipeline("v1").phase2!.run()
    expect(outcome).toMatchObject({ type: "failed" })
    expect(JSON.stringify(outcome)).toContain("did you mean openai/gpt-5-mini?")
    expect(host.created).toEqual([])
  })
})
