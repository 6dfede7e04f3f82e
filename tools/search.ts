import { SEARCH_MAX_CONTEXT_LINES, SEARCH_MAX_RESULTS } from "../src/backend/search.js"
import type { LocalMemoryBackend } from "../src/backend/local-backend.js"
import type { SearchMatch } from "../src/backend/requests.js"
import { z } from "../src/util/zod.js"
import { defineTool } from "./spec.js"

export function searchTool(backendFor: (sessionId: string) => LocalMemoryBackend, description: string) {
  return defineTool({
    name: "memory_search",
    description,
    args: {
      queries: z.array(z.string()).min(1).describe("Strings to look for (substrings, not regular expressions)"),
      match_mode: z.enum(["any", "all_on_same_line", "all_within_lines"]).optional().describe("How queries combine (default any)"),
      line_count: z.number().int().min(1).optional().describe("Window size in lines, for all_within_lines"),
      path: z.string().optional().describe("File or folder to search, relative to the memory folder"),
      cursor: z.string().optional().describe("next_cursor from a previous call"),
      context_lines: z.number().int().min(0).max(SEARCH_MAX_CONTEXT_LINES).optional().describe("Lines of context around each match (0-10)"),
      case_sensitive: z.boolean().optional().describe("Match case exactly (default false)"),
      normalized: z.boolean().optional().describe("Compare letters and digits only (default false)"),
      since: z.string().optional().describe("ISO date: only time-stamped files from this time on"),
      until: z.string().optional().describe("ISO date: only time-stamped files up to this time"),
      max_results: z.number().int().min(1).max(SEARCH_MAX_RESULTS).optional().describe("Most matches to return (up to 200)"),
    },
    async execute(args, call) {
      const backend = backendFor(call.sessionID)
      const result = await backend.search(args)
      const blocks = result.matches.map(formatMatch)
      const summary = `${result.matches.length} match${result.matches.length === 1 ? "" : "es"} in ${result.files_scanned} file${result.files_scanned === 1 ? "" : "s"} searched`
      const more = result.next_cursor ? `\n(more matches: call again with cursor "${result.next_cursor}")` : ""
      return {
        title: args.queries.join(", "),
        output: [summary, ...blocks].join("\n\n") + more,
        metadata: { matches: result.matches.length, files_scanned: result.files_scanned, next_cursor: result.next_cursor },
      }
    },
  })
}

function formatMatch(match: SearchMatch): string {
  const range = match.end_line > match.line ? `${match.line}-${match.end_line}` : `${match.line}`
  const lines = [
    `${match.path}:${range}  [${match.matched_queries.join(", ")}]`,
    ...match.context_before.map((text, i) => `${match.line - match.context_before.length + i}- ${text}`),
    ...match.text.split("\n").map((text, i) => `${match.line + i}: ${text}`),
    ...match.context_after.map((text, i) => `${match.end_line + 1 + i}- ${text}`),
  ]
  return lines.join("\n")
}
