import { MemoryError } from "../src/backend/errors.js"
import { CHECKPOINT_UPDATE_ARGS } from "../src/checkpoint/update.js"
import type { CheckpointPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export function checkpointTool(memory: CheckpointPorts, description: string) {
  return defineTool({
    name: "memory_checkpoint",
    description,
    args: CHECKPOINT_UPDATE_ARGS,
    async execute(args, call) {
      const outcome = memory.applyCheckpoint(call.sessionID, args)
      // A refusal is the model's to fix, and it changed nothing.
      if (!outcome.ok) throw new MemoryError("invalid_argument", `${outcome.reason} Nothing was changed.`)
      return {
        title: `checkpoint: ${outcome.applied.join(", ")}`,
        output: `Recorded in this session's checkpoint: ${outcome.applied.join("; ")}.`,
        metadata: { applied: outcome.applied },
      }
    },
  })
}
