// The config hook with a user's config that defines the helper agents itself.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { createGuard } from "../../src/guard.js"
import { Memory } from "../../src/memory.js"
import { createV1Hooks } from "../../src/v1/hooks.js"
import { FakeHost } from "../fakes/host.js"

const memories: Memory[] = []
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
})

function setup() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-config-"))
  const host = new FakeHost()
  const memory = new Memory({ home }, { host, env: {}, homedir: home })
  memories.push(memory)
  const hooks = createV1Hooks(memory, createGuard({ diagnostics: memory.diagnostics, faults: memory.faults }))
  return { memory, host, config: hooks.config! as (config: Record<string, unknown>) => Promise<void> }
}

describe("the config hook", () => {
  it("keeps the bundled sandbox over a user's widening block, keeps the tuning, and says what it ignored", async () => {
    const { memory, host, config } = setup()
    const cfg: { agent: Record<string, Record<string, unknown>> } = {
      agent: { memorize: { model: "acme/big", temperature: 0.3, permission: { "*": "allow", bash: "allow", external_directory: "allow" } } },
    }
    await config(cfg)
    const memorize = cfg.agent.memorize!
    expect(memorize.model).toBe("acme/big")
    expect(memorize.temperature).toBe(0.3)
    expect((memorize.permission as Record<string, unknown>)["*"]).toBe("deny")
    expect((memorize.permission as Record<string, unknown>).bash).toBeUndefined()
    expect((memorize.permission as Record<string, unknown>).external_directory).toEqual({ "*": "deny", [`${memory.paths.memoryRoot}/*`]: "allow" })
    expect(host.logs.filter((log) => log.level === "warn").map((log) => log.message)).toEqual([expect.stringContaining('config: agent "memorize": your config\'s "permission" ignored')])
    const report = memory.controls.inspect()
    expect(report.text).toContain('## Helper agents\n- agent "memorize": your config\'s "permission" ignored')
    expect(report.data).toMatchObject({ ignoredAgentKeys: { memorize: ["permission"] } })
  })

  it("reports nothing when the user's block only tunes the helper", async () => {
    const { memory, host, config } = setup()
    await config({ agent: { "memorize-extract": { model: "acme/small", options: { reasoningEffort: "low" } } } })
    expect(host.logs.filter((log) => log.level === "warn")).toEqual([])
    expect(memory.controls.inspect().text).not.toContain("## Helper agents")
  })
})
