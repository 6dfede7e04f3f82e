// What the model-facing tools ask the memory backend and what it answers: memory_read,
// memory_list and memory_search. Types only, so the backend class and the functions that do the
// work (read.ts, list.ts, search.ts) can share them without importing each other.

export interface ReadRequest {
  path: string
  /** 1-based, default 1. */
  line_offset?: number
  max_lines?: number
}

export interface ReadResult {
  path: string
  /** For an empty file: start_line 1, end_line 0. */
  start_line: number
  end_line: number
  total_lines: number
  content: string
  truncated: boolean
  /** When truncated: why, which lines were shown, and the line_offset to continue from. */
  note?: string
}

export interface ListRequest {
  path?: string
  /** Default and maximum 2000. */
  max_results?: number
  cursor?: string
}

export interface ListEntry {
  /** Relative to the memory root. */
  path: string
  type: "file" | "directory"
  size?: number
}

export interface ListResult {
  path: string
  entries: ListEntry[]
  next_cursor?: string
  total: number
}

/** The substring modes match lines (search-match.ts); "ranked" ranks documents by BM25 (ranked-search.ts). */
export type MatchMode = "any" | "all_on_same_line" | "all_within_lines" | "ranked"

export interface SearchRequest {
  queries: string[]
  /** Default "any"; see search-match.ts for the exact semantics of each mode. */
  match_mode?: MatchMode
  /** For all_within_lines, >= 1, required there. */
  line_count?: number
  /** File or folder scope. */
  path?: string
  cursor?: string
  /** Default 0, max 10. */
  context_lines?: number
  /** Default false. */
  case_sensitive?: boolean
  /** Default false: compare only letters and digits (Unicode-aware), lowercased unless case_sensitive. */
  normalized?: boolean
  /**
   * ISO dates/times; when either is set, only files whose name starts with a timestamp
   * YYYY-MM-DDTHH-MM-SS (rollout_summaries/, extensions/<name>/notes, extension resources) are kept.
   */
  since?: string
  until?: string
  /** Default and max 200. */
  max_results?: number
  /**
   * A project's name, the last part of it, or its key: only rollout summaries whose header names
   * that project are searched (and, in the CLI, records made in it).
   */
  project?: string
}

export interface SearchMatch {
  path: string
  /** 1-based. */
  line: number
  /** = line, except in all_within_lines, where it is the last line of the match. */
  end_line: number
  /** The matched line(s). */
  text: string
  /** The request's queries found on the matched line(s), in request order. */
  matched_queries: string[]
  context_before: string[]
  context_after: string[]
  /** Ranked mode: how well the document matches (higher is better). */
  score?: number
  /** Ranked mode: the match is in a record no consolidation has taken in yet, not in a file. */
  record?: { session_id: string; field: "raw_memory" | "rollout_summary" }
}

export interface SearchResult {
  matches: SearchMatch[]
  next_cursor?: string
  files_scanned: number
  /** Lines of this page (matched or context) shortened because they were too long; absent when none. */
  truncated_lines?: number
  /** Ranked mode: the words searched for, as the queries were understood. */
  terms?: string[]
}

export interface AddNoteRequest {
  title: string
  note: string
}
