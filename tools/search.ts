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
      queries: z.array(z.string()).min(1).describe("Substrings to find"),
      match_mode: z.enum(["any", "all_on_same_line", "all_within_lines", "ranked"]).optional(),
      line_count: z.number().int().min(1).optional(),
      path: z.string().optional().describe("File or folder, e.g. MEMORY.md"),
      cursor: z.string().optional(),
      context_lines: z.number().int().min(0).max(SEARCH_MAX_CONTEXT_LINES).optional(),
      case_sensitive: z.boolean().optional(),
      normalized: z.boolean().optional(),
      since: z.string().optional().describe("ISO date"),
      until: z.string().optional().describe("ISO date"),
      project: z.string().optional(),
      max_results: z.number().int().min(1).max(SEARCH_MAX_RESULTS).optional(),
    },
    async execute(args, call) {
      const backend = backendFor(call.sessionID)
      const result = await backend.search(args)
      const blocks = result.matches.map(formatMatch)
      const terms = result.terms
      const summary = terms
        ? `${result.matches.length} entr${result.matches.length === 1 ? "y" : "ies"}, best first, for: ${terms.join(" ")}`
        : `${result.matches.length} match${result.matches.length === 1 ? "" : "es"} in ${result.files_scanned} file${result.files_scanned === 1 ? "" : "s"} searched`
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
  if (match.score !== undefined) {
    // Ranked: the whole entry, numbered; a record is not a file memory_read can open.
    const where = match.record ? `record of ${match.record.session_id} (not consolidated yet), ${match.record.field} lines ${range}` : `${match.path}:${range}`
    return [`${where}  [score ${match.score}]`, ...match.text.split("\n").map((text, i) => `${match.line + i}: ${text}`)].join("\n")
  }
  const lines = [
    `${match.path}:${range}  [${match.matched_queries.join(", ")}]`,
    ...match.context_before.map((text, i) => `${match.line - match.context_before.length + i}- ${text}`),
    ...match.text.split("\n").map((text, i) => `${match.line + i}: ${text}`),
    ...match.context_after.map((text, i) => `${match.end_line + 1 + i}- ${text}`),
  ]
  return lines.join("\n")
}
