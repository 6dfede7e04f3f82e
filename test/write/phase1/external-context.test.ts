import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { Memory } from "../../../src/memory.js"
import { ExternalContext } from "../../../src/write/phase1/external-context.js"
import { FakeHost } from "../../fakes/host.js"

const memories: Memory[] = []
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

async function setup(options: Record<string, unknown>) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-ext-"))
  const host = new FakeHost()
  host.mcp = ["github", "my.docs"]
  const memory = new Memory({ home, ...options }, { host, env: {}, homedir: home })
  memories.push(memory)
  await memory.start()
  return { memory, host }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe("external context", () => {
  it("counts web tools and tools of MCP servers, never OpenCode's own or memory tools", async () => {
    const host = new FakeHost()
    host.mcp = ["github", "my.docs"]
    const context = new ExternalContext(host, Date.now)
    expect(await context.isExternal("webfetch")).toBe(true)
    expect(await context.isExternal("websearch")).toBe(true)
    expect(await context.isExternal("github_create_issue")).toBe(true)
    expect(await context.isExternal("my_docs_search")).toBe(true)
    expect(await context.isExternal("read")).toBe(false)
    expect(await context.isExternal("memory_search")).toBe(false)
    expect(await context.isExternal("gitlab_thing")).toBe(false)
  })

  it("asks OpenCode for the MCP servers once, even for concurrent calls, and caches the answer", async () => {
    const host = new FakeHost()
    host.mcp = ["github"]
    const context = new ExternalContext(host, Date.now)
    await Promise.all([context.isExternal("a_x"), context.isExternal("b_y"), context.isExternal("c_z")])
    await context.isExternal("d_w")
    expect(host.mcpCalls).toBe(1)
  })

  it("treats an unanswered MCP status as no MCP, rather than failing", async () => {
    const host = new FakeHost()
    host.mcpServers = async () => {
      throw new Error("not ready")
    }
    expect(await new ExternalContext(host, Date.now).isExternal("github_x")).toBe(false)
  })

  it("marks the session polluted with disable_on_external_context, and only then", async () => {
    const on = await setup({ disable_on_external_context: true })
    on.memory.onToolUse("ses_a", "webfetch")
    on.memory.onToolUse("ses_b", "read")
    on.memory.onToolUse("ses_c", "my_docs_search")
    await vi.waitFor(() => expect(on.memory.store()?.mode("ses_a")).toBe("polluted"))
    await vi.waitFor(() => expect(on.memory.store()?.mode("ses_c")).toBe("polluted"))
    await settle()
    expect(on.memory.store()?.mode("ses_b")).toBe("enabled")
    const off = await setup({})
    off.memory.onToolUse("ses_a", "webfetch")
    await settle()
    expect(off.memory.store()?.mode("ses_a")).toBe("enabled")
  })

  it("queues phase 2 when a polluted session had been consolidated, and keeps a disabled session disabled", async () => {
    const { memory } = await setup({ disable_on_external_context: true })
    const db = memory.store()!.db
    db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at, selected_for_phase2) VALUES ('ses_a', 1, 'r', 's', 1, 1)").run()
    memory.store()!.setMode("ses_d", "disabled")
    expect(db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'memory_consolidate_global'").get()).toEqual({ n: 0 })
    memory.onToolUse("ses_a", "github_search")
    memory.onToolUse("ses_d", "webfetch")
    await vi.waitFor(() => expect(memory.store()?.mode("ses_a")).toBe("polluted"))
    await settle()
    expect(db.prepare("SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'").get()).toMatchObject({ status: expect.any(String) })
    expect(memory.store()?.mode("ses_d")).toBe("disabled")
  })
})
