// memory_search's matching over extracted records no consolidation has taken in yet (the CLI's
// `search` shows them beside the folder's matches, marked as such). Pure: same plan, same modes,
// the same line rules and the same redaction as the folder search, over each record's two texts.
import { redactLines } from "../redact/redact.js"
import type { SearchRequest } from "./requests.js"
import { planSearch } from "./search.js"
import { transformText } from "./search-cache.js"
import { lineStarts, lineText } from "./search-lines.js"
import { findSpans } from "./search-match.js"
import { projectMatches } from "./project-filter.js"

export interface PendingRecord {
  sessionId: string
  rawMemory: string
  rolloutSummary: string
  /** The project it was made in, for the request's project filter. */
  project?: { key: string | null; name: string | null }
}

export interface PendingMatch {
  session_id: string
  field: "rollout_summary" | "raw_memory"
  /** 1-based lines of that field's text. */
  line: number
  end_line: number
  text: string
  matched_queries: string[]
}

/** Matches in the records, in record order and then line order, at most the request's max_results. */
export function searchRecords(records: readonly PendingRecord[], request: SearchRequest): PendingMatch[] {
  const plan = planSearch(request)
  const matches: PendingMatch[] = []
  for (const record of records) {
    if (plan.project && !projectMatches(plan.project, record.project ?? {})) continue
    for (const field of ["rollout_summary", "raw_memory"] as const) {
      // Records are redacted when they are stored; redacted again here, as the folder is, so the
      // rule does not depend on how a record came to be (search.ts's header).
      const original = redactLines(field === "raw_memory" ? record.rawMemory : record.rolloutSummary)
      const variant = transformText(original, plan.variant)
      const originalStarts = lineStarts(original)
      for (const span of findSpans(variant, lineStarts(variant), plan.needles, plan.mode, plan.lineCount)) {
        const shown: string[] = []
        for (let line = span.first; line <= span.last; line++) shown.push(lineText(original, originalStarts, line))
        matches.push({
          session_id: record.sessionId,
          field,
          line: span.first + 1,
          end_line: span.last + 1,
          text: shown.join("\n"),
          matched_queries: plan.queries.filter((_, index) => (span.mask & (1 << index)) !== 0),
        })
        if (matches.length >= plan.maxResults) return matches
      }
    }
  }
  return matches
}
