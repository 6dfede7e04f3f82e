// Phase 1 on a real OpenCode: finished sessions in two projects are discovered across projects,
// extracted through OpenCode's StructuredOutput path by the memorize-extract helper, and stored;
// the helper sessions are deleted; a malformed answer fails its job with a retry scheduled; and
// the user's own turn returns while extraction is still running in the background.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FakeLlm, contentText, systemTexts, toolNames, userText, type ChatRequest } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Ended, query } from "./support/memory-db.js"
import { JOBS, STAGE_ONE } from "../../src/constants.js"

const HOUR = 3_600_000


/** The helper session a structured request belongs to: every request of one helper opens with the same prompt. */
function firstUserText(request: ChatRequest): string {
  const first = (request.messages ?? []).find((m) => m.role === "user")
  return first ? contentText(first.content) : ""
}

describe("phase 1 on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let projectA: ServerApi
  const finished: Record<string, string> = {}
  let triggerReturnedWith: { outputs: number }
  /** The plugin's clock (real time + 7 h) when the pass could first have run, and after every job finished. */
  let passWindow: { from: number; to: number }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    // The finished sessions come from an earlier OpenCode run without the plugin, as when a user
    // installs it after months of work; then OpenCode starts again with it.
    sandbox = await createSandbox({
      llmUrl: llm.url,
      plugins: [],
      configScope: "global",
      // Seven hours ahead: the sessions made below look idle for longer than min_rollout_idle_hours.
      env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
    })
    const otherProject = path.join(sandbox.root, "other-project")
    fs.mkdirSync(otherProject)
    const earlier = await startServe(sandbox)
    for (const [directory, name, fact] of [
      [sandbox.projectDir, "alpha", "ALPHA-FACT: the alpha service builds with bazel"],
      [otherProject, "beta", "BETA-FACT: beta deploys need the vpn"],
      [sandbox.projectDir, "gamma", "GAMMA-FACT: gamma tests need MALFORMED output"],
    ] as const) {
      const api = new ServerApi(earlier.url, directory)
      const { id } = await api.createSession(`${name} work`)
      await api.prompt(id, fact)
      finished[name] = id
    }
    await earlier.stop()

    editConfig(sandbox, (config) => {
      config.plugin = [[defaultPluginSpec(), { max_rollouts_per_startup: 3 }]]
    })
    server = await startServe(sandbox)
    projectA = new ServerApi(server.url, sandbox.projectDir)

    llm.structuredDelayMs = 300
    llm.setStructuredHandler((request) => {
      const text = userText(request)
      if (text.includes("GAMMA-FACT")) return { rollout_summary: 42, raw_memory: ["not", "text"] }
      const fact = /(ALPHA|BETA)-FACT: [^\n"]*/.exec(text)?.[0] ?? "unknown"
      return { rollout_summary: `Worked on ${fact}.`, raw_memory: `---\ndescription: ${fact}\n---\n- ${fact}`, rollout_slug: fact.slice(0, 10).toLowerCase() }
    })

    // A new session's first message starts a pass; the user's turn must not wait for it.
    const passFrom = Date.now() + 7 * HOUR
    const trigger = await projectA.createSession("new work")
    await projectA.prompt(trigger.id, "a new task")
    triggerReturnedWith = { outputs: query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]?.n ?? 0 }
    await waitFor(() => query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_stage1' AND status <> 'running'")[0]?.n === 3, {
      timeoutMs: 90_000,
      message: "the three extraction jobs did not finish",
    }).catch((error) => {
      const logs = server.stderr().split("\n").filter((line) => /codex-memory|ERROR|err_|rror/.test(line)).slice(-40).join("\n")
      throw new Error(`${error.message}\njobs: ${JSON.stringify(query(sandbox, "SELECT * FROM jobs"))}\nplugin log:\n${logs}`)
    })
    passWindow = { from: passFrom, to: Date.now() + 7 * HOUR }
    // Phase 2 follows the pass (and fails here: no consolidator is scripted); let it finish.
    await waitFor(() => phase2Ended(sandbox), {
      timeoutMs: 60_000,
      message: "the consolidation after phase 1 did not finish",
    })
  })

  /** What a failed assertion shows: the jobs, the plugin's log lines, and what the fake LLM was asked. */
  function evidence(): string {
    const logs = server.stderr().split("\n").filter((line) => /codex-memory|ERROR|err_|rror/.test(line)).slice(-40).join("\n")
    const asked = llm.requests().map((r) => `${r.kind}: ${toolNames(r.body).join(",")}`)
    return `jobs: ${JSON.stringify(query(sandbox, "SELECT job_key, status, last_error FROM jobs"))}\nllm: ${JSON.stringify(asked)}\nplugin log:\n${logs}`
  }

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("stores a record for each finished session of both projects", () => {
    const rows = query<{ session_id: string; rollout_summary: string; raw_memory: string; cwd: string }>(sandbox, "SELECT session_id, rollout_summary, raw_memory, cwd FROM stage1_outputs ORDER BY session_id")
    expect(rows.map((r) => r.session_id).sort(), evidence()).toEqual([finished.alpha, finished.beta].sort())
    const alpha = rows.find((r) => r.session_id === finished.alpha)!
    expect(alpha.raw_memory).toContain("ALPHA-FACT: the alpha service builds with bazel")
    expect(alpha.cwd).toBe(sandbox.projectDir)
    expect(rows.find((r) => r.session_id === finished.beta)!.cwd).toBe(path.join(sandbox.root, "other-project"))
  })

  it("asked the extractor through StructuredOutput, with the transcript as data, once per claimed session", () => {
    const structured = llm.requests().filter((r) => r.kind === "structured")
    // One helper session per stage-1 job (OpenCode may ask a helper's model more than once, e.g.
    // after the malformed answer), and each finished session's transcript went to exactly one helper.
    const helpers = [...new Set(structured.map((r) => firstUserText(r.body)))]
    const jobs = query<{ job_key: string }>(sandbox, `SELECT job_key FROM jobs WHERE kind = '${JOBS.STAGE1}'`)
    expect(jobs.map((j) => j.job_key).sort()).toEqual(Object.values(finished).sort())
    expect(helpers, evidence()).toHaveLength(jobs.length)
    for (const fact of ["ALPHA-FACT", "BETA-FACT", "GAMMA-FACT"]) expect(helpers.filter((text) => text.includes(fact)), fact).toHaveLength(1)
    for (const request of structured) {
      expect(systemTexts(request.body).join("\n")).toContain("Memory extraction: one finished session")
      // The extractor has no tools but the structured-output one.
      expect((request.body.tools ?? []).map((t) => t.function?.name)).toEqual(["StructuredOutput"])
    }
    expect(structured.some((r) => userText(r.body).includes("===== TRANSCRIPT BEGINS ====="))).toBe(true)
  })

  it("leaves OpenCode nothing to reject when it reads the helper sessions back (their output schema included)", () => {
    expect(server.stderr().split("\n").filter((line) => /OutputFormatJsonSchema|schema rejection/i.test(line))).toEqual([])
  })

  it("fails the malformed answer's job and schedules a retry", () => {
    const [gamma] = query<{ status: string; retry_remaining: number; retry_at: number; last_error: string }>(sandbox, `SELECT status, retry_remaining, retry_at, last_error FROM jobs WHERE job_key = '${finished.gamma}'`)
    expect(gamma).toMatchObject({ status: "failed", retry_remaining: JOBS.RETRIES - 1 })
    // The failure happened during the pass, on the plugin's clock; the retry waits the backoff after it.
    expect(gamma!.retry_at).toBeGreaterThanOrEqual(passWindow.from + STAGE_ONE.RETRY_DELAY_MS)
    expect(gamma!.retry_at).toBeLessThanOrEqual(passWindow.to + STAGE_ONE.RETRY_DELAY_MS)
    expect(gamma!.last_error.length).toBeGreaterThan(0)
  })

  it("deleted every helper session", async () => {
    const response = await fetch(`${server.url}/experimental/session?roots=true&directory=&search=${encodeURIComponent("[codex-memory]")}`)
    expect(await response.json()).toEqual([])
  })

  it("queued phase 2 with the extracted sessions' watermark", () => {
    // Phase 2 may already have run (and, with no consolidator scripted, failed); the queue entry stays.
    const [row] = query<{ input_watermark: number }>(sandbox, "SELECT input_watermark FROM jobs WHERE kind = 'memory_consolidate_global'")
    const [newest] = query<{ t: number }>(sandbox, "SELECT MAX(source_updated_at) AS t FROM stage1_outputs")
    expect(row!.input_watermark).toBeGreaterThanOrEqual(newest!.t)
  })

  it("never made the user's turn wait for extraction", () => {
    // The turn that started the pass had returned before any record was stored.
    expect(triggerReturnedWith.outputs).toBe(0)
  })
})
