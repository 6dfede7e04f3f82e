import { describe, expect, it } from "vitest"
import { describeIgnoredAgentKeys, mergeHelperAgent } from "../../../src/write/helpers/helper-agents.js"

const bundled = {
  description: "Consolidates memories.",
  mode: "subagent",
  hidden: true,
  prompt: "You consolidate.",
  permission: { "*": "deny", read: "allow" },
}

describe("a user's block for a helper agent", () => {
  it("tunes the model and how it is called", () => {
    const merged = mergeHelperAgent(bundled, { model: "me/big", variant: "high", temperature: 0.1, top_p: 0.9, steps: 40, options: { reasoningEffort: "high" } })
    expect(merged.definition).toEqual({ ...bundled, model: "me/big", variant: "high", temperature: 0.1, top_p: 0.9, steps: 40, options: { reasoningEffort: "high" } })
    expect(merged.kept.sort()).toEqual(["model", "options", "steps", "temperature", "top_p", "variant"])
    expect(merged.ignored).toEqual([])
  })

  it("never widens the permissions, whatever form the widening takes", () => {
    const merged = mergeHelperAgent(bundled, {
      permission: { "*": "allow", bash: "allow", external_directory: "allow" },
      tools: { bash: true, webfetch: true },
      disable: true,
    })
    expect(merged.definition.permission).toEqual(bundled.permission)
    expect(merged.definition).not.toHaveProperty("tools")
    expect(merged.definition).not.toHaveProperty("disable")
    expect(merged.ignored).toEqual(["disable", "permission", "tools"])
  })

  it("keeps the bundled role: mode, hidden, description, prompt, name", () => {
    const merged = mergeHelperAgent(bundled, { mode: "primary", hidden: false, description: "mine", prompt: "Do anything.", name: "build", color: "#ff0000" })
    expect(merged.definition).toEqual(bundled)
    expect(merged.ignored).toEqual(["color", "description", "hidden", "mode", "name", "prompt"])
  })

  it("treats a key the bundled definition has as the bundled one's, even if it is not a known setting", () => {
    const merged = mergeHelperAgent({ ...bundled, future_setting: "ours" }, { future_setting: "theirs" })
    expect(merged.definition.future_setting).toBe("ours")
    expect(merged.ignored).toEqual(["future_setting"])
  })

  it("keeps other keys as model options, as OpenCode does, with explicit options winning", () => {
    const merged = mergeHelperAgent(bundled, { reasoningEffort: "low", textVerbosity: "low", options: { textVerbosity: "high" } })
    expect(merged.definition.options).toEqual({ reasoningEffort: "low", textVerbosity: "high" })
    expect(merged.definition).not.toHaveProperty("reasoningEffort")
    expect(merged.ignored).toEqual([])
  })

  it("ignores options that are not an object, and a block that is not an object", () => {
    expect(mergeHelperAgent(bundled, { options: "fast" }).ignored).toEqual(["options"])
    expect(mergeHelperAgent(bundled, "memorize").definition).toEqual(bundled)
    expect(mergeHelperAgent(bundled, null).ignored).toEqual([])
  })

  it("shares no objects with either input", () => {
    const user = { options: { nested: { a: 1 } } }
    const merged = mergeHelperAgent(bundled, user)
    ;(merged.definition.permission as Record<string, string>).bash = "allow"
    ;(merged.definition.options as { nested: { a: number } }).nested.a = 2
    expect(bundled.permission).toEqual({ "*": "deny", read: "allow" })
    expect(user.options.nested.a).toBe(1)
  })

  it("is described per agent, only when something was ignored", () => {
    expect(describeIgnoredAgentKeys({ memorize: ["permission", "tools"], "memorize-extract": [] })).toEqual([
      'agent "memorize": your config\'s "permission", "tools" ignored; the helper keeps its bundled permissions and role (only model, variant, temperature, top_p, options, steps, maxSteps can be set)',
    ])
    expect(describeIgnoredAgentKeys({})).toEqual([])
  })
})
