// Consolidation reviews: each successful consolidation's redacted diff of the memory folder and
// what moved it (inputs added and removed, notes folded in), the last REVIEWS_KEPT of them, each
// diff bounded in size. `diff --last` and memory_inspect read them.
import type { SqlDatabase } from "./sqlite.js"

export const REVIEWS_KEPT = 10
/** Longest diff kept per review; the middle of a longer one is cut with a marker. */
export const REVIEW_DIFF_MAX_CHARS = 64_000

export interface ReviewSummary {
  /** Rollout summaries (inputs) the consolidation saw added or changed, and removed (forgotten). */
  inputsAdded: string[]
  inputsRemoved: string[]
  /** Notes and imported resources under extensions/ that were new or changed. */
  notes: string[]
  /** The consolidated files the consolidator changed (MEMORY.md, the summary, skills/). */
  changed: string[]
  /** Distinct sessions consumed. */
  sessions: number
}

export interface Review {
  id: number
  version: string
  finishedAt: number
  summary: ReviewSummary
  diff: string
}

export class ConsolidationReviews {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps one review (diff already redacted by the caller) and drops the oldest beyond REVIEWS_KEPT. */
  add(version: string, summary: ReviewSummary, diff: string): void {
    this.db.prepare("INSERT INTO consolidation_reviews (version, finished_at, summary, diff) VALUES ($version, $now, $summary, $diff)").run({
      version,
      now: this.now(),
      summary: JSON.stringify(summary),
      diff: boundDiff(diff),
    })
    this.db.prepare("DELETE FROM consolidation_reviews WHERE id NOT IN (SELECT id FROM consolidation_reviews ORDER BY id DESC LIMIT $keep)").run({ keep: REVIEWS_KEPT })
  }

  /**
   * Drops the reviews of `version` (all of them when not given): a forgotten session's text may be
   * in any earlier diff, as the lines that brought it in. Returns how many went.
   */
  clear(version?: string): number {
    return this.db.prepare(`DELETE FROM consolidation_reviews ${version ? "WHERE version = $version" : ""}`).run(version ? { version } : {}).changes
  }

  /** Newest first; `version` narrows to one memory version. */
  list(limit: number = REVIEWS_KEPT, version?: string): Review[] {
    const rows = this.db
      .prepare(`SELECT * FROM consolidation_reviews ${version ? "WHERE version = $version" : ""} ORDER BY id DESC LIMIT $limit`)
      .all<{ id: number; version: string; finished_at: number; summary: string; diff: string }>({ limit: Math.max(0, Math.floor(limit)), ...(version ? { version } : {}) })
    return rows.map((row) => ({ id: Number(row.id), version: row.version, finishedAt: Number(row.finished_at), summary: parseSummary(row.summary), diff: row.diff }))
  }
}

function boundDiff(diff: string): string {
  if (diff.length <= REVIEW_DIFF_MAX_CHARS) return diff
  const half = Math.floor((REVIEW_DIFF_MAX_CHARS - 64) / 2)
  return `${diff.slice(0, half)}\n[... ${diff.length - 2 * half} characters of the diff cut ...]\n${diff.slice(diff.length - half)}`
}

function parseSummary(text: string): ReviewSummary {
  const empty: ReviewSummary = { inputsAdded: [], inputsRemoved: [], notes: [], changed: [], sessions: 0 }
  try {
    const value = JSON.parse(text) as Partial<ReviewSummary>
    return { ...empty, ...value }
  } catch {
    return empty
  }
}
