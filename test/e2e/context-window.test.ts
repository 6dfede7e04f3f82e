// Extraction fits the extraction model's window as a real provider counts it (issue 38), on the real
// OpenCode 1.18.33 and the real released OpenCode 2.1.2 (a plain serve and the shared service). The
// plugin's extract_model is a provider model that declares a window of 16,000 tokens, and the fake
// LLM refuses a prompt to it over the provider's window, counted in o200k_base tokens, with OpenAI's
// HTTP 400 context_length_exceeded. Each round gives a host two sessions that state a fact first and
// another last, with five pastes of about 14 KB between: sha256sum output (1.8 bytes a token; the
// issue's session of digests sent 22,281 tokens under a budget of 4 bytes a token) and base64 blobs
// (1.45 bytes a token). Once they are idle, phase 1 must store a record of each from a request the
// provider accepted, holding both facts (the transcript's head and tail), with no job failed and no
// retry spent. In the first round the provider's window is the declared one, and the first request
// must fit; in the second it is smaller than declared, the first request is refused, and the
// shrink after it must fit, still spending no retry.
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { JOBS } from "../../src/constants.js"
import { ENV_TEST_CLOCK_FILE } from "../../src/util/test-switches.js"
import { FakeLlm, contentText, userText, type ChatRequest, type LoggedRequest } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { createSandbox, defaultPluginSpec, repoRoot, startServe, waitFor } from "./support/opencode.js"
import { checkoutPlugin, createSandbox2, startServe2 } from "./support/opencode2.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const WINDOW = 16_000
/**
 * The provider's real window in each round: the one the model declares, then a smaller one (a
 * deployment behind a declaration that overstates it), so the first request is refused and the
 * shrink after it is what must fit.
 */
const ROUNDS = [
  { round: "the declared window", window: WINDOW },
  { round: "a provider window smaller than declared", window: 6_000 },
] as const
type Round = (typeof ROUNDS)[number]
const MODEL = "window-16k"
const CLI = path.join(repoRoot(), "dist", "src", "cli", "main.js")
const PLUGIN_OPTIONS = { extract_model: `fake/${MODEL}`, min_rollout_idle_hours: 1, max_rollouts_per_startup: 8 }
const MODEL_LIMIT = { context: WINDOW, output: 4_096 }

// Each paste is just under 14 KB: of a 16,000-token window, the transcript gets 7,200 tokens, which
// a budget of 4 bytes a token takes for 28,800 bytes, two whole pastes: about 19,000 real tokens
// with the prompt around them, where under 2 bytes of digests make a token.
const PASTE_BYTES = 13_900

/** sha256sum output of one batch of build files, about 14 KB. */
function digestPaste(batch: number): string {
  const lines = [`Checksums of batch ${batch} (sha256sum output):`]
  for (let n = 1, bytes = 0; bytes < PASTE_BYTES - 100; n++) {
    const name = `pkg/b${batch}/f${String(n).padStart(4, "0")}.bin`
    lines.push(`${createHash("sha256").update(name).digest("hex")}  ${name}`)
    bytes += lines.at(-1)!.length + 1
  }
  return lines.join("\n")
}

/** About 14 KB of base64 (bytes that look random, the same every run), 76 characters a line. */
function base64Paste(blob: number): string {
  const bytes = Buffer.concat(Array.from({ length: 322 }, (_, n) => createHash("sha256").update(`blob ${blob} part ${n}`).digest()))
  return `Firmware blob ${blob}, base64:\n${bytes.toString("base64").replace(/.{76}/g, "$&\n").trimEnd()}`
}

interface Story {
  name: string
  first: string
  last: string
  paste: (n: number) => string
}

const STORIES: Story[] = [
  { name: "sha256 digests", first: "FACT-DIGESTHEAD: our deploy key rotates every 17 days", last: "FACT-DIGESTTAIL: the artifact mirror syncs at 03:40 UTC", paste: digestPaste },
  { name: "base64 blobs", first: "FACT-BLOBHEAD: the signing certificate is renewed each March", last: "FACT-BLOBTAIL: firmware images are kept for 90 days", paste: base64Paste },
]
const FACTS = STORIES.flatMap((story) => [story.first, story.last])

