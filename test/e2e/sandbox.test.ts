// The consolidator's sandbox on a real OpenCode: a scripted consolidator tries to write and read
// outside the memory folder, run a shell command and fetch a URL. OpenCode refuses each attempt,
// nothing outside the memory folder changes, the run fails (it produced no valid memory), and the
// git baseline is left as it was.
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import git from "isomorphic-git"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { workspaceStatus } from "../../src/write/git-baseline.js"
import { FakeLlm, contentText, toolNames, type FakeToolCall, type LoggedRequest } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const CONSOLIDATE = "Consolidate the memory folder now"

function phase2Row(sandbox: Sandbox): { status: string; last_error: string | null } | undefined {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return db.prepare("SELECT status, last_error FROM jobs WHERE kind = 'memory_consolidate_global'").get()
  } finally {
    db.close()
  }
}

describe("the consolidator's sandbox", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let outside: string
  let web: http.Server
  let webHits = 0
  let consolidator: LoggedRequest[]
  /** The consolidator's scripted attempts to reach outside the memory folder. */
  let escapes: FakeToolCall[]

  beforeAll(async () => {
    llm = await FakeLlm.start()
    web = http.createServer((_req, res) => {
      webHits++
      res.end("fetched")
    })
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve))
    sandbox = await createSandbox({
      llmUrl: llm.url,
      configScope: "global",
      plugins: [defaultPluginSpec()],
      env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
    })
    outside = path.join(sandbox.root, "outside")
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, "secret.txt"), "OUTSIDE-ORIGINAL")

    // One extracted memory waiting for its first consolidation.
    const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
    db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ('ses_seeded0001', $t, '- a lesson', 'A session.', 'lesson', '/p', $t)",
    ).run({ t: Date.now() })
    new Stage1Jobs(db).enqueuePhase2(1)
    db.close()

    const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/exfiltrate`
    escapes = [
      { name: "write", arguments: { filePath: path.join(outside, "escape.md"), content: "escaped" } },
      { name: "read", arguments: { filePath: path.join(outside, "secret.txt") } },
      { name: "bash", arguments: { command: `echo pwned > ${path.join(outside, "bash.txt")}`, description: "escape" } },
      { name: "webfetch", arguments: { url, format: "text" } },
      { name: "edit", arguments: { filePath: path.join(sandbox.projectDir, "notes.md"), oldString: "", newString: "edited" } },
    ]
    llm.script(...escapes.map((call) => ({ match: CONSOLIDATE, toolCalls: [call] })), { match: CONSOLIDATE, text: "I could not do anything." })
    server = await startServe(sandbox)
    const api = new ServerApi(server.url, sandbox.projectDir)
    const { id } = await api.createSession("trigger")
    await api.prompt(id, "hello")
    await waitFor(() => phase2Row(sandbox)?.status === "failed", { timeoutMs: 60_000, message: `the consolidation did not fail: ${JSON.stringify(phase2Row(sandbox))}` })
    consolidator = llm.requests().filter((r) => r.kind === "agent" && contentText(r.body.messages.find((m) => m.role === "user")?.content).includes(CONSOLIDATE))
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
    await new Promise((resolve) => web?.close(resolve))
  })

  it("offers the consolidator no shell, web or task tools", () => {
    // The first request, one after each escape attempt, and the final answer.
    expect(consolidator.length).toBeGreaterThanOrEqual(escapes.length + 1)
    const offered = toolNames(consolidator[0]!.body)
    for (const tool of ["bash", "webfetch", "websearch", "task"]) expect(offered).not.toContain(tool)
  })

  it("refuses every attempt to reach outside the memory folder", () => {
    const results = consolidator.slice(1).map((request) => {
      const last = request.body.messages.at(-1)
      return last?.role === "tool" ? contentText(last.content) : ""
    })
    // One refusal per attempt: by permission rule (outside the folder) or by absence (no such tool).
    const refusals = results.slice(0, escapes.length)
    expect(refusals).toHaveLength(escapes.length)
    for (const result of refusals) expect(result).toMatch(/prevents you from using this specific tool call|unavailable tool/)
    expect(results.join("\n")).not.toContain("OUTSIDE-ORIGINAL")
    expect(results.join("\n")).not.toContain("fetched")
    expect(webHits).toBe(0)
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("OUTSIDE-ORIGINAL")
    expect(fs.existsSync(path.join(sandbox.projectDir, "notes.md"))).toBe(false)
  })

  it("ends the run as failed and leaves the baseline untouched", async () => {
    expect(phase2Row(sandbox)?.last_error).toMatch(/invalid artifacts/)
    const root = path.join(sandbox.memoryHome, "memories")
    const commits = await git.log({ fs, dir: root })
    expect(commits).toHaveLength(1)
    // The inputs synced for this run are still uncommitted changes against the old baseline.
    const status = await workspaceStatus(root)
    expect(status.some((change) => change.path.startsWith("rollout_summaries/") && change.status === "A")).toBe(true)
  })
})
