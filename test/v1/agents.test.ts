import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { bundledAgents, installHelperAgents } from "../../src/v1/agents.js"

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
