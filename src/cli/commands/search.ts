// search: memory_search's engine and modes over the memory folder, from the command line.
import { MemoryError } from "../../backend/errors.js"
import { searchRecords, type PendingMatch } from "../../backend/search-records.js"
import type { MatchMode } from "../../backend/requests.js"
import { intFlag } from "../args.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"
import { versionFlag } from "./records.js"

const MODES: readonly MatchMode[] = ["any", "all_on_same_line", "all_within_lines", "ranked"]

export const searchCommand: Command = {
  name: "search",
  usage: "search QUERY [QUERY...] [--mode any|all_on_same_line|all_within_lines|ranked] [--lines N] [--path P] [--project NAME] [--context N] [--case-sensitive] [--normalized] [--since ISO] [--until ISO] [--max N] [--cursor C] [--version v1|v2]",
  summary: "memory_search over the memory folder (same engine and modes, ranked included), and over records not consolidated yet",
  flags: {
    mode: { type: "string" },
    lines: { type: "string" },
    path: { type: "string" },
    project: { type: "string" },
    context: { type: "string" },
    "case-sensitive": { type: "boolean" },
    normalized: { type: "boolean" },
    since: { type: "string" },
    until: { type: "string" },
    max: { type: "string" },
    cursor: { type: "string" },
    version: { type: "string" },
  },
  positionals: { min: 1, max: 64 },
  async run({ cli, args }) {
    const v = args.values
    const mode = v.mode === undefined ? undefined : (MODES.find((m) => m === v.mode) ?? fail(`--mode must be one of ${MODES.join(", ")}`))
    return withHome(cli, v.home as string | undefined, async (home) => {
      const pipeline = home.memory.pipeline(versionFlag(v.version, home.memory.options.version))
      const backend = pipeline.backend
      const request = {
        queries: args.positionals,
        ...(mode ? { match_mode: mode } : {}),
        ...(v.lines !== undefined ? { line_count: intFlag(v.lines, "lines", 1, 1, 10_000) } : {}),
        ...(typeof v.path === "string" ? { path: v.path } : {}),
        ...(typeof v.project === "string" ? { project: v.project } : {}),
        ...(v.context !== undefined ? { context_lines: intFlag(v.context, "context", 0, 0, 10) } : {}),
        ...(v["case-sensitive"] ? { case_sensitive: true } : {}),
        ...(v.normalized ? { normalized: true } : {}),
        ...(typeof v.since === "string" ? { since: v.since } : {}),
        ...(typeof v.until === "string" ? { until: v.until } : {}),
        ...(v.max !== undefined ? { max_results: intFlag(v.max, "max", 20, 1, 200) } : {}),
        ...(typeof v.cursor === "string" ? { cursor: v.cursor } : {}),
      }
      let result
      let pending: PendingMatch[] = []
      try {
        result = await backend.search(request)
        // What was extracted but not consolidated yet is not in the folder: searched beside it, on
        // the first page of a search of the whole folder.
        // Ranked answers hold the records already, scored with the files.
        if (request.path === undefined && request.cursor === undefined && mode !== "ranked") {
          const records = (pipeline.store()?.unconsolidatedRecords() ?? []).map((row) => ({
            sessionId: row.session_id,
            rawMemory: row.raw_memory,
            rolloutSummary: row.rollout_summary,
            project: { key: row.project_key, name: row.project_name },
          }))
          pending = searchRecords(records, request)
        }
      } catch (error) {
        // The tool's own refusals (a bad path, an empty query) are the caller's to fix.
        if (error instanceof MemoryError && error.kind !== "io") throw new CliError("usage", error.message)
        throw error
      }
      const found = result.matches.map((m) => {
        const lines = `${m.line}${m.end_line > m.line ? `-${m.end_line}` : ""}`
        if (m.score === undefined) return `${m.path}:${lines}: ${m.text}`
        const where = m.record ? `record ${m.record.session_id} (not consolidated yet) ${m.record.field}:${lines}` : `${m.path}:${lines}`
        return `${where} (score ${m.score})\n${m.text.replace(/^/gm, "  ")}`
      })
      const waiting = pending.map((m) => `record ${m.session_id} (not consolidated yet) ${m.field}:${m.line}${m.end_line > m.line ? `-${m.end_line}` : ""}: ${m.text}`)
      const text = [...found, ...waiting].join("\n") || "no matches"
      return { json: { ...result, unconsolidated: pending }, text: result.next_cursor ? `${text}\n(more: --cursor ${result.next_cursor})` : text }
    })
  },
}

function fail(message: string): never {
  throw new CliError("usage", message)
}
