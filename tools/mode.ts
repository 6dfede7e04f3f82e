import { z } from "../src/util/zod.js"
import type { MemoryToolPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export function modeTool(memory: MemoryToolPorts, description: string) {
  return defineTool({
    name: "memory_mode",
    description,
    args: {
      mode: z.enum(["enabled", "disabled", "polluted"]),
      session_id: z.string().min(1).optional(),
    },
    async execute(args, call) {
      const session = args.session_id ?? call.sessionID
      // The calling session exists; any other id is checked against memory and OpenCode.
      const { previous, forgotten } = await memory.setMode(session, args.mode, { checked: session === call.sessionID })
      const change = previous === args.mode ? `stays ${args.mode}` : `changed from ${previous} to ${args.mode}`
      const sentences = [`Memory mode of session ${session} ${change}.`]
      if (args.mode !== "enabled") {
        sentences.push(forgotten?.versions.length ? "What memory had learned from it is forgotten." : "Memory had learned nothing from it.")
        if (forgotten?.queued.length) sentences.push("The next consolidation removes it from the memory files within minutes.")
        if (args.mode === "disabled") sentences.push("Nothing of it is kept from now on, its checkpoint included.")
      }
      return { title: `${session}: ${args.mode}`, output: sentences.join(" "), metadata: { session_id: session, previous, mode: args.mode } }
    },
  })
}
