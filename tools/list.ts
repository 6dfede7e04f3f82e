import { LIST_MAX_RESULTS } from "../src/backend/list.js"
import type { LocalMemoryBackend } from "../src/backend/local-backend.js"
import { z } from "../src/util/zod.js"
import { defineTool } from "./spec.js"

export function listTool(backendFor: (sessionId: string) => LocalMemoryBackend, description: string) {
  return defineTool({
    name: "memory_list",
    description,
    args: {
      path: z.string().optional().describe("Folder; empty for the top"),
      max_results: z.number().int().min(1).max(LIST_MAX_RESULTS).optional(),
      cursor: z.string().optional(),
    },
    async execute(args, call) {
      const backend = backendFor(call.sessionID)
      const result = await backend.list(args)
      const lines = result.entries.map((entry) => (entry.type === "directory" ? `${entry.path}/` : `${entry.path}  (${entry.size ?? 0} bytes)`))
      const where = result.path || "."
      const more = result.next_cursor ? `\n(more entries: call again with cursor "${result.next_cursor}")` : ""
      return {
        title: where,
        output: `${where}: ${result.total} entr${result.total === 1 ? "y" : "ies"}\n${lines.join("\n")}${more}`,
        metadata: { path: result.path, count: result.entries.length, total: result.total, next_cursor: result.next_cursor },
      }
    },
  })
}
