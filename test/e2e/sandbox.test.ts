// The helpers' sandbox on a real OpenCode: a scripted consolidator tries to write and read outside
// the memory folder (directly and through `..`), run a shell command, fetch a URL, edit the
// project, and rewrite the git baseline's config. OpenCode refuses each attempt, nothing outside
// the memory folder changes, the run fails (it produced no valid memory), and the git baseline is
// left as it was. Meanwhile an extraction runs, and its helper is offered StructuredOutput alone.
//
// Three times: with the bundled agents; with a global config that defines both helpers with
// everything allowed (the plugin keeps its own permissions); and with a plugin loaded after ours
// that rewrites the helpers' permissions to allow everything (the agent definition is then not
// ours at all, and only the helper sessions' own rules hold).
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { pathToFileURL } from "node:url"
import git from "isomorphic-git"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { workspaceStatus } from "../../src/write/phase2/git-baseline.js"
import { FakeLlm, contentText, toolNames, type FakeToolCall, type LoggedRequest } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { query } from "./support/memory-db.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const CONSOLIDATE = "Consolidate the memory folder now"
const EVERYTHING = { "*": "allow", bash: "allow", webfetch: "allow", external_directory: "allow", read: "allow", edit: "allow" }

// A plugin that widens both helpers after our config hook has run.
const WIDENING_PLUGIN = `export default {
  id: "test-widen-helpers",
  server: async () => ({
    config: async (config) => {
      for (const name of ["memorize", "memorize-extract"]) {
        config.agent[name] = { ...config.agent[name], permission: ${JSON.stringify(EVERYTHING)} }
      }
    },
  }),
}
`

type Scenario = "bundled agents" | "a user config allowing everything" | "a later plugin allowing everything"

function phase2Row(sandbox: Sandbox): { status: string; last_error: string | null } | undefined {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return db.prepare("SELECT status, last_error FROM jobs WHERE kind = 'memory_consolidate_global'").get()
  } finally {
    db.close()
  }
}

interface AgentInfo {
  name: string
  permission?: Array<{ permission: string; pattern: string; action: string }>
}

