// The bundled helper agents, as a real OpenCode sees them after the plugin's config hook.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FakeLlm } from "./support/fake-llm.js"
import { createSandbox, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"

interface AgentInfo {
  name: string
  mode?: string
  temperature?: number
  hidden?: boolean
  prompt?: string
  permission?: Array<{ permission: string; pattern: string; action: string }> | Record<string, unknown>
}

async function agentsOf(server: ServeHandle, directory: string): Promise<AgentInfo[]> {
  const response = await fetch(`${server.url}/agent?directory=${encodeURIComponent(directory)}`)
  expect(response.status).toBe(200)
  return (await response.json()) as AgentInfo[]
}

describe("helper agents in a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({
      llmUrl: llm.url,
      // A user's own `memorize` block may tune the helper but never widen or replace it.
      config: { agent: { memorize: { description: "the user's own agent", mode: "primary", temperature: 0.3, permission: { "*": "allow", bash: "allow" } } } },
    })
    server = await startServe(sandbox)
  })

  afterAll(async () => {
    await server?.stop()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("adds memorize-extract, deny-first, and keeps only the tuning of the user's memorize", async () => {
    const agents = await agentsOf(server, sandbox.projectDir)
    const extract = agents.find((agent) => agent.name === "memorize-extract")
    const memorize = agents.find((agent) => agent.name === "memorize")
    expect(extract, JSON.stringify(agents.map((a) => a.name))).toBeDefined()
    expect(extract?.mode).toBe("subagent")
    // Its own prompt, loaded from the package's templates, replaces OpenCode's coding-agent prompt.
    expect(extract?.prompt).toMatch(/^You are the memory extractor of opencode-codex-memory/)
    // OpenCode's rules are last-match-wins: after our catch-all deny, only the structured-output
    // tool (and OpenCode's own tool-output folder grant, which it appends to every agent) remain.
    const rules = extract?.permission as Array<{ permission: string; pattern: string; action: string }>
    const catchAll = rules.findLastIndex((rule) => rule.permission === "*")
    expect(rules[catchAll]?.action).toBe("deny")
    for (const rule of rules.slice(catchAll + 1)) {
      expect(rule.action).toBe("allow")
      expect(rule.permission === "StructuredOutput" || rule.pattern.includes("tool-output")).toBe(true)
    }
    expect(rules.slice(catchAll + 1).some((rule) => rule.permission === "StructuredOutput")).toBe(true)
    expect(memorize?.mode).toBe("subagent")
    expect(JSON.stringify(memorize)).not.toContain("the user's own agent")
    expect(memorize?.temperature).toBe(0.3)
    const memorizeRules = memorize?.permission as Array<{ permission: string; pattern: string; action: string }>
    expect(memorizeRules.findLast((rule) => rule.permission === "*")?.action).toBe("deny")
    expect(memorizeRules.findLast((rule) => rule.permission === "bash" || rule.permission === "*")?.action).toBe("deny")
    // The log says what was dropped (OpenCode escapes the quotes in it).
    await waitFor(() => server.stderr().replaceAll("\\", "").includes(`agent "memorize": your config's "description", "mode", "permission" ignored`), {
      timeoutMs: 10_000,
      message: `no log line about the ignored keys:\n${server.stderr().slice(-3000)}`,
    })
    // OpenCode 1.18.33 drops the service from its log lines, so the message itself starts with the name.
    const line = server.stderr().replaceAll("\\", "").split("\n").find((text) => text.includes(`agent "memorize": your config's`))
    expect(line).toMatch(/codex-memory: (v1\/)?[a-z-]+: agent "memorize"/)
    // Still a healthy server: the merged config was accepted.
    expect(server.stderr()).not.toMatch(/ConfigInvalidError|Invalid config/i)
  })
})
