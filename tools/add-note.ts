import { TOOLS } from "../src/constants.js"
import { z } from "../src/util/zod.js"
import type { MemoryToolPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export function addNoteTool(memory: MemoryToolPorts, description: string) {
  return defineTool({
    name: "memory_add_note",
    description,
    args: {
      title: z.string().min(1).max(200).describe("A few words"),
      note: z.string().min(1).max(TOOLS.NOTE_MAX_CHARS),
    },
    async execute(args, call) {
      const written = memory.addNote({ title: args.title, note: args.note, sessionId: call.sessionID })
      const redacted = Object.values(written.redactions).reduce((a, b) => a + b, 0)
      const notice = redacted ? ` (${redacted} secret${redacted === 1 ? "" : "s"} redacted)` : ""
      return {
        title: written.path,
        output: `Saved the note as ${written.path}${notice}. It will be folded into memory at the next consolidation.`,
        metadata: { path: written.path, redactions: written.redactions },
      }
    },
  })
}