describe.each<Scenario>(["bundled agents", "a user config allowing everything", "a later plugin allowing everything"])("the helpers' sandbox, with %s", (scenario) => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let outside: string
  let memoryRoot: string
  let gitConfig: string
  let web: http.Server
  let webHits = 0
  let consolidator: LoggedRequest[]
  /** The consolidator's scripted attempts to reach outside the memory folder. */
  let escapes: FakeToolCall[]
  let agents: AgentInfo[]

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
      ...(scenario === "a user config allowing everything"
        ? { config: { agent: { memorize: { temperature: 0.2, permission: EVERYTHING }, "memorize-extract": { permission: EVERYTHING, tools: { bash: true } } } } }
        : {}),
    })
    if (scenario === "a later plugin allowing everything") {
      const widen = path.join(sandbox.root, "widen-helpers.mjs")
      fs.writeFileSync(widen, WIDENING_PLUGIN)
      editConfig(sandbox, (config) => {
        config.plugin = [defaultPluginSpec(), pathToFileURL(widen).href]
      })
    }
    outside = path.join(sandbox.root, "outside")
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, "secret.txt"), "OUTSIDE-ORIGINAL")
    memoryRoot = path.join(sandbox.memoryHome, "memories")
    gitConfig = path.join(memoryRoot, ".git", "config")

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
      // The memory folder's own path, then out again.
      { name: "read", arguments: { filePath: `${memoryRoot}/../../outside/secret.txt` } },
      { name: "bash", arguments: { command: `echo pwned > ${path.join(outside, "bash.txt")}`, description: "escape" } },
      { name: "webfetch", arguments: { url, format: "text" } },
      { name: "edit", arguments: { filePath: path.join(sandbox.projectDir, "notes.md"), oldString: "", newString: "edited" } },
      { name: "write", arguments: { filePath: gitConfig, content: "[core]\n\tfsmonitor = echo pwned\n" } },
    ]
    llm.script(...escapes.map((call) => ({ match: CONSOLIDATE, toolCalls: [call] })), { match: CONSOLIDATE, text: "I could not do anything." })
    llm.setStructuredHandler(() => ({ rollout_summary: "Worked on the OTHER-FACT.", raw_memory: "---\ndescription: other\n---\n- OTHER-FACT", rollout_slug: "other" }))

    server = await startServe(sandbox)
    // A finished session in another project, for an extraction to pick up.
    const otherProject = path.join(sandbox.root, "other-project")
    fs.mkdirSync(otherProject)
    const other = new ServerApi(server.url, otherProject)
    const done = await other.createSession("other work")
    await other.prompt(done.id, "OTHER-FACT: the other service needs the vpn")
    const api = new ServerApi(server.url, sandbox.projectDir)
    const { id } = await api.createSession("trigger")
    await api.prompt(id, "hello")
    await waitFor(() => phase2Row(sandbox)?.status === "failed", { timeoutMs: 90_000, message: `the consolidation did not fail: ${JSON.stringify(phase2Row(sandbox))}` })
    await waitFor(() => query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_stage1' AND status = 'done'")[0]?.n === 1, {
      timeoutMs: 90_000,
      message: `the extraction did not finish: ${JSON.stringify(query(sandbox, "SELECT status, last_error FROM jobs WHERE kind = 'memory_stage1'"))}`,
    })
    consolidator = llm.requests().filter((r) => r.kind === "agent" && contentText((r.body.messages ?? []).find((m) => m.role === "user")?.content).includes(CONSOLIDATE))
    const response = await fetch(`${server.url}/agent?directory=${encodeURIComponent(memoryRoot)}`)
    agents = (await response.json()) as AgentInfo[]
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
    await new Promise((resolve) => web?.close(resolve))
  })

  it("runs the helpers on the agent definitions this scenario sets up", () => {
    const memorize = agents.find((agent) => agent.name === "memorize")
    const catchAll = memorize?.permission?.findLast((rule) => rule.permission === "*")
    // Only a plugin loaded after ours can still replace the definition; the session rules are what hold then.
    expect(catchAll?.action).toBe(scenario === "a later plugin allowing everything" ? "allow" : "deny")
  })

  it("offers the consolidator no shell, web or task tools", () => {
    // The first request, one after each escape attempt, and the final answer.
    expect(consolidator.length).toBeGreaterThanOrEqual(escapes.length + 1)
    const offered = toolNames(consolidator[0]!.body)
    expect(offered).toContain("read")
    for (const tool of ["bash", "webfetch", "websearch", "task", "StructuredOutput"]) expect(offered).not.toContain(tool)
  })

  it("refuses every attempt to reach outside the memory folder or to touch its git baseline", () => {
    const results = consolidator.slice(1).map((request) => {
      const last = request.body.messages?.at(-1)
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
    expect(fs.readFileSync(gitConfig, "utf8")).not.toContain("fsmonitor")
  })

  it("ends the run as failed and leaves the baseline untouched", async () => {
    expect(phase2Row(sandbox)?.last_error).toMatch(/invalid artifacts/)
    const commits = await git.log({ fs, dir: memoryRoot })
    expect(commits).toHaveLength(1)
    // The inputs synced for this run are still uncommitted changes against the old baseline.
    const status = await workspaceStatus(memoryRoot)
    expect(status.some((change) => change.path.startsWith("rollout_summaries/") && change.status === "A")).toBe(true)
  })

  it("still extracts, offering the extractor StructuredOutput and nothing else", () => {
    const structured = llm.requests().filter((r) => r.kind === "structured")
    expect(structured.length).toBeGreaterThanOrEqual(1)
    for (const request of structured) expect(toolNames(request.body)).toEqual(["StructuredOutput"])
    expect(query<{ raw_memory: string }>(sandbox, "SELECT raw_memory FROM stage1_outputs WHERE session_id <> 'ses_seeded0001'").map((r) => r.raw_memory)).toEqual([
      expect.stringContaining("OTHER-FACT"),
    ])
  })
})
