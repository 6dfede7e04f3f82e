// What the plugin adds to every model request of every session, read from the scripted model's log
// on the real OpenCode: one `opencode run` with empty memory, one with a 40-token summary, one
// without the plugin. Counted in characters of the request as OpenCode sends it: the memory tools'
// definitions (name, description, JSON schema), the memory block in the system prompt, and the
// whole request's growth over the same run without the plugin (which also catches what the plugin
// makes OpenCode add elsewhere, such as helper agents offered through the task tool).
import { contentText, FakeLlm, type ChatRequest } from "../../test/e2e/support/fake-llm.js"
import { createSandbox, runOpencode, seedSummary, type Sandbox } from "../../test/e2e/support/opencode.js"
import type { BenchResult } from "./measure.js"

/** Tool definitions plus block with empty memory (issue 24: about 15,500 before). */
const EMPTY_MAX = 8_000
const CHECKPOINT_MAX = 1_500
/** About 40 tokens, the summary of a first day. */
const SMALL_SUMMARY = "v1\n- The user works on a TypeScript monorepo built with pnpm; CI runs on GitHub Actions.\n"

interface TurnShape {
  tools: Map<string, number>
  system: number
  total: number
}

export async function benchTurnCost(): Promise<BenchResult> {
  const llm = await FakeLlm.start()
  const sandboxes: Sandbox[] = []
  try {
    const measure = async (sandbox: Sandbox): Promise<TurnShape> => {
      sandboxes.push(sandbox)
      const before = llm.requests().length
      const result = await runOpencode(sandbox, "say hello")
      if (result.code !== 0) throw new Error(`opencode run failed (${result.code}): ${result.stderr.slice(-2000)}`)
      const request = llm.requests().slice(before).find((logged) => logged.kind === "agent")?.body
      if (!request) throw new Error("the scripted model saw no agent request")
      return shape(request)
    }
    const empty = await measure(await createSandbox({ llmUrl: llm.url }))
    const small = await createSandbox({ llmUrl: llm.url })
    await seedSummary(small, SMALL_SUMMARY)
    const withSummary = await measure(small)
    const without = await measure(await createSandbox({ llmUrl: llm.url, plugins: [] }))

    const memoryTools = [...empty.tools].filter(([name]) => name.startsWith("memory_"))
    const toolChars = memoryTools.reduce((sum, [, chars]) => sum + chars, 0)
    const emptyBlock = empty.system - without.system
    const block = withSummary.system - without.system
    const checkpoint = empty.tools.get("memory_checkpoint") ?? 0
    const otherTools = [...empty.tools].filter(([name]) => !name.startsWith("memory_"))
    const grownElsewhere = otherTools.reduce((sum, [name, chars]) => sum + chars - (without.tools.get(name) ?? chars), 0)
    return {
      name: "what the plugin adds to every request (real binary, scripted model, characters)",
      details: [
        `memory tools       ${memoryTools.map(([name, chars]) => `${name} ${chars}`).join(", ")}`,
        `memory block       ${emptyBlock} with empty memory, ${block} with a 40-token summary`,
        `other tools grown  ${grownElsewhere} (OpenCode's own tools, such as task)`,
        `whole request      +${empty.total - without.total} with empty memory, +${withSummary.total - without.total} with the summary`,
      ],
      checks: [
        { kind: "absolute", what: "memory tools plus memory block, empty memory", value: toolChars + emptyBlock, unit: "chars", digits: 0, max: EMPTY_MAX },
        { kind: "absolute", what: "memory_checkpoint's definition", value: checkpoint, unit: "chars", digits: 0, max: CHECKPOINT_MAX },
        { kind: "condition", what: "OpenCode's own tools are no larger with the plugin (helpers not offered through task)", holds: grownElsewhere <= 0 },
      ],
    }
  } finally {
    for (const sandbox of sandboxes) await sandbox.cleanup()
    await llm.close()
  }
}

function shape(request: ChatRequest): TurnShape {
  const tools = new Map<string, number>()
  for (const tool of request.tools ?? []) tools.set(tool.function?.name ?? "", JSON.stringify(tool).length)
  const system = (request.messages ?? []).filter((message) => message.role === "system").reduce((sum, message) => sum + contentText(message.content).length, 0)
  return { tools, system, total: JSON.stringify(request).length }
}
