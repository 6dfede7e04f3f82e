import type { LocalMemoryBackend } from "../src/backend/local-backend.js"
import { z } from "../src/util/zod.js"
import { numberLines } from "./reply.js"
import { defineTool } from "./spec.js"

export function readTool(backendFor: (sessionId: string) => LocalMemoryBackend, description: string) {
  return defineTool({
    name: "memory_read",
    description,
    args: {
      path: z.string().describe("Relative to the memory folder"),
      line_offset: z.number().int().min(1).optional().describe("1-based"),
      max_lines: z.number().int().min(1).optional(),
    },
    async execute(args, call) {
      const backend = backendFor(call.sessionID)
      const result = await backend.read(args)
      const lines = result.content === "" ? [] : result.content.split("\n")
      const header = `${result.path} (lines ${result.start_line}-${result.end_line} of ${result.total_lines})`
      const body = numberLines(lines, result.start_line)
      return {
        title: result.path,
        output: [header, body, result.note ? `\n${result.note}` : ""].filter(Boolean).join("\n"),
        metadata: { path: result.path, start_line: result.start_line, end_line: result.end_line, total_lines: result.total_lines, truncated: result.truncated },
      }
    },
  })
}
