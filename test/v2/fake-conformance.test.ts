// The OpenCode 2 fake refuses what released OpenCode 2.0.x refuses, so a test that passes on it is
// not passing only because the fake is lenient: a module without `{ id, setup }`, a plugin tool
// left in Code Mode (off the model's native list) or named `execute`, hooks and transforms after
// their location is gone, rules where the session's come after the agent's, `context` for anything
// but an agent-loop request, a session domain without `remove`, no log or toast, file permissions
// asked as 2.0.x asks them, config agents missing from a transform's list, and the service's
// routes, pages and cursor rules. Each fact's source is in the fake's header.
import fs from "node:fs"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { V2Context, V2Event, V2Rule } from "../../src/v2/api.js"
import { FakeOpenCode2, V2_LOAD_ERROR } from "../fakes/opencode2.js"
import { settle, v2Setup, type V2Setup } from "./support.js"

let setup: V2Setup
afterEach(async () => setup?.cleanup())

describe("the OpenCode 2 fake", () => {
  it("loads only a default { id, setup } definition, like OpenCode 2's loader", async () => {
    expect(() => FakeOpenCode2.load({ default: { id: "v1-only", server: async () => ({}) } })).toThrow(V2_LOAD_ERROR)
    expect(() => FakeOpenCode2.load({ plugin: { id: "named", setup: () => undefined } })).toThrow(V2_LOAD_ERROR)
    expect(() => FakeOpenCode2.load({ default: { setup: () => undefined } })).toThrow(V2_LOAD_ERROR)
    expect(() => FakeOpenCode2.load({ default: async () => ({}) })).toThrow(V2_LOAD_ERROR)
    // Ours: one default export carrying both hosts' entry points.
    const ours = FakeOpenCode2.load(await import("../../src/index.js"))
    expect(ours.id).toBe("opencode-codex-memory")
  })

  it("keeps a plugin tool that does not set codemode: false off the native list", async () => {
    setup = v2Setup()
    const tools = (native: boolean) => ({
      id: native ? "native" : "coded",
      setup: async (ctx: V2Context) => {
        await ctx.tool.transform((editor) =>
          editor.add({ name: native ? "listed_tool" : "hidden_tool", description: "t", input: { type: "object" }, ...(native ? { options: { codemode: false } } : {}), execute: async () => ({ content: "ok" }) }),
        )
      },
    })
    await setup.fake.setup(tools(false), setup.projectDir)
    expect(setup.fake.nativeTools(setup.projectDir)).not.toContain("hidden_tool")
    expect(setup.fake.nativeTools(setup.projectDir)).toContain("execute")
    await setup.fake.dispose(setup.projectDir)
    await setup.fake.setup(tools(true), setup.projectDir)
    expect(setup.fake.nativeTools(setup.projectDir)).toContain("listed_tool")
    expect(setup.fake.nativeTools(setup.projectDir)).not.toContain("execute")
  })

  it("delivers events with their payload under data, and ends a location's streams when it is disposed", async () => {
    setup = v2Setup()
    const seen: V2Event[] = []
    let ended = false
    await setup.fake.setup(
      {
        id: "listener",
        setup: (ctx: V2Context) => {
          void (async () => {
            for await (const event of ctx.event.subscribe()) seen.push(event)
            ended = true
          })()
        },
      },
      setup.projectDir,
    )
    const id = await setup.fake.createSession(setup.projectDir, "t")
    await setup.fake.prompt(id, "hello")
    await settle()
    expect(seen.map((e) => e.type)).toEqual(["session.created", "session.execution.started", "session.text.ended", "session.execution.succeeded"])
    expect(seen[0]).toMatchObject({ data: { sessionID: id } })
    expect(seen[0]).not.toHaveProperty("properties")
    await setup.fake.dispose(setup.projectDir)
    await settle()
    expect(ended).toBe(true)
  })

  it("releases a location's hooks and transforms with it, and runs the plugin's cleanup first", async () => {
    setup = v2Setup()
    const order: string[] = []
    let captured: V2Context | undefined
    await setup.fake.setup(
      {
        id: "scoped",
        setup: async (ctx: V2Context) => {
          captured = ctx
          await ctx.tool.transform((editor) => editor.add({ name: "scoped_tool", description: "t", input: { type: "object" }, options: { codemode: false }, execute: async () => ({}) }))
          return () => void order.push("cleanup")
        },
      },
      setup.projectDir,
    )
    expect(setup.fake.nativeTools(setup.projectDir)).toContain("scoped_tool")
    await setup.fake.dispose(setup.projectDir)
    expect(order).toEqual(["cleanup"])
    await expect(captured!.tool.transform(() => undefined)).rejects.toThrow(/disposed/)
  })

  it("evaluates a session's rules after its agent's: the last match wins", async () => {
    setup = v2Setup()
    let ctx: V2Context | undefined
    await setup.fake.setup({ id: "rules", setup: (c: V2Context) => void (ctx = c) }, setup.projectDir)
    const session = await ctx!.session.create({ title: "confined", permissions: [{ action: "*", resource: "*", effect: "deny" }, { action: "read", resource: "*", effect: "allow" }] })
    setup.fake.model.script({ text: "looking" })
    await ctx!.session.prompt({ sessionID: session.id, text: "go" })
    await ctx!.session.wait({ sessionID: session.id })
    expect(setup.fake.requests.at(-1)?.tools).toEqual(["read"])
  })

  it("runs context for agent-loop requests only; title and compaction run their own hooks, and no event names a kind", async () => {
    setup = v2Setup()
    const seen: Array<{ hook: string; event: Record<string, unknown> }> = []
    await setup.fake.setup(
      {
        id: "hooks",
        setup: async (ctx: V2Context) => {
          for (const hook of ["context", "compaction", "title", "generate"] as const) {
            await ctx.session.hook(hook, (event: never) => void seen.push({ hook, event: { ...(event as object) } }))
          }
        },
      },
      setup.projectDir,
    )
    const id = await setup.fake.createSession(setup.projectDir, "t")
    setup.fake.model.script({ text: "hello back" })
    await setup.fake.prompt(id, "hello")
    await setup.fake.generateTitle(id)
    await setup.fake.compact(id)
    expect(seen.map((entry) => entry.hook)).toEqual(["context", "title", "compaction"])
    for (const entry of seen) expect(entry.event).not.toHaveProperty("kind")
    expect(Object.keys(seen[2]!.event)).toEqual(expect.arrayContaining(["sessionID", "agent", "model", "system", "messages", "options", "tools"]))
  })

  it("asks the model for a title and a compaction whatever result a hook sets, as 2.1.2 does", async () => {
    setup = v2Setup()
    await setup.fake.setup(
      {
        id: "results",
        setup: async (ctx: V2Context) => {
          await ctx.session.hook("title", (event) => void ((event as unknown as { result: string }).result = "Plugin title"))
          await ctx.session.hook("compaction", (event) => void ((event as unknown as { result: unknown }).result = { summary: "plugin summary" }))
        },
      },
      setup.projectDir,
    )
    const id = await setup.fake.createSession(setup.projectDir, "t")
    setup.fake.model.script({ kind: "title", text: "Model title" }, { text: "model summary" })
    expect(await setup.fake.generateTitle(id)).toBe("Model title")
    const compaction = await setup.fake.compact(id)
    expect(compaction).toEqual({ summary: "model summary" })
    expect(setup.fake.requests.map((request) => request.kind)).toEqual(["title", "compaction"])
    expect(setup.fake.events.find((event) => event.type === "session.compaction.ended")?.data).toMatchObject({ sessionID: id, text: "model summary" })
  })

  it("gives the context no log, no toast and (2.0.16) no session.remove; later 2.0.x adds remove", async () => {
    for (const sessionRemove of [false, true]) {
      setup = v2Setup({ variant: { sessionRemove } })
      let ctx: V2Context | undefined
      await setup.fake.setup({ id: "shape", setup: (c: V2Context) => void (ctx = c) }, setup.projectDir)
      const context = ctx as unknown as Record<string, unknown>
      expect(context.log).toBeUndefined()
      expect(context.toast).toBeUndefined()
      expect((context.app as Record<string, unknown>).log).toBeUndefined()
      expect(typeof ctx!.session.remove).toBe(sessionRemove ? "function" : "undefined")
      expect(ctx!.location.project).toEqual({ id: "prj_fake", directory: setup.projectDir, canonical: `local:${setup.projectDir}` })
      await ctx!.storage!.set("k", { v: 1 })
      await ctx!.storage!.remove!("k")
      expect(await ctx!.storage!.get("k")).toBeUndefined()
      await setup.cleanup()
    }
  })

  it("refuses a native tool named execute (reserved for Code Mode)", async () => {
    setup = v2Setup()
    const plugin = {
      id: "reserved",
      setup: async (ctx: V2Context) => {
        await ctx.tool.transform((editor) => editor.add({ name: "execute", description: "t", input: { type: "object" }, options: { codemode: false }, execute: async () => ({}) }))
      },
    }
    await expect(setup.fake.setup(plugin, setup.projectDir)).rejects.toThrow(/reserved for CodeMode/)
  })

  it("asks edit for the write tool, names a file inside the location by its relative path, one outside after external_directory <folder>/*", async () => {
    setup = v2Setup()
    let ctx: V2Context | undefined
    await setup.fake.setup({ id: "asks", setup: (c: V2Context) => void (ctx = c) }, setup.projectDir)
    const outside = setup.project("elsewhere")
    const asked: string[] = []
    setup.fake.onAsk = (action, resource) => (asked.push(`${action} ${resource}`), true)
    const rules: V2Rule[] = [{ action: "*", resource: "*", effect: "ask" }]
    const session = await ctx!.session.create({ title: "asks", permissions: rules })
    setup.fake.model.script(
      { toolCalls: [{ name: "write", arguments: { path: "notes/a.md", content: "x" } }] },
      { toolCalls: [{ name: "write", arguments: { path: path.join(outside, "b.md"), content: "y" } }] },
      { text: "done" },
    )
    await ctx!.session.prompt({ sessionID: session.id, text: "write" })
    await ctx!.session.wait({ sessionID: session.id })
    expect(asked).toEqual([`edit ${path.join("notes", "a.md")}`, `external_directory ${outside}/*`, `edit ${path.join(outside, "b.md")}`])
    expect(fs.readFileSync(path.join(outside, "b.md"), "utf8")).toBe("y")
  })

  it("throws, as 2.1.2 does, when an RPC definition has no events", async () => {
    setup = v2Setup()
    let ctx: V2Context | undefined
    await setup.fake.setup({ id: "rpc", setup: (c: V2Context) => void (ctx = c) }, setup.projectDir)
    const methods = { status: { input: { type: "object" }, output: { type: "object" } } }
    await expect(ctx!.rpc!.register({ id: "no-events", methods }, { status: async () => ({}) })).rejects.toThrow("Object.entries requires that input parameter not be null or undefined")
    await expect(ctx!.rpc!.register({ id: "with-events", methods, events: {} }, { status: async () => ({}) })).resolves.toBeDefined()
  })

  it("never completes a tool call whose metadata holds a null, and refuses a built-in tool's result without its declared output", async () => {
    setup = v2Setup()
    let ctx: V2Context | undefined
    const plugin = {
      id: "results",
      setup: async (c: V2Context) => {
        ctx = c
        await c.tool.transform((editor) => {
          editor.add({ name: "nulls", description: "t", input: { type: "object" }, options: { codemode: false }, execute: async () => ({ content: "ok", metadata: { next_cursor: null } }) })
          editor.update("read", (tool) => {
            tool.execute = async () => ({ content: "no output" })
          })
          editor.update("glob", (tool) => {
            tool.execute = async () => {
              throw new Error("Refused: outside")
            }
          })
        })
      },
    }
    await setup.fake.setup(plugin, setup.projectDir)
    const session = await ctx!.session.create({ title: "results", permissions: [{ action: "*", resource: "*", effect: "allow" }] })
    setup.fake.model.script(
      { toolCalls: [{ name: "nulls", arguments: {} }] },
      { toolCalls: [{ name: "read", arguments: { path: "x" } }] },
      { toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] },
      { text: "done" },
    )
    await ctx!.session.prompt({ sessionID: session.id, text: "results" })
    await ctx!.session.wait({ sessionID: session.id })
    const parts = (await ctx!.session.context({ sessionID: session.id })).flatMap((m) => (m.content ?? []) as Array<{ type: string; name?: string; state?: { status: string; content: Array<{ text: string }> } }>).filter((p) => p.type === "tool")
    expect(parts.map((p) => [p.name, p.state!.status, p.state!.content[0]!.text])).toEqual([
      ["nulls", "running", "Tool result missing"],
      ["read", "error", "Tool did not return its declared output"],
      ["glob", "error", "Refused: outside"],
    ])
  })

  it("leaves the user's config agents out of an agent transform's list, though they run", async () => {
    setup = v2Setup({ variant: { configAgents: ["reviewer"] } })
    let listed: unknown[] = []
    await setup.fake.setup({ id: "agents", setup: async (ctx: V2Context) => void (await ctx.agent.transform((editor) => void (listed = [...(editor.list?.() ?? [])]))) }, setup.projectDir)
    expect(listed).toEqual([{ id: "build" }])
    expect(setup.fake.agent(setup.projectDir, "reviewer")).toBeDefined()
  })

  it("serves the 2.0.x routes only: /api/info, paged lists whose cursor carries the query, DELETE, and /api/experimental/generate", async () => {
    setup = v2Setup()
    const url = await setup.fake.startService(setup.stateDir, { password: "pw" })
    const auth = { authorization: `Basic ${Buffer.from("opencode:pw").toString("base64")}` }
    const get = async (route: string, init: RequestInit = {}) => {
      const response = await fetch(new URL(route, url), { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } })
      return { status: response.status, body: (await response.json()) as { data?: unknown[]; cursor?: { next?: string } } }
    }
    expect((await get("/api/info")).status).toBe(200)
    for (const gone of ["/api/status", "/api/health"]) expect((await get(gone)).status).toBe(404)
    expect((await get("/api/generate", { method: "POST", body: JSON.stringify({ prompt: "x" }) })).status).toBe(404)
    const generated = await get("/api/experimental/generate", { method: "POST", body: JSON.stringify({ prompt: "x" }) })
    expect(generated.status).toBe(200)
    expect(typeof (generated.body as { data?: { text?: unknown } }).data?.text).toBe("string")

    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await setup.fake.createSession(setup.projectDir, `s${i}`))
    const first = await get("/api/session?parentID=null&order=desc&limit=2")
    expect(first.body.data).toHaveLength(2)
    const second = await get(`/api/session?cursor=${first.body.cursor!.next}&limit=2`)
    expect(second.body.data).toHaveLength(2)
    expect((await get("/api/session?limit=201")).status).toBe(400)
    for (let i = 0; i < 3; i++) setup.fake.storeReply(ids[0]!, `reply ${i}`)
    const messages = await get(`/api/session/${ids[0]}/message?order=asc&limit=2`)
    expect(messages.body.data).toHaveLength(2)
    expect((await get(`/api/session/${ids[0]}/message?order=asc&limit=2&cursor=${messages.body.cursor!.next}`)).status).toBe(400)
    expect((await get(`/api/session/${ids[0]}/message?limit=2&cursor=${messages.body.cursor!.next}`)).body.data).toHaveLength(1)
    expect((await get(`/api/session/${ids[1]}`, { method: "DELETE" })).status).toBe(200)
    expect((await get(`/api/session/${ids[1]}`)).status).toBe(404)
  })
})
