// What the real OpenCode 1.18.33 does with the one module that serves both hosts. It runs memory
// through `server`; its own V2 loader also converts the config's `plugin` list and calls `setup`,
// with a registration-only context (no session, tool or event domain). There `setup` adds the
// helper agents to the V2 agent registry and nothing else: no second memory, no error. 1.18.33's
// V2 engine then runs a V2 session of the consolidator agent, which lets the real binary prove
// the parts of the OpenCode 2 adapter it can: the agents' prompts and rules, and the consolidator
// sandbox's session rules (v2HelperRules) refusing every file outside the memory root.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v2HelperRules } from "../../src/v2/sandbox.js"
import { FakeLlm, systemTexts, toolNames } from "./support/fake-llm.js"
import { createSandbox, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

interface V2Agent {
  id: string
  mode: string
  hidden: boolean
  system?: string
  permissions: Array<{ action: string; resource: string; effect: string }>
}

interface ToolPart {
  type: string
  name: string
  state: { status: string; input: unknown; error?: { message?: string } }
}

describe("the real OpenCode 1.18.33 and the module's OpenCode 2 entry", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let agents: V2Agent[] = []
  let root: string
  const seen: { block?: string; tools?: string[]; system?: string; results?: ToolPart[] } = {}
  const files = { outside: "", project: "" }

  const v2 = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server.url}${route}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${route} -> ${response.status}: ${text.slice(0, 300)}`)
    return JSON.parse(text) as T
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global" })
    root = path.join(sandbox.memoryHome, "memories")
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), "v1\n## User profile\nSERVER-LOADED-FACT\n")
    files.outside = path.join(sandbox.root, "outside.txt")
    files.project = path.join(sandbox.projectDir, "src.txt")
    fs.writeFileSync(files.outside, "ORIGINAL")
    fs.writeFileSync(files.project, "PROJECT")
    server = await startServe(sandbox)

    // A V1 turn: memory through `server`; it also boots the location's V2 services, which set the module up.
    const api = new ServerApi(server.url, sandbox.projectDir)
    const session = await api.createSession("v1 turn")
    await api.prompt(session.id, "hello")
    seen.block = systemTexts(llm.requests().find((r) => r.kind === "agent")!.body).find((text) => text.includes("MEMORY SUMMARY BEGINS"))
    const location = `location[directory]=${encodeURIComponent(sandbox.projectDir)}`
    agents = await waitFor(
      async () => {
        const listed = (await v2<{ data?: V2Agent[] }>("GET", `/api/agent?${location}`)).data ?? []
        return listed.some((agent) => agent.id === "memorize") ? listed : undefined
      },
      { timeoutMs: 30_000, message: "the helper agents never reached the V2 agent registry" },
    )

    // A V2 session of the consolidator agent, with the adapter's session rules; the scripted model
    // tries to leave the memory root, then writes inside it.
    llm.reset()
    llm.script(
      {
        match: "consolidate-v2",
        toolCalls: [
          { name: "write", arguments: { path: files.outside, content: "CHANGED" } },
          { name: "write", arguments: { path: files.project, content: "CHANGED" } },
          { name: "write", arguments: { path: "relative.txt", content: "CHANGED" } },
          { name: "read", arguments: { path: files.outside } },
          { name: "write", arguments: { path: path.join(root, ".git", "config"), content: "[core]" } },
          { name: "write", arguments: { path: path.join(root, "MEMORY.md"), content: "INSIDE" } },
        ],
      },
      { match: "consolidate-v2", text: "done" },
    )
    const created = await v2<{ data: { id: string } }>("POST", "/api/session", { agent: "memorize", location: { directory: sandbox.projectDir }, permissions: v2HelperRules("consolidate", [root]) })
    await v2("POST", `/api/session/${created.data.id}/prompt`, { prompt: { text: "consolidate-v2" } })
    seen.results = await waitFor(
      async () => {
        const messages = (await v2<{ data: Array<{ content?: ToolPart[] }> }>("GET", `/api/session/${created.data.id}/message`)).data
        const parts = messages.flatMap((message) => (message.content ?? []).filter((part) => part.type === "tool"))
        return parts.length === 6 && parts.every((part) => ["completed", "error"].includes(part.state.status)) ? parts : undefined
      },
      { timeoutMs: 30_000, message: "the V2 consolidator session did not run its tool calls" },
    )
    const request = llm.requests().find((r) => r.kind === "agent")!.body
    seen.tools = toolNames(request).sort()
    seen.system = systemTexts(request).join("\n")
  }, 180_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("runs memory through server, and setup's registration-only call starts no second memory and logs no error", () => {
    expect(seen.block).toContain("SERVER-LOADED-FACT")
    expect(server.stderr()).not.toMatch(/\[codex-memory\] (error|warn)/)
    expect(fs.existsSync(path.join(sandbox.memoryHome, "memory_v2.db"))).toBe(false)
  })

  it("registers the helper agents in the V2 registry: hidden subagents with their own prompts and deny-first rules", () => {
    const memorize = agents.find((agent) => agent.id === "memorize")!
    const extract = agents.find((agent) => agent.id === "memorize-extract")!
    expect(memorize).toMatchObject({ mode: "subagent", hidden: true })
    expect(memorize.system).toMatch(/^You are the memory consolidator of opencode-codex-memory/)
    expect(memorize.permissions[0]).toEqual({ action: "*", resource: "*", effect: "deny" })
    expect(memorize.permissions).toContainEqual({ action: "write", resource: `${root}/*`, effect: "allow" })
    expect(memorize.permissions).toContainEqual({ action: "write", resource: `${root}/.git/*`, effect: "deny" })
    expect(extract.permissions).toEqual([{ action: "*", resource: "*", effect: "deny" }])
    const build = agents.find((agent) => agent.id === "build")!.permissions
    expect(build).toContainEqual({ action: "memory_reset", resource: "*", effect: "ask" })
    // The helpers are refused to the user's agents as subagents, not only hidden from the list.
    expect(build).toContainEqual({ action: "subagent", resource: "memorize", effect: "deny" })
    expect(build).toContainEqual({ action: "subagent", resource: "memorize-extract", effect: "deny" })
    // And the memory folder is kept out of their reach, last, so the user's earlier rules do not reopen it.
    expect(build.slice(-1)[0]).toMatchObject({ effect: "deny" })
    expect(build).toContainEqual({ action: "edit", resource: `${root}/*`, effect: "deny" })
  })

  it("runs a V2 consolidator session with its prompt and file tools only, and its rules refuse every file outside the memory root", () => {
    expect(seen.system).toMatch(/^You are the memory consolidator of opencode-codex-memory/)
    expect(seen.tools).toEqual(["apply_patch", "edit", "glob", "grep", "read", "write"])
    const outcome = seen.results!.map((part) => `${part.name} ${part.state.status}`)
    expect(outcome).toEqual(["write error", "write error", "write error", "read error", "write error", "write completed"])
    expect(fs.readFileSync(files.outside, "utf8")).toBe("ORIGINAL")
    expect(fs.readFileSync(files.project, "utf8")).toBe("PROJECT")
    expect(fs.existsSync(path.join(sandbox.projectDir, "relative.txt"))).toBe(false)
    expect(fs.existsSync(path.join(root, ".git", "config"))).toBe(false)
    expect(fs.readFileSync(path.join(root, "MEMORY.md"), "utf8")).toBe("INSIDE")
  })
})
