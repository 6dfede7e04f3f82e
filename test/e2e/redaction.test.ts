// Secrets and <private> spans on a real OpenCode: a finished session holds secrets in the user's
// message and in a tool's output, and a private span; phase 1 extracts it with a scripted model
// that echoes the transcript back and adds a secret of its own; a second session's extraction
// fails with a provider error that quotes a key; phase 2 then syncs the memory folder. None of it
// may reach the extraction requests, the consolidator, memory.db or the memory folder, while the
// model answering the user still sees the private text of the user's own turn.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALNUM, BASE64, URLSAFE, fake } from "../redact/fakes.js"
import { FakeLlm, contentText, userText } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Ended, query } from "./support/memory-db.js"
import { folderTexts } from "./support/folder-texts.js"

const HOUR = 3_600_000
const SECRET = {
  github: `ghp_${fake("e2e-gh", ALNUM, 36)}`,
  openai: `sk-proj-${fake("e2e-openai", URLSAFE, 80)}`,
  postgres: `${fake("e2e-pg", ALNUM, 14)}-7`,
  stripe: `sk_live_51${fake("e2e-stripe", ALNUM, 60)}`,
  aws: fake("e2e-aws", BASE64, 40),
  /** Written back by the model, never seen in the transcript. */
  recalled: `xoxb-${fake("e2e-slack-a", "0123456789", 12)}-${fake("e2e-slack-b", ALNUM, 24)}`,
  /** In a provider error message. */
  failing: `sk-ant-api03-${fake("e2e-anthropic", URLSAFE, 60)}`,
}
const PRIVATE = "my landlord Ms Quill-Xanadu keeps the spare key under the blue pot"
const LIVE_PRIVATE = "Zephyr-Marigold is the name of my test account"
const FORBIDDEN = [...Object.values(SECRET), "Quill-Xanadu", "Zephyr-Marigold"]
const TRANSCRIPT_BEGINS = "===== TRANSCRIPT BEGINS ====="
const TRANSCRIPT_ENDS = "===== TRANSCRIPT ENDS ====="





const leaks = (text: string) => FORBIDDEN.filter((secret) => text.includes(secret))

