// The extraction model's window on both hosts (issue 38): phase 1 budgets each transcript by the
// window the host reports for the model it extracts with (the input limit when the model declares
// one, else its context), and memory_inspect says which window and budget that was. Each host runs
// as a real binary, restarted with another extract_model for each case; the models are the fake
// LLM's, declared in each line's own config shape:
//   - OpenCode 2.1.2: providers.<id>.models.<id>.limit, read back through the plugin context's model
//     domain (ctx.model.list() and ctx.model.default() answer {location, data} with Model.Info's
//     `limit: {context, input?, output}`, as GET /api/model and /api/model/default do). A model is
//     named by its config key (Model.Info `id`); the config's `modelID` is only what the provider
//     is sent, and a model whose two names differ was the one whose window was not found.
//   - OpenCode 1.18.33: provider.<id>.models.<id>.limit, read back through GET /config/providers;
//     a model's `id` in the config is likewise only what the provider is sent.
// With no extract_model, 2.1.2 extracts with its default model (the config's `model`) and 1.18.33
// with the config's small_model.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ENV_TEST_CLOCK_FILE } from "../../src/util/test-switches.js"
import { transcriptBudget } from "../../src/write/phase1/extraction-job.js"
import { copyingExtractor } from "./support/facts.js"
import { FakeLlm, contentText, type LoggedRequest } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor } from "./support/opencode.js"
import { checkoutPlugin, createSandbox2, editConfig2, startServe2 } from "./support/opencode2.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const BASE_OPTIONS = { min_rollout_idle_hours: 1, max_rollouts_per_startup: 4 }

/** The models each config declares, by the key a user names in extract_model. */
const LIMITS = {
  "fake-model": { context: 48_000, output: 4_096 },
  "window-16k": { context: 16_000, output: 4_096 },
  "input-24k": { context: 64_000, input: 24_000, output: 4_096 },
  "alias-16k": { context: 16_000, output: 4_096 },
}
/** What the provider is sent for alias-16k: another name, set in the config. */
const UPSTREAM = "upstream-16k"

interface Case {
  name: string
  extractModel?: keyof typeof LIMITS
  fact: string
  /** How memory_inspect names the model. */
  label: string
  /** The model name the provider receives. */
  sent: string
  window: number
}

const EXPLICIT: Case[] = [
  { name: "a provider model's limit.context", extractModel: "window-16k", fact: "FACT-SIXTEEN: the nightly build runs at two", label: "fake/window-16k", sent: "window-16k", window: 16_000 },
  { name: "a provider model's limit.input, declared beside its context", extractModel: "input-24k", fact: "FACT-INPUT: the cache is warmed on deploy", label: "fake/input-24k", sent: "input-24k", window: 24_000 },
  { name: "a provider model sent to its provider by another name", extractModel: "alias-16k", fact: "FACT-ALIAS: the mirror is named after a river", label: "fake/alias-16k", sent: UPSTREAM, window: 16_000 },
]

/** One running host, as far as this test needs it. */
interface Line {
  /** Restarts the host with these plugin options. */
  restart(options: Record<string, unknown>): Promise<void>
  createSession(): Promise<string>
  prompt(id: string, text: string): Promise<void>
  log(): string
  cleanup(): Promise<void>
}

type LineFactory = (llm: FakeLlm, clockFile: string) => Promise<Line>

const opencode2: LineFactory = async (llm, clockFile) => {
  const models = Object.fromEntries(Object.entries(LIMITS).map(([id, limit]) => [id, { ...(id === "alias-16k" ? { modelID: UPSTREAM } : {}), limit }]))
  const sandbox = await createSandbox2({
    llmUrl: llm.url,
    config: { providers: { fake: { package: "aisdk:@ai-sdk/openai-compatible", settings: { baseURL: llm.url, apiKey: "fake-key" }, models } } },
    env: { [ENV_TEST_CLOCK_FILE]: clockFile },
  })
  let serve: Awaited<ReturnType<typeof startServe2>> | undefined
  return {
    async restart(options) {
      await serve?.stop()
      editConfig2(sandbox, (config) => void (config.plugins = [checkoutPlugin(options)]))
      serve = await startServe2(sandbox)
    },
    createSession: () => serve!.api.createSession(),
    prompt: (id, text) => serve!.api.prompt(id, text),
    log: () => serve?.stderr() ?? "",
    async cleanup() {
      await serve?.stop()
      await sandbox.cleanup()
    },
  }
}

