// Phase 2 wakes for changes no new session brings, on a real OpenCode: a note saved with
// memory_add_note reaches MEMORY.md at the next consolidation, and a consolidated session set to
// `disabled` with memory_mode is forgotten at the next one. The scripted consolidator acts only
// on what the workspace diff shows (support/consolidator.ts), so a consolidation that does not
// run, or runs without the change, leaves MEMORY.md as it was and the test fails.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diffDrivenConsolidator, type ConsolidatorRun } from "./support/consolidator.js"
import { FakeLlm, userText, type ChatRequest } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const SESSION_FACT = "FACT-SESSION: the billing service is deployed with make ship-billing"
const NOTE_FACT = "FACT-NOTE: releases are frozen in the last week of December"

interface Phase2Row {
  status: string
  finished_at: number | null
  last_success_at: number | null
}

describe("phase 2 wakes for notes and mode changes on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle | undefined
  let runs: ConsolidatorRun[]
  let root: string
  let sessionA: string
  let morning: string
  const seen: { afterFirst?: string; afterNote?: string; afterMode?: string; noteRun?: ConsolidatorRun; modeRun?: ConsolidatorRun } = {}
  const sessionsBefore: { count?: number } = {}

  const row = () => query<Phase2Row>(sandbox, "SELECT status, finished_at, last_success_at FROM jobs WHERE kind = 'memory_consolidate_global'")[0]
  const handbook = () => (fs.existsSync(path.join(root, "MEMORY.md")) ? fs.readFileSync(path.join(root, "MEMORY.md"), "utf8") : "")
  const state = () => `\njobs: ${JSON.stringify(query(sandbox, "SELECT kind, job_key, status, last_error, finished_at, last_success_at FROM jobs"))}\nruns: ${JSON.stringify(runs, null, 1).slice(0, 4_000)}\nplugin log:\n${server?.stderr().split("\n").filter((line) => /codex-memory/.test(line)).slice(-20).join("\n")}`

  async function restartAt(offsetMs: number): Promise<ServerApi> {
    await server?.stop()
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(offsetMs)
    server = await startServe(sandbox)
    return new ServerApi(server.url, sandbox.projectDir)
  }

  /** A turn in the existing session starts a phase-1 pass and then a check that finds nothing to do. */
  async function turnAndCheck(api: ServerApi, text: string): Promise<void> {
    const success = row()?.last_success_at ?? 0
    await api.prompt(morning, text)
    await waitFor(() => row()?.status === "done" && (row()?.finished_at ?? 0) > success, { timeoutMs: 60_000, message: `no check after the cooldown${state()}` })
    // The check found nothing, so it started no cooldown.
    expect(row()?.last_success_at).toBe(success)
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [defaultPluginSpec()] })
    root = path.join(sandbox.memoryHome, "memories")
    const consolidator = diffDrivenConsolidator(root)
    runs = consolidator.runs
    llm.setAgentHandler(consolidator.handler)
    llm.setStructuredHandler((request: ChatRequest) => {
      const text = userText(request)
      if (!text.includes(SESSION_FACT)) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
      return { rollout_summary: `The user explained a deploy.\n${SESSION_FACT}`, raw_memory: `---\ndescription: billing deploys\n---\n- ${SESSION_FACT}`, rollout_slug: "billing-deploys" }
    })

    // Session A states a fact; 7 hours later (the plugin's clock) it is extracted and consolidated.
    server = await startServe(sandbox)
    let api = new ServerApi(server.url, sandbox.projectDir)
    sessionA = (await api.createSession("billing")).id
    await api.prompt(sessionA, `Please remember: ${SESSION_FACT}`)
    api = await restartAt(7 * HOUR)
    morning = (await api.createSession("morning")).id
    await api.prompt(morning, "good morning")
    await waitFor(() => handbook().includes(SESSION_FACT) && row()?.status === "done", { timeoutMs: 90_000, message: `the first consolidation did not happen${state()}` })
    seen.afterFirst = handbook()
    sessionsBefore.count = (await api.request<unknown[]>("GET", "/session")).length

    // 14 h: the cooldown is over and a turn's check found nothing; then, in the same session, the
    // model saves a note. Nothing else changes, and no session is created.
    api = await restartAt(14 * HOUR)
    await turnAndCheck(api, "hello again")
    llm.script(
      { match: "Please keep a note", toolCalls: [{ name: "memory_add_note", arguments: { title: "Release freeze", note: NOTE_FACT } }] },
      { match: "Please keep a note", text: "Noted." },
    )
    const consolidations = runs.length
    await api.prompt(morning, "Please keep a note about the release freeze.")
    await waitFor(() => handbook().includes(NOTE_FACT) && row()?.status === "done", { timeoutMs: 90_000, message: `the note never reached MEMORY.md${state()}` })
    seen.afterNote = handbook()
    seen.noteRun = runs.at(-1)
    expect(runs.length).toBe(consolidations + 1)
    expect((await api.request<unknown[]>("GET", "/session")).length).toBe(sessionsBefore.count)

    // 21 h: after another check that found nothing, the model sets session A to disabled.
    api = await restartAt(21 * HOUR)
    await turnAndCheck(api, "hello once more")
    llm.script(
      { match: "Keep the billing session", toolCalls: [{ name: "memory_mode", arguments: { mode: "disabled", session_id: sessionA } }] },
      { match: "Keep the billing session", text: "Done." },
    )
    await api.prompt(morning, `Keep the billing session ${sessionA} out of memory.`)
    await waitFor(() => !handbook().includes(SESSION_FACT) && row()?.status === "done", { timeoutMs: 90_000, message: `session A's fact was never forgotten${state()}` })
    seen.afterMode = handbook()
    seen.modeRun = runs.at(-1)
    // Four OpenCode starts and three consolidations: more than the default hook budget on a busy machine.
  }, 420_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("learned session A's fact at the first consolidation", () => {
    expect(seen.afterFirst).toContain(SESSION_FACT)
    expect(runs[0]?.added).toContain(SESSION_FACT)
  })

  it("folds a note saved with memory_add_note into MEMORY.md at the next consolidation, with no new session", () => {
    expect(seen.noteRun?.added).toEqual([NOTE_FACT])
    expect(seen.noteRun?.diff).toMatch(/- A extensions\/ad_hoc\/notes\/\S+-release-freeze\.md/)
    expect(seen.afterNote).toContain(NOTE_FACT)
    expect(seen.afterNote).toContain(SESSION_FACT)
  })

  it("forgets a consolidated session set to disabled with memory_mode at the next consolidation", () => {
    expect(seen.modeRun?.removed).toContain(SESSION_FACT)
    expect(seen.modeRun?.diff).toMatch(/- D rollout_summaries\/\S+-billing_deploys\.md/)
    expect(seen.afterMode).not.toContain(SESSION_FACT)
    expect(seen.afterMode).toContain(NOTE_FACT)
    expect(fs.readFileSync(path.join(root, "memory_summary.md"), "utf8")).not.toContain(SESSION_FACT)
    expect(query<{ memory_mode: string }>(sandbox, `SELECT memory_mode FROM session_meta WHERE session_id = '${sessionA}'`)).toEqual([{ memory_mode: "disabled" }])
  })
})
