// What one successful consolidation changed, for `diff --last` and memory_inspect: the inputs it
// was given (rollout summaries added or removed, notes and imports under extensions/), what the
// consolidator itself changed, and the whole redacted diff of the folder against the previous
// baseline. Pure.
import type { ReviewSummary } from "../../store/reviews.js"

type Change = { status: string; path: string }

const INPUTS = /^(?:rollout_summaries\/|raw_memories\.md$)/
const EXTENSIONS = /^extensions\//

/**
 * `given` is the workspace status the consolidator was shown (its inputs), `final` the status of
 * the folder it left, both against the previous baseline.
 */
export function summarizeConsolidation(given: readonly Change[], final: readonly Change[], sessions: number): ReviewSummary {
  const paths = (changes: readonly Change[], keep: (change: Change) => boolean) => changes.filter(keep).map((change) => change.path).sort()
  const inputs = new Set(given.map((change) => change.path))
  return {
    inputsAdded: paths(given, (c) => INPUTS.test(c.path) && c.status !== "D"),
    inputsRemoved: paths(given, (c) => INPUTS.test(c.path) && c.status === "D"),
    notes: paths(given, (c) => EXTENSIONS.test(c.path) && c.status !== "D"),
    changed: paths(final, (c) => !inputs.has(c.path) || !(INPUTS.test(c.path) || EXTENSIONS.test(c.path))).filter((p) => !INPUTS.test(p) && !EXTENSIONS.test(p)),
    sessions,
  }
}

/** A rollout summary's name: `<time>-<hash>` is the session's, `-<slug>` is words about it. */
// A slug holds a letter or "_": a bare number after the hash is a collision suffix (`-2`), kept.
const SUMMARY_NAME = /^(rollout_summaries\/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9A-Za-z]{4})-[a-z0-9_]*[a-z_][a-z0-9_]*((?:-\d+)?\.md)$/

/**
 * What a review keeps, so that nothing a consolidation removed survives in it: every removed line
 * of the diff becomes a count (`-[3 lines removed]`), and a removed input's slug (words the model
 * chose about the session) is cut from its name, wherever the name appears. What was added and
 * what stays is shown as it is. Pure.
 */
export function keptReview(summary: ReviewSummary, diff: string): { summary: ReviewSummary; diff: string } {
  const renamed = new Map(summary.inputsRemoved.map((file) => [file, file.replace(SUMMARY_NAME, "$1$2")] as const).filter(([from, to]) => from !== to))
  let text = withoutRemovedLines(diff)
  for (const [from, to] of renamed) text = text.split(from).join(to)
  return { summary: { ...summary, inputsRemoved: summary.inputsRemoved.map((file) => renamed.get(file) ?? file) }, diff: text }
}

/** Each run of removed lines inside a hunk becomes one line that counts them; headers stay. */
export function withoutRemovedLines(diff: string): string {
  const out: string[] = []
  let inHunk = false
  let removed = 0
  const flush = () => {
    if (removed) out.push(`-[${removed} line${removed === 1 ? "" : "s"} removed]`)
    removed = 0
  }
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) inHunk = false
    else if (line.startsWith("@@")) inHunk = true
    if (inHunk && line.startsWith("-")) {
      removed++
      continue
    }
    // "\ No newline at end of file" after a removed line belongs to it.
    if (inHunk && removed && line.startsWith("\\")) continue
    flush()
    out.push(line)
  }
  flush()
  return out.join("\n")
}