/** The scripted extractor: the record holds every story fact the transcript it was sent shows. */
function echoingExtractor(request: ChatRequest): Record<string, unknown> {
  const text = userText(request)
  const seen = FACTS.filter((fact) => text.includes(fact))
  if (!seen.length) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
  return {
    rollout_summary: `The user shared release facts and pasted data.\n${seen.join("\n")}`,
    raw_memory: `---\ndescription: release facts\ntask_outcome: success\n---\n${seen.map((fact) => `- ${fact}`).join("\n")}`,
    rollout_slug: "release-facts",
  }
}

/** One host line, as far as this test needs it. */
interface Line {
  memoryHome: string
  env: Record<string, string>
  start(): Promise<void>
  createSession(): Promise<string>
  prompt(id: string, text: string): Promise<void>
  log(): string
  cleanup(): Promise<void>
}

type LineFactory = (llm: FakeLlm, clockFile: string) => Promise<Line>

const opencode1: LineFactory = async (llm, clockFile) => {
  const sandbox = await createSandbox({
    llmUrl: llm.url,
    // Helper sessions run in the memory folder, an instance that reads only the global config.
    configScope: "global",
    plugins: [[defaultPluginSpec(), PLUGIN_OPTIONS]],
    config: {
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          name: "Fake LLM",
          options: { baseURL: llm.url, apiKey: "fake-key" },
          models: {
            "fake-model": { name: "Fake Model", tool_call: true, limit: { context: 100_000, output: 4_096 } },
            [MODEL]: { name: "Fake 16k", tool_call: true, limit: MODEL_LIMIT },
          },
        },
      },
    },
    env: { [ENV_TEST_CLOCK_FILE]: clockFile },
  })
  let server: Awaited<ReturnType<typeof startServe>> | undefined
  let api: ServerApi
  return {
    memoryHome: sandbox.memoryHome,
    env: sandbox.env,
    async start() {
      server = await startServe(sandbox)
      api = new ServerApi(server.url, sandbox.projectDir)
    },
    createSession: async () => (await api.createSession("release work")).id,
    prompt: async (id, text) => void (await api.prompt(id, text)),
    log: () => server?.stderr() ?? "",
    async cleanup() {
      await server?.stop()
      await sandbox.cleanup()
    },
  }
}

/** OpenCode 2.1.2 as a plain `serve`, or (`service`) the shared background service the TUI and the CLI use. */
const opencode2 = (service: boolean): LineFactory => async (llm, clockFile) => {
  const sandbox = await createSandbox2({
    llmUrl: llm.url,
    plugins: [checkoutPlugin(PLUGIN_OPTIONS)],
    config: {
      providers: {
        fake: {
          package: "aisdk:@ai-sdk/openai-compatible",
          settings: { baseURL: llm.url, apiKey: "fake-key" },
          models: { "fake-model": { limit: { context: 100_000, output: 4_096 } }, [MODEL]: { limit: MODEL_LIMIT } },
        },
      },
    },
    env: { [ENV_TEST_CLOCK_FILE]: clockFile },
  })
  let server: Awaited<ReturnType<typeof startServe2>> | undefined
  return {
    memoryHome: sandbox.memoryHome,
    env: sandbox.env,
    async start() {
      server = await startServe2(sandbox, { service })
    },
    createSession: () => server!.api.createSession(),
    prompt: (id, text) => server!.api.prompt(id, text),
    log: () => server?.stderr() ?? "",
    async cleanup() {
      await server?.stop()
      await sandbox.cleanup()
    },
  }
}

const LINES: Array<[string, LineFactory]> = [
  ["OpenCode 1.18.33", opencode1],
  ["OpenCode 2.1.2", opencode2(false)],
  // Generation through the service reaches the provider's error by another client.
  ["OpenCode 2.1.2's shared service", opencode2(true)],
]

