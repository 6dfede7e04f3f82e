// What the plugin adds to every model request of every session, read from the scripted model's log
// on each real OpenCode line (1.18.33, and 2.1.2's `run --standalone`): one `opencode run` with
// empty memory, one with a 40-token summary, one without the plugin. Counted in characters of the request as OpenCode sends it: the memory tools'
// definitions (name, description, JSON schema), the memory block in the system prompt, and the
// whole request's growth over the same run without the plugin (which also catches what the plugin
// makes OpenCode add elsewhere, such as helper agents offered through the task tool).
import fs from "node:fs"
import path from "node:path"
import { contentText, FakeLlm, type ChatRequest } from "../../test/e2e/support/fake-llm.js"
import { createSandbox, runOpencode, seedSummary } from "../../test/e2e/support/opencode.js"
import { createSandbox2, runOpencode2 } from "../../test/e2e/support/opencode2.js"
import type { BenchResult, Check } from "./measure.js"

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
  const cleanups: Array<() => Promise<void>> = []
  const details: string[] = []
  const checks: Check[] = []
  try {
    const firstRequest = (before: number): ChatRequest => {
      const request = llm.requests().slice(before).find((logged) => logged.kind === "agent")?.body
      if (!request) throw new Error("the scripted model saw no agent request")
      return request
    }
    const lines: Array<{ name: string; measure: (summary: string | undefined, plugin: boolean) => Promise<TurnShape> }> = [
      {
        name: "OpenCode 1.18.33",
        async measure(summary, plugin) {
          const sandbox = await createSandbox({ llmUrl: llm.url, ...(plugin ? {} : { plugins: [] }) })
          cleanups.push(() => sandbox.cleanup())
          if (summary) await seedSummary(sandbox, summary)
          const before = llm.requests().length
          const result = await runOpencode(sandbox, "say hello")
          if (result.code !== 0) throw new Error(`opencode run failed (${result.code}): ${result.stderr.slice(-2000)}`)
          return shape(firstRequest(before))
        },
      },
      {
        name: "OpenCode 2.1.2",
        async measure(summary, plugin) {
          const sandbox = await createSandbox2({ llmUrl: llm.url, ...(plugin ? {} : { plugins: [] }) })
          cleanups.push(() => sandbox.cleanup())
          if (summary) {
            fs.mkdirSync(path.join(sandbox.memoryHome, "memories"), { recursive: true })
            fs.writeFileSync(path.join(sandbox.memoryHome, "memories", "memory_summary.md"), summary)
          }
          const before = llm.requests().length
          const result = await runOpencode2(sandbox, ["run", "--standalone", "say hello"])
          if (result.code !== 0) throw new Error(`opencode run failed (${result.code}): ${result.stderr.slice(-2000)}`)
          return shape(firstRequest(before))
        },
      },
    ]
    for (const line of lines) {
      const empty = await line.measure(undefined, true)
      const withSummary = await line.measure(SMALL_SUMMARY, true)
      const without = await line.measure(undefined, false)
      const memoryTools = [...empty.tools].filter(([name]) => name.startsWith("memory_"))
      const toolChars = memoryTools.reduce((sum, [, chars]) => sum + chars, 0)
      const emptyBlock = empty.system - without.system
      const block = withSummary.system - without.system
      const checkpoint = empty.tools.get("memory_checkpoint") ?? 0
      const otherTools = [...empty.tools].filter(([name]) => !name.startsWith("memory_"))
      const grownElsewhere = otherTools.reduce((sum, [name, chars]) => sum + chars - (without.tools.get(name) ?? chars), 0)
      details.push(
        `${line.name}:`,
        `  memory tools       ${memoryTools.map(([name, chars]) => `${name} ${chars}`).join(", ")}`,
        `  memory block       ${emptyBlock} with empty memory, ${block} with a 40-token summary`,
        `  other tools grown  ${grownElsewhere} (OpenCode's own tools, such as task or subagent)`,
        `  whole request      +${empty.total - without.total} with empty memory, +${withSummary.total - without.total} with the summary`,
      )
      checks.push(
        { kind: "absolute", what: `${line.name}: memory tools plus memory block, empty memory`, value: toolChars + emptyBlock, unit: "chars", digits: 0, max: EMPTY_MAX },
        { kind: "absolute", what: `${line.name}: memory_checkpoint's definition`, value: checkpoint, unit: "chars", digits: 0, max: CHECKPOINT_MAX },
        { kind: "condition", what: `${line.name}: OpenCode's own tools are no larger with the plugin (helpers not offered as subagents)`, holds: grownElsewhere <= 0 },
      )
    }
    return { name: "what the plugin adds to every request, on both host lines (real binaries, scripted model, characters)", details, checks }
  } finally {
    for (const cleanup of cleanups) await cleanup()
    await llm.close()
  }
}

function shape(request: ChatRequest): TurnShape {
  const tools = new Map<string, number>()
  for (const tool of request.tools ?? []) tools.set(tool.function?.name ?? "", JSON.stringify(tool).length)
  const system = (request.messages ?? []).filter((message) => message.role === "system").reduce((sum, message) => sum + contentText(message.content).length, 0)
  return { tools, system, total: JSON.stringify(request).length }
}