const opencode1: LineFactory = async (llm, clockFile) => {
  const models = Object.fromEntries(Object.entries(LIMITS).map(([id, limit]) => [id, { name: id, tool_call: true, ...(id === "alias-16k" ? { id: UPSTREAM } : {}), limit }]))
  const sandbox = await createSandbox({
    llmUrl: llm.url,
    // Helper sessions run in the memory folder, an instance that reads only the global config.
    configScope: "global",
    config: { provider: { fake: { npm: "@ai-sdk/openai-compatible", name: "Fake LLM", options: { baseURL: llm.url, apiKey: "fake-key" }, models } } },
    env: { [ENV_TEST_CLOCK_FILE]: clockFile },
  })
  let serve: Awaited<ReturnType<typeof startServe>> | undefined
  let api: ServerApi
  return {
    async restart(options) {
      await serve?.stop()
      editConfig(sandbox, (config) => void (config.plugin = [[defaultPluginSpec(), options]]))
      serve = await startServe(sandbox)
      api = new ServerApi(serve.url, sandbox.projectDir)
    },
    createSession: async () => (await api.createSession("window work")).id,
    prompt: async (id, text) => void (await api.prompt(id, text)),
    log: () => serve?.stderr() ?? "",
    async cleanup() {
      await serve?.stop()
      await sandbox.cleanup()
    },
  }
}

const LINES: Array<[string, LineFactory, Case]> = [
  ["OpenCode 2.1.2", opencode2, { name: "the default model's limit.context", fact: "FACT-DEFAULT: the docs site is rebuilt hourly", label: "OpenCode's default model", sent: "fake-model", window: 48_000 }],
  ["OpenCode 1.18.33", opencode1, { name: "small_model's limit.context", fact: "FACT-SMALL: the queue drains at midnight", label: "fake/fake-model", sent: "fake-model", window: 48_000 }],
]

describe.each(LINES)("the extraction model's window on the real %s", (_host, factory, fallback) => {
  let llm: FakeLlm
  let line: Line
  let scratch: string
  let clock = 0
  let clockFile: string

  const later = (ms: number) => {
    clock += ms
    fs.writeFileSync(clockFile, String(clock))
  }
  const logTail = () => `\n--- plugin log ---\n${line.log().split("\n").filter((l) => l.includes("codex-memory")).slice(-30).join("\n")}`
  const toolReplies = (requests: LoggedRequest[]) => requests.flatMap((r) => (r.body.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content) || JSON.stringify(m.content))).join("\n")

  beforeAll(async () => {
    llm = await FakeLlm.start()
    llm.setStructuredHandler(copyingExtractor)
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-model-window-"))
    clockFile = path.join(scratch, "clock-offset")
    later(0)
    line = await factory(llm, clockFile)
  }, 60_000)

  afterAll(async () => {
    await line?.cleanup()
    await llm?.close()
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true })
  })

  it.each([...EXPLICIT, fallback])("budgets transcripts by $name, and memory_inspect says so", async ({ extractModel, fact, label, sent, window }) => {
    await line.restart({ ...BASE_OPTIONS, ...(extractModel ? { extract_model: `fake/${extractModel}` } : {}) })
    const session = await line.createSession()
    await line.prompt(session, `Please remember: ${fact}`)
    // Hours later on the plugin's clock the session is idle; a new session's first turn starts a pass.
    later(2 * HOUR)
    const from = llm.requests().length
    await line.prompt(await line.createSession(), "good morning")
    // The budget is noted before the request is sent. (No database is read here: the source's
    // schema may run ahead of the built plugin's while the tree is being worked on.)
    const extraction = () => llm.requests().slice(from).find((r) => r.kind === "structured" && JSON.stringify(r.body).includes(fact))
    await waitFor(() => extraction() !== undefined, { timeoutMs: 120_000, message: `the session was not extracted${logTail()}` })
    expect(extraction()!.body.model, logTail()).toBe(sent)

    llm.script({ match: "INSPECT-WINDOW", toolCalls: [{ name: "memory_inspect", arguments: {} }] }, { match: "INSPECT-WINDOW", text: "inspected" })
    const asked = llm.requests().length
    await line.prompt(await line.createSession(), "INSPECT-WINDOW please")
    const report = toolReplies(llm.requests().slice(asked))
    const reported = report.split("\n").find((l) => l.startsWith("extraction: "))
    expect(reported, report).toContain(`extraction: ${label}, a window of ${window.toLocaleString("en-US")} tokens as OpenCode reports it; transcripts budgeted at ${transcriptBudget(window).toLocaleString("en-US")} tokens (last extraction `)
  }, 240_000)
})
