// Crashes and closed windows on a real OpenCode. OpenCode 1.18 exits on SIGTERM without calling
// the plugin's dispose, and SIGKILL gives no chance at all: in both cases the dead process's
// leases must be taken over at the next start (not an hour later), the work must complete,
// the database must stay sound, and nothing already extracted may be lost.
import fs from "node:fs"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { validateArtifacts } from "../../src/write/phase2/workspace.js"
import { FakeLlm, userText } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Status, query } from "./support/memory-db.js"

const HOUR = 3_600_000
const CONSOLIDATE = "Consolidate the memory folder now"
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})



async function setup(): Promise<{ llm: FakeLlm; sandbox: Sandbox; root: string; start: () => Promise<ServeHandle> }> {
  const llm = await FakeLlm.start()
  const sandbox = await createSandbox({
    llmUrl: llm.url,
    configScope: "global",
    plugins: [defaultPluginSpec()],
    env: { OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS: String(7 * HOUR) },
  })
  const servers: ServeHandle[] = []
  cleanups.push(async () => {
    for (const server of servers) await server.kill("SIGKILL")
    await sandbox.cleanup()
    await llm.close()
  })
  return {
    llm,
    sandbox,
    root: path.join(sandbox.memoryHome, "memories"),
    start: async () => {
      const server = await startServe(sandbox)
      servers.push(server)
      return server
    },
  }
}

/** Any message in a new session starts a phase-1 pass, and phase 2 after it. */
async function nudge(server: ServeHandle, sandbox: Sandbox): Promise<void> {
  const api = new ServerApi(server.url, sandbox.projectDir)
  const { id } = await api.createSession("nudge")
  await api.prompt(id, "hello")
}

/** A record of `sessionId` waiting to be consolidated; the session must exist in OpenCode, or memory forgets it. */
function seedForConsolidation(sandbox: Sandbox, sessionId: string): void {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  db.prepare(
    "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at) VALUES ($id, $t, '- deploy with make ship', 'Deploy notes.', 'deploys', '/p', $t)",
  ).run({ id: sessionId, t: Date.now() })
  new Stage1Jobs(db).enqueuePhase2(1)
  db.close()
}

describe("crashes and closed windows", () => {
  // SIGTERM in the middle of a consolidation is scenarios.test.ts's step D on both host lines.
  for (const signal of ["SIGKILL"] as const) {
    it(`after ${signal} in the middle of a consolidation, the next start consolidates within a minute`, async () => {
      const { llm, sandbox, root, start } = await setup()
      // The first consolidator writes MEMORY.md, then stalls before the summary.
      llm.script(
        { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "MEMORY.md"), content: "# Task group: half\n" } }] },
        { match: CONSOLIDATE, text: "still thinking ".repeat(200), delayMs: 1_000 },
      )
      const first = await start()
      const source = (await new ServerApi(first.url, sandbox.projectDir).createSession("deploy notes")).id
      seedForConsolidation(sandbox, source)
      await nudge(first, sandbox)
      await waitFor(() => llm.requests().filter((r) => userText(r.body).includes(CONSOLIDATE)).length >= 2, { timeoutMs: 30_000, message: "the consolidator never got going" })
      expect(fs.existsSync(path.join(root, "MEMORY.md"))).toBe(true)
      await first.kill(signal)
      expect(query(sandbox, "SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'")).toEqual([{ status: "running" }])

      llm.reset()
      llm.script(
        { match: CONSOLIDATE, toolCalls: [{ name: "read", arguments: { filePath: path.join(root, "MEMORY.md") } }] },
        { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "MEMORY.md"), content: "# Task group: deploys\n- make ship\n" } }] },
        { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "memory_summary.md"), content: "v1\n- deploys: make ship\n" } }] },
        { match: CONSOLIDATE, text: "done" },
      )
      const restartedAt = Date.now()
      const second = await start()
      await nudge(second, sandbox)
      await waitFor(() => phase2Status(sandbox) === "done", {
        timeoutMs: 60_000,
        message: `no consolidation after the restart: ${JSON.stringify(query(sandbox, "SELECT * FROM jobs"))}`,
      })
      expect(Date.now() - restartedAt).toBeLessThan(60_000)
      expect(validateArtifacts(root)).toEqual({ valid: true })
      expect(query(sandbox, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
      expect(query(sandbox, "SELECT session_id FROM stage1_outputs")).toEqual([{ session_id: source }])
      // The helper session the dead process left behind is cleaned up at the next start.
      const leftovers = await (await fetch(`${second.url}/experimental/session?roots=true&directory=&search=${encodeURIComponent("[codex-memory]")}`)).json()
      expect(leftovers).toEqual([])
    })
  }

  it("after SIGKILL in the middle of an extraction, the next start extracts the session and loses nothing", async () => {
    const { llm, sandbox, start } = await setup()
    // Two finished sessions from before; one already extracted, one not.
    const earlier = await start()
    const api = new ServerApi(earlier.url, sandbox.projectDir)
    const done = (await api.createSession("done")).id
    await api.prompt(done, "EARLIER-FACT: the build uses bazel")
    const pending = (await api.createSession("pending")).id
    await api.prompt(pending, "LATER-FACT: tests need docker")
    await earlier.kill("SIGKILL")
    const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
    db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, $t, '- bazel', 'Build notes.', $t)").run({ id: done, t: Date.now() + 8 * HOUR })
    db.close()

    llm.structuredDelayMs = 2_000
    llm.setStructuredHandler((request) => ({ rollout_summary: "Docker notes.", raw_memory: `- ${/LATER-FACT: [^\n"]*/.exec(userText(request))?.[0] ?? "?"}`, rollout_slug: "docker" }))
    const crashing = await start()
    await nudge(crashing, sandbox)
    await waitFor(() => llm.requests().some((r) => r.kind === "structured"), { timeoutMs: 30_000, message: "extraction never started" })
    await crashing.kill("SIGKILL")
    expect(query<{ status: string }>(sandbox, `SELECT status FROM jobs WHERE job_key = '${pending}'`)).toEqual([{ status: "running" }])

    llm.structuredDelayMs = 0
    const restarted = await start()
    await nudge(restarted, sandbox)
    await waitFor(() => query(sandbox, `SELECT 1 FROM stage1_outputs WHERE session_id = '${pending}'`).length === 1, {
      timeoutMs: 60_000,
      message: `the interrupted extraction never completed: ${JSON.stringify(query(sandbox, "SELECT * FROM jobs"))}`,
    })
    expect(query<{ raw_memory: string }>(sandbox, `SELECT raw_memory FROM stage1_outputs WHERE session_id = '${pending}'`)[0]!.raw_memory).toContain("tests need docker")
    expect(query(sandbox, `SELECT session_id FROM stage1_outputs WHERE session_id = '${done}'`)).toHaveLength(1)
    expect(query(sandbox, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
  })
})
