import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { installHelperAgents } from "../../src/v1/agents.js"
import { bundledAgents } from "../../src/write/helpers/bundled-agents.js"
import { Memory } from "../../src/memory.js"
import { FakeHost } from "../fakes/host.js"
import { expectGolden } from "../golden/golden.js"

const packageDir = fileURLToPath(new URL("../..", import.meta.url))

describe("bundled agents", () => {
  const agents = bundledAgents(packageDir, '/data/mem "x"')

  it("are deny-first, with the consolidator confined to the memory root", () => {
    const memorize = agents.memorize as { permission: Record<string, unknown>; mode: string }
    expect(Object.keys(memorize.permission)[0]).toBe("*")
    expect(memorize.permission["*"]).toBe("deny")
    expect(memorize.permission.external_directory).toEqual({ "*": "deny", '/data/mem "x"/*': "allow" })
    for (const tool of ["bash", "webfetch", "websearch", "task"]) expect(memorize.permission[tool]).toBeUndefined()
    expect(memorize.mode).toBe("subagent")
  })

  it("leave the extractor nothing but its structured-output tool", () => {
    const extract = agents["memorize-extract"] as { permission: Record<string, unknown> }
    expect(extract.permission).toEqual({ "*": "deny", StructuredOutput: "allow" })
  })

  it("carry prompts of their own, so OpenCode's coding-agent prompt is not sent to them", () => {
    const prompt = (name: string) => (agents[name] as { prompt?: unknown }).prompt
    expectGolden("agent.memorize.md", `${prompt("memorize") as string}\n`)
    expectGolden("agent.memorize-extract.md", `${prompt("memorize-extract") as string}\n`)
    for (const name of ["memorize", "memorize-extract"]) {
      expect(prompt(name)).not.toMatch(/\{file:|\{\{/)
      expect(prompt(name)).toMatch(/data, (not|never)/)
    }
  })

  it("drop their prompts when asked to, leaving OpenCode's default in place", () => {
    const bare = bundledAgents(packageDir, "/data/mem", { prompts: false })
    for (const agent of Object.values(bare)) expect(agent).not.toHaveProperty("prompt")
    expect((bare.memorize as { permission: unknown }).permission).toEqual((bundledAgents(packageDir, "/data/mem").memorize as { permission: unknown }).permission)
  })

  it("load a {file:./...} prompt relative to the package, and keep a literal prompt as it is", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-agents-"))
    fs.mkdirSync(path.join(dir, "prompts"))
    fs.writeFileSync(path.join(dir, "prompts", "a.md"), "Work in {{ memory_root }}.\n\n")
    fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify({ agent: { a: { prompt: "{file:./prompts/a.md}" }, b: { prompt: "Just this." } } }))
    const loaded = bundledAgents(dir, "/data/mem")
    expect(loaded.a?.prompt).toBe("Work in /data/mem.")
    expect(loaded.b?.prompt).toBe("Just this.")
  })

  it("are added when missing, and a user's block of the same name only tunes them", () => {
    const mine = { model: "me/mine", temperature: 0.2, permission: { "*": "allow", bash: "allow" }, tools: { bash: true }, mode: "primary" }
    const config: { agent?: Record<string, unknown> } = { agent: { memorize: mine } }
    const installed = installHelperAgents(config, agents)
    expect(installed.added).toEqual(["memorize-extract"])
    expect(installed.ignored).toEqual({ memorize: ["mode", "permission", "tools"] })
    const memorize = config.agent?.memorize as Record<string, unknown>
    expect(memorize.model).toBe("me/mine")
    expect(memorize.temperature).toBe(0.2)
    expect(memorize.permission).toEqual(agents.memorize!.permission)
    expect(memorize.mode).toBe("subagent")
    expect(memorize.tools).toBeUndefined()
    expect(config.agent?.["memorize-extract"]).toEqual(agents["memorize-extract"])
  })

  it("leave the user's other agents alone and share no objects with the bundled definitions", () => {
    const other = { permission: { "*": "allow" } }
    const config: { agent?: Record<string, unknown> } = { agent: { build: other } }
    installHelperAgents(config, agents)
    expect(config.agent?.build).toBe(other)
    ;(config.agent?.memorize as { permission: Record<string, unknown> }).permission.bash = "allow"
    expect((agents.memorize as { permission: Record<string, unknown> }).permission.bash).toBeUndefined()
  })

  it("create the agent section when the config has none", () => {
    const config: { agent?: Record<string, unknown> } = {}
    expect(installHelperAgents(config, agents).added.sort()).toEqual(["memorize", "memorize-extract"])
  })
})

describe("the test switch for OpenCode's default helper prompt", () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-agents-home-"))
  const memory = (env: Record<string, string>) => new Memory({ home }, { host: new FakeHost(), env, homedir: home })

  it("is honoured only under a test root", () => {
    expect(memory({}).helperPrompts).toBe(true)
    expect(memory({ OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT: "1" }).helperPrompts).toBe(true)
    expect(memory({ OPENCODE_CODEX_MEMORY_TEST_ROOT: home, OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT: "1" }).helperPrompts).toBe(false)
  })
})
