import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as entry from "../../src/index.js"

type Hooks = Awaited<ReturnType<typeof entry.default.server>>

/** A client whose API never answers, like OpenCode's while it is still loading plugins. */
function stalledClient(logs: unknown[] = []) {
  return {
    app: {
      log: (request: unknown) => {
        logs.push(request)
        return new Promise(() => undefined)
      },
    },
  }
}

const instances: Hooks[] = []
async function load(options: Record<string, unknown>, logs: unknown[] = []): Promise<Hooks> {
  const input = { client: stalledClient(logs), directory: "/project", worktree: "/project" } as never
  const hooks = await entry.default.server(input, options as never)
  instances.push(hooks)
  return hooks
}

afterEach(async () => {
  for (const hooks of instances.splice(0)) await hooks.dispose?.()
})

function tempHome(summary?: string): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-plugin-"))
  if (summary !== undefined) {
    fs.mkdirSync(path.join(home, "memories"))
    fs.writeFileSync(path.join(home, "memories", "memory_summary.md"), summary)
  }
  return home
}

async function systemFor(hooks: Hooks, sessionID = "ses_a"): Promise<string[]> {
  const output = { system: ["You are OpenCode."] }
  await hooks["experimental.chat.system.transform"]?.({ sessionID, model: {} as never }, output)
  return output.system
}

describe("the plugin entry", () => {
  it("exports only a default { id, server, setup }: OpenCode 1 loads server, OpenCode 2 setup", () => {
    expect(Object.keys(entry)).toEqual(["default"])
    expect(Object.keys(entry.default).sort()).toEqual(["id", "server", "setup"])
    expect(typeof entry.default.setup).toBe("function")
    expect(entry.default.id).toBe("opencode-codex-memory")
  })

  it("returns its hooks without waiting on OpenCode's API", async () => {
    const logs: unknown[] = []
    const started = Date.now()
    const hooks = await load({ home: tempHome(), version: "v3" }, logs)
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(hooks["experimental.chat.system.transform"]).toBeTypeOf("function")
    // Start-up work, including the warning about the bad option, happens after server() returned.
    expect(logs).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(JSON.stringify(logs)).toContain('option \\"version\\"')
  })

  it("creates memory.db and the memory folder in the background", async () => {
    const home = tempHome()
    await load({ home })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(fs.existsSync(path.join(home, "memory.db"))).toBe(true)
    expect(fs.statSync(path.join(home, "memories")).isDirectory()).toBe(true)
  })

  it("appends one memory block to the system prompt", async () => {
    const hooks = await load({ home: tempHome("v1\nprefers pnpm") })
    const system = await systemFor(hooks)
    expect(system).toHaveLength(2)
    expect(system[0]).toBe("You are OpenCode.")
    expect(system[1]).toContain("prefers pnpm")
  })

  it("keeps each instance's options and home to itself", async () => {
    const a = await load({ home: tempHome("v1\nfact A") })
    const b = await load({ home: tempHome("v1\nfact B"), use_memories: false })
    const c = await load({ home: tempHome("v1\nfact C") })
    expect((await systemFor(a))[1]).toContain("fact A")
    expect(await systemFor(b)).toHaveLength(1)
    expect((await systemFor(c))[1]).toContain("fact C")
  })

  it("adds the memory agents through the config hook, unless generation is off", async () => {
    const on = await load({ home: tempHome() })
    const config: { agent?: Record<string, unknown> } = {}
    await on.config?.(config as never)
    expect(Object.keys(config.agent ?? {}).sort()).toEqual(["memorize", "memorize-extract"])
    const off = await load({ home: tempHome(), generate_memories: false })
    const untouched: { agent?: Record<string, unknown> } = {}
    await off.config?.(untouched as never)
    expect(untouched.agent).toBeUndefined()
  })

  it("leaves the turn untouched when its hook fails", async () => {
    const hooks = await load({ home: tempHome("v1\nfact") })
    const output = { system: null as unknown as string[] }
    await expect(hooks["experimental.chat.system.transform"]?.({ sessionID: "ses_a", model: {} as never }, output)).resolves.toBeUndefined()
  })

  it("stops injecting once disposed", async () => {
    const hooks = await load({ home: tempHome("v1\nfact") })
    await hooks.dispose?.()
    expect(await systemFor(hooks)).toHaveLength(1)
  })
})
