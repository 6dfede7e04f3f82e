// What one successful consolidation changed, for `diff --last` and memory_inspect: the inputs it
// was given (rollout summaries added or removed, notes and imports under extensions/), what the
// consolidator itself changed, and the whole redacted diff of the folder against the previous
// baseline. Pure.
import type { ReviewSummary } from "../store/reviews.js"

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
