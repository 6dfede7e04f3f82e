// OpenCode 1.x hooks, each a thin translation into the memory core, each inside the guard.
import type { Hooks } from "@opencode-ai/plugin"
import type { Guard } from "../guard.js"
import type { Memory } from "../memory.js"
import { addMissingAgents, bundledAgents } from "./agents.js"

export function createV1Hooks(memory: Memory, guard: Guard): Hooks {
  return {
    config: guard("config", async (config) => {
      if (!memory.options.generate_memories) return
      const added = addMissingAgents(config, bundledAgents(memory.packageDir, memory.paths.memoryRoot))
      if (added.length) memory.diagnostics.report("debug", "config", `added agents: ${added.join(", ")}`)
    }),

    "experimental.chat.system.transform": guard("experimental.chat.system.transform", (input, output) => {
      const block = memory.systemBlock({ sessionID: input.sessionID, system: output.system })
      // One appended string: OpenCode keeps it as its own system message, so it caches separately.
      if (block) output.system.push(block)
    }),

    dispose: guard("dispose", () => memory.dispose()),
  }
}
