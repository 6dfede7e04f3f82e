import { z } from "../src/util/zod.js"
import type { MemoryToolPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export function modeTool(memory: MemoryToolPorts, description: string) {
  return defineTool({
    name: "memory_mode",
    description,
    args: {
      mode: z.enum(["enabled", "disabled", "polluted"]).describe("enabled: learn from the session; disabled or polluted: keep it out of memory"),
      session_id: z.string().min(1).optional().describe("Session to change (default: this one)"),
    },
    async execute(args, call) {
      const session = args.session_id ?? call.sessionID
      const { previous } = memory.setMode(session, args.mode)
      const change = previous === args.mode ? `stays ${args.mode}` : `changed from ${previous} to ${args.mode}`
      return { title: `${session}: ${args.mode}`, output: `Memory mode of session ${session} ${change}.`, metadata: { session_id: session, previous, mode: args.mode } }
    },
  })
}
