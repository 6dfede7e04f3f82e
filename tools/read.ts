import type { LocalMemoryBackend } from "../src/backend/local-backend.js"
import { z } from "../src/util/zod.js"
import { numberLines } from "./reply.js"
import { defineTool } from "./spec.js"

export function readTool(backendFor: (sessionId: string) => LocalMemoryBackend, description: string) {
  return defineTool({
    name: "memory_read",
    description,
    args: {
      path: z.string().describe("File path relative to the memory folder, e.g. MEMORY.md"),
      line_offset: z.number().int().min(1).optional().describe("First line to read, 1-based (default 1)"),
      max_lines: z.number().int().min(1).optional().describe("Most lines to return (default: the whole file, up to 256 KiB)"),
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