describe("redaction on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let live: ServerApi
  const ids: Record<"secrets" | "failing" | "live", string> = { secrets: "", failing: "", live: "" }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({
      llmUrl: llm.url,
      plugins: [],
      configScope: "global",
      env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
    })
    const settings = path.join(sandbox.projectDir, "deploy", "settings.yml")
    fs.mkdirSync(path.dirname(settings))
    fs.writeFileSync(settings, `stripe:\n  secret_key: ${SECRET.stripe}\naws:\n  region: eu-west-1\n  aws_secret_access_key: ${SECRET.aws}\n`)

    // The sessions to learn from come from a run without the plugin: the user's own turns.
    const earlier = await startServe(sandbox)
    const api = new ServerApi(earlier.url, sandbox.projectDir)
    llm.script({ match: "READ-SETTINGS", toolCalls: [{ name: "read", arguments: { filePath: settings } }] })
    ids.secrets = (await api.createSession("deploy secrets")).id
    await api.prompt(
      ids.secrets,
      `READ-SETTINGS and deploy. My GitHub token is ${SECRET.github}; export OPENAI_API_KEY=${SECRET.openai}; ` +
        `the database is postgres://app:${SECRET.postgres}@db.internal:5432/app. <private>${PRIVATE}</private> Thanks!`,
    )
    ids.failing = (await api.createSession("failing extraction")).id
    await api.prompt(ids.failing, "FAIL-ME: how do I rotate the deploy key?")
    await earlier.stop()

    editConfig(sandbox, (config) => {
      config.plugin = [[defaultPluginSpec(), { max_rollouts_per_startup: 3 }]]
    })

    llm.reset()
    llm.script({ kind: "structured", match: "FAIL-ME", status: 400, error: `invalid x-api-key ${SECRET.failing} for this organization` })
    llm.setStructuredHandler((request) => {
      const text = userText(request)
      // Echo the transcript back, and add a secret the transcript never held.
      const transcript = text.slice(text.indexOf(TRANSCRIPT_BEGINS) + TRANSCRIPT_BEGINS.length, text.indexOf(TRANSCRIPT_ENDS))
      const excerpt = transcript.trim().slice(0, 1_200)
      return {
        rollout_summary: `Deploy work. Transcript excerpt:\n${excerpt}\nThe bot token is ${SECRET.recalled}.`,
        raw_memory: `---\ndescription: deploy work\n---\n- the user deploys with ${SECRET.recalled}\n- excerpt: ${excerpt}`,
        rollout_slug: "deploy-work",
      }
    })
    server = await startServe(sandbox)
    live = new ServerApi(server.url, sandbox.projectDir)
    ids.live = (await live.createSession("live turn")).id
    await live.prompt(ids.live, `TRIGGER-LIVE hello. <private>${LIVE_PRIVATE}</private>`)

    await waitFor(() => query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_stage1' AND status IN ('done', 'failed')")[0]?.n === 2, {
      timeoutMs: 90_000,
      message: "the two extraction jobs did not finish",
    })
    await waitFor(() => phase2Ended(sandbox), {
      timeoutMs: 60_000,
      message: "phase 2 did not run after phase 1",
    }).catch((error) => {
      const logs = server.stderr().split("\n").filter((line) => /codex-memory|ERROR/.test(line)).slice(-30).join("\n")
      throw new Error(`${error.message}\njobs: ${JSON.stringify(query(sandbox, "SELECT kind, job_key, status, last_error FROM jobs"))}\nplugin log:\n${logs}`)
    })
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("sends the extractor a transcript with markers where the secrets and the private span were", () => {
    const extraction = llm.requests().find((r) => r.kind === "structured" && userText(r.body).includes("READ-SETTINGS"))
    expect(extraction).toBeDefined()
    const text = userText(extraction!.body)
    for (const name of ["github-token", "openai-api-key", "database-url", "stripe-secret-key", "aws-secret-access-key"]) expect(text).toContain(`[REDACTED:${name}]`)
    expect(text).toContain("[private] Thanks!")
  })

  it("lets no secret and no private text into any request the plugin made", () => {
    const plugin = llm.requests().filter((r) => !JSON.stringify(r.body).includes("TRIGGER-LIVE"))
    expect(plugin.some((r) => r.kind === "structured")).toBe(true)
    expect(plugin.some((r) => userText(r.body).includes("Consolidate the memory folder"))).toBe(true)
    for (const request of plugin) expect(leaks(JSON.stringify(request.body))).toEqual([])
  })

  it("leaves the user's own turn alone: the model answering it sees the private text", () => {
    const own = llm.requests().find((r) => r.kind === "agent" && userText(r.body).includes("TRIGGER-LIVE"))
    expect(userText(own!.body)).toContain(`<private>${LIVE_PRIVATE}</private>`)
  })

  it("stores the record with markers only, and the failed job's error redacted", () => {
    const [record] = query<{ raw_memory: string; rollout_summary: string }>(sandbox, `SELECT raw_memory, rollout_summary FROM stage1_outputs WHERE session_id = '${ids.secrets}'`)
    expect(record!.raw_memory).toContain("[REDACTED:slack-token]")
    expect(record!.rollout_summary).toContain("[REDACTED:github-token]")
    const [failed] = query<{ status: string; last_error: string }>(sandbox, `SELECT status, last_error FROM jobs WHERE job_key = '${ids.failing}'`)
    expect(failed).toMatchObject({ status: "failed" })
    expect(failed!.last_error).toContain("[REDACTED:anthropic-api-key]")
  })

  it("keeps every secret and private text out of memory.db, its WAL included", () => {
    const files = ["memory.db", "memory.db-wal"].map((name) => path.join(sandbox.memoryHome, name)).filter((file) => fs.existsSync(file))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) expect(leaks(fs.readFileSync(file).toString("latin1")), file).toEqual([])
    const rows = ["stage1_outputs", "jobs", "redaction_log"].flatMap((table) => query<Record<string, unknown>>(sandbox, `SELECT * FROM ${table}`))
    expect(leaks(JSON.stringify(rows))).toEqual([])
  })

  it("keeps them out of every file of the memory folder, git objects included", () => {
    const texts = folderTexts(path.join(sandbox.memoryHome, "memories"))
    expect(texts.some(([file]) => file === "raw_memories.md")).toBe(true)
    for (const [file, text] of texts) expect(leaks(text), file).toEqual([])
    expect(texts.find(([file]) => file === "raw_memories.md")![1]).toContain("[REDACTED:slack-token]")
  })

  it("keeps them out of the plugin's log lines", () => {
    const lines = server.stderr().split("\n").filter((line) => line.includes("codex-memory"))
    expect(leaks(lines.join("\n"))).toEqual([])
  })

  it("records what each extraction redacted, by class", () => {
    const rows = query<{ session_id: string; stage: string; counts: string }>(sandbox, "SELECT session_id, stage, counts FROM redaction_log ORDER BY id")
    const transcript = rows.find((r) => r.session_id === ids.secrets && r.stage === "transcript")
    expect(JSON.parse(transcript!.counts)).toMatchObject({ "github-token": 1, "openai-api-key": 1, "database-url": 1, "stripe-secret-key": 1, "aws-secret-access-key": 1, "private-span": 1 })
    const answer = rows.find((r) => r.session_id === ids.secrets && r.stage === "answer")
    expect(JSON.parse(answer!.counts)).toMatchObject({ "slack-token": 2 })
  })

  it("shows the totals in memory_inspect", async () => {
    llm.script({ match: "INSPECT-NOW", toolCalls: [{ name: "memory_inspect", arguments: {} }] })
    await live.prompt(ids.live, "INSPECT-NOW")
    const report = llm
      .requests()
      .flatMap((r) => r.body.messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => contentText(m.content))
      .find((text) => text.includes("## Redactions"))
    expect(report).toMatch(/secrets replaced by a marker before extraction or storage: \d+/)
    expect(report).toContain("- github-token: 1")
    expect(report).toContain("- slack-token: 2")
    expect(report).toContain("<private> spans kept out of extraction: 1")
  })
})