interface JobRow {
  job_key: string
  status: string
  retry_remaining: number
  last_error: string | null
}

describe.each(LINES)("a %s extraction model declaring a 16,000-token window", (name, factory) => {
  let llm: FakeLlm
  let line: Line
  let clockFile: string
  let clock = 0
  /** Session ids by round and story. */
  const ids: Record<string, string> = {}
  const key = (round: Round, story: Story) => `${round.round}/${story.name}`

  const jobs = (): JobRow[] => query<JobRow>(line, `SELECT job_key, status, retry_remaining, last_error FROM jobs WHERE kind = '${JOBS.STAGE1}'`)
  const jobOf = (id: string | undefined) => jobs().find((job) => job.job_key === id)
  /** The extraction requests of a session (its id is in the prompt's header), oldest first. */
  const extractions = (id: string): LoggedRequest[] => llm.requests().filter((r) => r.body.model === MODEL && r.kind === "structured" && userText(r.body).includes(id))
  const isRefused = (r: LoggedRequest) => r.reply.status === 400
  /** The requests the windowed model got, in tokens, by session and agent: "declared/sha256 digests extraction 7306 accepted, ...". */
  const describeRequests = () =>
    llm
      .requests()
      .filter((r) => r.body.model === MODEL)
      .map((r) => {
        const seen = JSON.stringify(r.body.messages)
        const session = Object.entries(ids).find(([, id]) => seen.includes(id))?.[0] ?? "other session"
        return `${session} ${r.kind === "structured" ? "extraction" : r.kind} ${r.promptTokens ?? "?"} ${isRefused(r) ? "refused" : "accepted"}`
      })
      .join(", ") || "none"
  const evidence = () => {
    const logs = line.log().split("\n").filter((l) => /codex-memory|ContextOverflow|context_length|rror/.test(l)).slice(-30).join("\n")
    return `\njobs: ${JSON.stringify(jobs())}\nrequests to ${MODEL} (tokens): ${describeRequests()}\nplugin log:\n${logs}`
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    llm.setStructuredHandler(echoingExtractor)
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-window-"))
    clockFile = path.join(scratch, "clock-offset")
    fs.writeFileSync(clockFile, "0")
    line = await factory(llm, clockFile)
    await line.start()
  }, 120_000)

  afterAll(async () => {
    console.log(`${name}: ${describeRequests()}`)
    await line?.cleanup()
    await llm?.close()
    if (clockFile) fs.rmSync(path.dirname(clockFile), { recursive: true, force: true })
  })

  describe.each(ROUNDS)("with $round", (round) => {
    const sessionsOf = () => STORIES.map((story) => ids[key(round, story)]!)

    beforeAll(async () => {
      llm.setContextWindow({ tokens: round.window, model: MODEL })
      for (const story of STORIES) {
        const id = await line.createSession()
        ids[key(round, story)] = id
        await line.prompt(id, `Before we start, note this: ${story.first}.`)
        for (let n = 1; n <= 5; n++) await line.prompt(id, story.paste(n))
        await line.prompt(id, `One more thing: ${story.last}. That is all for today.`)
      }
      // Two hours later on the plugin's clock the sessions are idle; a new session's first turn starts a pass.
      clock += 2 * HOUR
      fs.writeFileSync(clockFile, String(clock))
      await line.prompt(await line.createSession(), "good morning")
      // Done after a request that held the whole session: one taken while it was written is not the end.
      const whole = (story: Story) => extractions(ids[key(round, story)]!).some((r) => !isRefused(r) && userText(r.body).includes(story.last))
      await waitFor(() => sessionsOf().every((id) => ["done", "failed"].includes(jobOf(id)?.status ?? "")) && STORIES.every(whole), {
        timeoutMs: 150_000,
        intervalMs: 250,
        message: `the extractions with ${round.round} did not end`,
        state: evidence,
      })
    }, 300_000)

    it.each(STORIES)("sends the $name session in a request the provider accepts, within its window, with the first and last facts", (story) => {
      const last = extractions(ids[key(round, story)]!).filter((r) => !isRefused(r)).at(-1)
      expect(last, `no extraction request for the ${story.name} session was accepted${evidence()}`).toBeDefined()
      expect(last!.promptTokens).toBeLessThanOrEqual(round.window)
      const text = userText(last!.body)
      // Booleans, not toContain: a failure would print the whole prompt.
      expect(text.includes(story.first), `the transcript's head was lost${evidence()}`).toBe(true)
      expect(text.includes(story.last), `the transcript's tail was lost${evidence()}`).toBe(true)
      // Not emptied to fit: some of the pasted data is still there.
      const pasted = [1, 2, 3, 4, 5].flatMap((n) => story.paste(n).split("\n").slice(1))
      expect(pasted.some((row) => text.includes(row.slice(0, 64))), `none of the pasted data was kept${evidence()}`).toBe(true)
    })

    if (round.window === WINDOW) {
      it.each(STORIES)("fits the $name session in its first request, with no refusal to recover from", (story) => {
        // Shrinking after a refusal is the safety net; a budget counted in real tokens needs none here.
        const first = extractions(ids[key(round, story)]!)[0]
        expect(first, `no extraction request for the ${story.name} session${evidence()}`).toBeDefined()
        expect(isRefused(first!), `the first request (${first!.promptTokens} tokens) was refused${evidence()}`).toBe(false)
      })
    } else {
      // Any request, not the first: the plugin's clock already runs hours ahead from the first round,
      // so a pass may take the session while it is still being written, from a transcript small
      // enough to fit; the whole one, over 6,000 tokens at the declared window's budget, is refused.
      it.each(STORIES)("had a request of the $name session refused, so the shrink is what fitted", (story) => {
        expect(extractions(ids[key(round, story)]!).some(isRefused), `no request was refused: this round tests nothing${evidence()}`).toBe(true)
      })
    }

    it.each(STORIES)("stores the $name session's record, its job done without spending a retry", (story) => {
      const id = ids[key(round, story)]!
      const [record] = query<{ raw_memory: string }>(line, `SELECT raw_memory FROM stage1_outputs WHERE session_id = '${id}'`)
      expect(record, `no record of the ${story.name} session${evidence()}`).toBeDefined()
      expect(record!.raw_memory).toContain(story.first)
      expect(record!.raw_memory).toContain(story.last)
      // Even when a request was refused for its size, the retries stay whole: shrinking is not a failure.
      expect(jobOf(id), evidence()).toMatchObject({ status: "done", retry_remaining: JOBS.RETRIES })
    })
  })

  it("leaves no failed extraction job, in memory.db and in the CLI's status", () => {
    expect(jobs().filter((job) => job.status === "failed"), evidence()).toEqual([])
    const run = spawnSync(process.execPath, [CLI, "status", "--home", line.memoryHome], { encoding: "utf8", timeout: 60_000, env: { ...line.env } })
    expect(run.status, run.stderr).toBe(0)
    const status = JSON.parse(run.stdout) as { report: { jobErrors: Array<{ kind: string; job_key: string; last_error: string | null }> } }
    expect(status.report.jobErrors.filter((job) => job.kind === JOBS.STAGE1)).toEqual([])
  })

  it("reports the extraction model's 16,000-token window in memory_inspect", async () => {
    // The budget of the last extraction lives in the process that ran it: asked of the host's plugin.
    llm.script({ match: "INSPECT-WINDOW", toolCalls: [{ name: "memory_inspect", arguments: {} }] }, { match: "INSPECT-WINDOW", text: "inspected" })
    const from = llm.requests().length
    await line.prompt(await line.createSession(), "INSPECT-WINDOW please")
    const report = llm.requests().slice(from).flatMap((r) => (r.body.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content) || JSON.stringify(m.content))).join("\n")
    expect(report).toContain(`extraction: fake/${MODEL}, a window of 16,000 tokens as OpenCode reports it`)
  })
})
