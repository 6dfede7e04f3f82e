// The OpenCode 2 fake refuses what OpenCode 2 refuses, so a test that passes on it is not passing
// only because the fake is lenient: a module without `{ id, setup }`, a plugin tool left in Code
// Mode (off the model's native list), hooks and transforms after their location is gone, rules
// where the session's come after the agent's.
import { afterEach, describe, expect, it } from "vitest"
import type { V2Context, V2Event } from "../../src/v2/api.js"
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
})
