import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { addMissingAgents, bundledAgents } from "../../src/v1/agents.js"

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

  it("are added when missing, and a user's agent of the same name wins", () => {
    const mine = { model: "me/mine", permission: { "*": "allow" } }
    const config: { agent?: Record<string, unknown> } = { agent: { memorize: mine } }
    expect(addMissingAgents(config, agents)).toEqual(["memorize-extract"])
    expect(config.agent?.memorize).toBe(mine)
    expect(config.agent?.["memorize-extract"]).toEqual(agents["memorize-extract"])
  })

  it("create the agent section when the config has none", () => {
    const config: { agent?: Record<string, unknown> } = {}
    expect(addMissingAgents(config, agents).sort()).toEqual(["memorize", "memorize-extract"])
  })
})
