// Three real `opencode serve` processes share one memory home while sessions finish in each:
// every eligible session is extracted exactly once, consolidations never overlap, and no
// SQLITE_BUSY error surfaces anywhere.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FakeLlm, contentText, type ChatRequest, type LoggedRequest } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { query } from "./support/memory-db.js"

const HOUR = 3_600_000
const CONSOLIDATE = "Consolidate the memory folder now"
const PER_PROCESS = 3


const userText = (body: ChatRequest) => (body.messages ?? []).filter((m) => m.role === "user").map((m) => contentText(m.content)).join("\n")

describe("several OpenCode processes sharing one memory home", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  const servers: ServeHandle[] = []
  const sessions: string[] = []

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({
      llmUrl: llm.url,
      configScope: "global",
      plugins: [[defaultPluginSpec(), { max_rollouts_per_startup: 8 }]],
      env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
    })
    const root = path.join(sandbox.memoryHome, "memories")
    llm.structuredDelayMs = 40
    llm.setStructuredHandler((request) => {
      const id = /Session: (ses_\w+)/.exec(userText(request))?.[1] ?? "unknown"
      return { rollout_summary: `Work in ${id}.`, raw_memory: `- lesson from ${id}`, rollout_slug: "work" }
    })
    // Enough scripted consolidations for every process; each is: write, write, report.
    for (let i = 0; i < 6; i++) {
      llm.script(
        { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "MEMORY.md"), content: `# Task group: work\n- round ${i}\n` } }], delayMs: 30 },
        { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "memory_summary.md"), content: `v1\n- round ${i}\n` } }], delayMs: 30 },
        { match: CONSOLIDATE, text: `CONSOLIDATION-DONE ${i}` },
      )
    }
    for (let p = 0; p < 3; p++) servers.push(await startServe(sandbox))
    // Sessions finish in every process at once; each first message also starts a pass there.
    await Promise.all(
      servers.map(async (server, p) => {
        const api = new ServerApi(server.url, sandbox.projectDir)
        for (let i = 0; i < PER_PROCESS; i++) {
          const { id } = await api.createSession(`process ${p} task ${i}`)
          await api.prompt(id, `task ${i} in process ${p}`)
          sessions.push(id)
        }
      }),
    )
    // Later, a new session everywhere: each process's 30 s gate and discovery cache have run
    // out, so these passes see every session above as finished.
    await new Promise((resolve) => setTimeout(resolve, 31_000))
    await Promise.all(
      servers.map(async (server) => {
        const api = new ServerApi(server.url, sandbox.projectDir)
        const { id } = await api.createSession("next")
        await api.prompt(id, "next task")
        sessions.push(id)
      }),
    )
    await waitFor(() => query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]!.n >= sessions.length - servers.length, {
      timeoutMs: 120_000,
      message: `not every session was extracted: ${JSON.stringify(query(sandbox, "SELECT job_key, status, last_error, owner_pid FROM jobs"))}`,
    }).catch((error) => {
      const reqs = llm.requests().map((r) => `${r.kind} ${new Date(r.receivedAt).toISOString().slice(17, 23)} ${userText(r.body).slice(0, 60).replace(/\n/g, " ")} -> ${JSON.stringify(r.reply).slice(0, 80)}`)
      const logs = servers.map((s, i) => s.stderr().split("\n").filter((l) => /codex-memory|ERROR/.test(l)).slice(-15).map((l) => `[${i}] ${l.slice(0, 300)}`).join("\n"))
      throw new Error(`${error.message}\n${reqs.join("\n")}\n${logs.join("\n")}`)
    })
    await waitFor(() => !query<{ status: string }>(sandbox, "SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'").some((r) => r.status === "running"), {
      timeoutMs: 60_000,
    })
  }, 300_000)

  afterAll(async () => {
    for (const server of servers) await server.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("extracts every eligible session exactly once per change", () => {
    // A change is a new `time.updated` (the prompt's "Last activity"): OpenCode may still touch a
    // session after a pass saw it (its title arrives late), and that counts as new activity.
    const extracted = llm
      .requests()
      .filter((r) => r.kind === "structured")
      .map((r) => {
        const text = userText(r.body)
        return `${/Session: (ses_\w+)/.exec(text)?.[1]} at ${/Last activity: (\S+)/.exec(text)?.[1]}`
      })
    const counts = new Map<string, number>()
    for (const key of extracted) counts.set(key, (counts.get(key) ?? 0) + 1)
    expect(counts.size).toBeGreaterThanOrEqual(sessions.length - servers.length)
    for (const [key, count] of counts) expect(count, `${key} extracted ${count} times`).toBe(1)
    const stored = query<{ session_id: string }>(sandbox, "SELECT session_id FROM stage1_outputs").map((r) => r.session_id)
    expect(new Set(stored).size).toBe(stored.length)
    expect(stored.length).toBeGreaterThanOrEqual(sessions.length - servers.length)
  })

  it("never runs two consolidations at once", () => {
    // A consolidation starts with a request holding no tool result and ends with the final text.
    let running = 0
    let most = 0
    let started = 0
    for (const request of llm.requests().filter((r: LoggedRequest) => r.kind === "agent" && userText(r.body).includes(CONSOLIDATE))) {
      const last = request.body.messages?.at(-1)
      if (last?.role === "user") {
        running++
        started++
        most = Math.max(most, running)
      }
      if (request.reply.text?.startsWith("CONSOLIDATION-DONE")) running--
    }
    expect(started).toBeGreaterThanOrEqual(1)
    expect(most).toBe(1)
  })

  it("surfaces no SQLITE_BUSY error in any process", () => {
    for (const server of servers) expect(server.stderr() + server.stdout()).not.toMatch(/SQLITE_BUSY|database is locked/i)
    expect(query<{ last_error: string | null }>(sandbox, "SELECT last_error FROM jobs").map((r) => r.last_error ?? "").join("\n")).not.toMatch(/SQLITE_BUSY|locked/i)
  })

  it("leaves a database that passes an integrity check", () => {
    expect(query(sandbox, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
    expect(fs.existsSync(path.join(sandbox.memoryHome, "memories", "memory_summary.md"))).toBe(true)
  })
})
