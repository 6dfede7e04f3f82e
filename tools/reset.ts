import { z } from "../src/util/zod.js"
import type { MemoryToolPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export const RESET_PERMISSION = "memory_reset"

export function resetTool(memory: MemoryToolPorts, description: string) {
  return defineTool({
    name: "memory_reset",
    description,
    args: {
      confirm: z.boolean().describe("true: the user asked to erase all memory"),
    },
    async execute(args, call) {
      if (args.confirm !== true) {
        return refused("confirm must be true. Reset erases all memory; call it only when the user explicitly asks for that.")
      }
      try {
        await call.ask({
          permission: RESET_PERMISSION,
          patterns: [...memory.memoryRoots],
          always: [],
          metadata: { action: "erase all long-term memory", folders: [...memory.memoryRoots] },
        })
      } catch {
        return refused("the user did not approve erasing memory. Nothing was changed.")
      }
      const report = await memory.reset()
      if (report.type === "refused") return refused(report.reason)
      return {
        title: "memory erased",
        output: `Erased all memory: ${report.outputs} learned record(s), ${report.jobs} job(s), ${report.checkpoints} session checkpoint(s) and ${report.files} item(s) in the memory folder. Only what is said from now on will be learned. Kept: session modes, version stamps, forget times, the pause, the spend ledger and the redaction counts.`,
        metadata: { ...report },
      }
    },
  })
}

function refused(reason: string) {
  return { title: "memory_reset: refused", output: `Refused: ${reason}`, metadata: { error: "refused" } }
}
