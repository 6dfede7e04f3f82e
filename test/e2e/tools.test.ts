// Memory tools and the citation loop on a real OpenCode: the model searches memory, reads it,
// cites it; the stored reply carries no citation markup and usage is counted once. Then
// memory_reset: refused when the user rejects it, done when they approve.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { FakeLlm, contentText, type LoggedRequest } from "./support/fake-llm.js"
import { createSandbox, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Status } from "./support/memory-db.js"

const handbook = (source: string) => ["# Handbook", "", "## Deploying acme-api", `- Deploy with \`make ship\` from the repo root (${source}).`, "- Never deploy on Fridays.", ""].join("\n")
const citation = (source: string) =>
  ["<memory-citation>", "<citation_entries>", "MEMORY.md:3-5|note=[how acme-api is deployed]", "</citation_entries>", "<session_ids>", source, "</session_ids>", "</memory-citation>"].join("\n")

function readDb<T>(sandbox: Sandbox, sql: string): T[] {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return db.prepare(sql).all<T>()
  } finally {
    db.close()
  }
}

function toolResults(request: LoggedRequest): string[] {
  return (request.body.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content))
}

describe("memory tools and citations in a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let api: ServerApi

  // The session the handbook's deploy fact was learned from: a real one, since memory forgets the
  // records of sessions OpenCode no longer has.
  let sourceSession: string
  let handbookText: string
  let citationText: string

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url })
    server = await startServe(sandbox)
    api = new ServerApi(server.url, sandbox.projectDir)
    sourceSession = (await api.createSession("deploy notes")).id
    handbookText = handbook(sourceSession)
    citationText = citation(sourceSession)
    const root = path.join(sandbox.memoryHome, "memories")
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), "v1\n- acme-api deploys are in MEMORY.md\n")
    fs.writeFileSync(path.join(root, "MEMORY.md"), handbookText)
    const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
    // Recent, so retention pruning (which runs after every phase-1 pass) keeps it.
    db.prepare(
      "INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ($id, $now, 'deploy with make ship', 'deploy session', $now)",
    ).run({ id: sourceSession, now: Date.now() })
    db.close()
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  describe("search, read, cite", () => {
    let sessionId: string
    let agent: LoggedRequest[]

    beforeAll(async () => {
      llm.reset()
      llm.script(
        { toolCalls: [{ name: "memory_search", arguments: { queries: ["deploy", "ship"], path: "MEMORY.md" } }] },
        { toolCalls: [{ name: "memory_read", arguments: { path: "MEMORY.md", line_offset: 3, max_lines: 3 } }] },
        { text: `Deploy with \`make ship\` from the repo root.\n\n${citationText}` },
      )
      sessionId = (await api.createSession("deploy question")).id
      await api.prompt(sessionId, "How do I deploy acme-api?")
      agent = llm.requests().filter((r) => r.kind === "agent")
    })

    it("offers the tools with the JSON Schema OpenCode made from the plugin's own zod", () => {
      // zod is the plugin's own dependency, not OpenCode's plugin package: OpenCode's copy must
      // still turn its schemas into the parameters the model sees.
      const offered = new Map((agent[0]!.body.tools ?? []).map((t) => [t.function?.name, t.function as { parameters?: { type?: string; properties?: Record<string, { type?: string }>; required?: string[] } }]))
      const search = offered.get("memory_search")?.parameters
      expect(search?.type).toBe("object")
      expect(search?.properties?.queries?.type).toBe("array")
      expect(search?.required).toContain("queries")
      const note = offered.get("memory_add_note")?.parameters
      expect(note?.required).toEqual(expect.arrayContaining(["title", "note"]))
      expect(note?.properties?.title?.type).toBe("string")
      // The helpers are the plugin's own: OpenCode's task tool does not offer them to the agent.
      const task = JSON.stringify(offered.get("task") ?? {})
      expect(task).toContain("general")
      expect(task).not.toContain("memorize")
    })

    it("lets the model search memory and read the lines it found", () => {
      expect(agent).toHaveLength(3)
      const [searchResult] = toolResults(agent[1]!)
      expect(searchResult).toContain("MEMORY.md:4")
      expect(searchResult).toContain("make ship")
      const readResult = toolResults(agent[2]!).at(-1) ?? ""
      expect(readResult).toContain("MEMORY.md (lines 3-5 of")
      expect(readResult).toContain("4| - Deploy with `make ship`")
    })

    it("stores the reply without the citation block", async () => {
      const messages = await api.messages(sessionId)
      const texts = messages
        .filter((m) => m.info.role === "assistant")
        .flatMap((m) => m.parts)
        .filter((p) => p.type === "text")
        .map((p) => String(p.text))
      expect(texts.join("\n")).toContain("Deploy with `make ship` from the repo root.")
      for (const text of texts) expect(text).not.toContain("memory-citation")
    })

    it("records usage exactly once, and the cited file", async () => {
      // A later turn re-sends the history; the counted part must not count again.
      llm.script({ text: "Anything else?" })
      await api.prompt(sessionId, "thanks")
      const history = llm.requests().filter((r) => r.kind === "agent").at(-1)!
      // The system prompt explains the block; the conversation itself must not carry one.
      const conversation = (history.body.messages ?? []).filter((m) => m.role !== "system")
      expect(JSON.stringify(conversation)).toContain("make ship")
      expect(JSON.stringify(conversation)).not.toContain("memory-citation")
      expect(readDb(sandbox, `SELECT usage_count FROM stage1_outputs WHERE session_id = '${sourceSession}'`)).toEqual([{ usage_count: 1 }])
      expect(readDb(sandbox, "SELECT COUNT(*) AS n FROM citation_parts")).toEqual([{ n: 1 }])
      expect(readDb(sandbox, "SELECT path, last_range FROM cited_files")).toEqual([{ path: "MEMORY.md", last_range: "3-5" }])
    })
  })

  describe("memory_reset", () => {
    async function resetWith(reply: "reject" | "once"): Promise<string> {
      llm.reset()
      llm.script({ toolCalls: [{ name: "memory_reset", arguments: { confirm: true } }] }, { text: "Reset handled." })
      const { id } = await api.createSession(`reset ${reply}`)
      await api.promptAsync(id, "Please erase all of your memory.")
      const request = await waitFor(async () => (await api.pendingPermissions()).find((p) => p.sessionID === id && p.permission === "memory_reset"), {
        timeoutMs: 30_000,
        message: "memory_reset never asked for approval",
      })
      await api.replyPermission(request.id, reply)
      await waitFor(async () => !(await api.status())[id], { timeoutMs: 30_000, message: "the session did not go idle" })
      return toolResults(llm.requests().filter((r) => r.kind === "agent").at(-1)!).join("\n")
    }

    it("is refused when the user rejects it, and changes nothing", async () => {
      const result = await resetWith("reject")
      expect(result).toContain("Refused")
      expect(fs.existsSync(path.join(sandbox.memoryHome, "memories", "MEMORY.md"))).toBe(true)
      expect(readDb(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")).toEqual([{ n: 1 }])
    })

    it("erases memory when the user approves it", async () => {
      // A note or mode change earlier in this file wakes phase 2; reset is refused while it runs.
      await waitFor(() => phase2Status(sandbox) !== "running", { timeoutMs: 120_000, message: "the consolidation woken by the notes never ended" })
      const result = await resetWith("once")
      expect(result).toContain("Erased all memory")
      expect(fs.readdirSync(path.join(sandbox.memoryHome, "memories"))).toEqual([])
      expect(readDb(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs")).toEqual([{ n: 0 }])
      expect(readDb(sandbox, "SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'")).toEqual([{ status: "done" }])
    })
  })
})
