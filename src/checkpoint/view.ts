// The checkpoint as the model reads it after compaction or on resume (RFC §8): fixed sections in a
// fixed order, fixed selection rules and per-section caps, one line per entry. Pure and byte
// stable: no token counting, no clock, and every order is defined (code unit order for keys).
import { artifactOf, type CheckpointV1, type DecisionRecord, type EvidenceRef, type PlanStep } from "./checkpoint.js"
import { factStatus } from "./staleness.js"
import { compareText, oneLine, truncateChars } from "./text.js"

export interface ViewCaps {
  readonly maxOpenPlanSteps: number
  readonly maxDonePlanSteps: number
  readonly maxDecisions: number
  readonly maxFactsValid: number
  readonly maxFactsSuspect: number
  readonly maxRecentArtifacts: number
  readonly maxValueChars: number
}

export const VIEW_CAPS: ViewCaps = Object.freeze({
  maxOpenPlanSteps: 16,
  // Four, not eight: with every section full the view is 7,800 tokens (o200k_base), under the
  // benchmark's 8,000; eight gave 8,035 once tokens were counted, not bytes over four.
  maxDonePlanSteps: 4,
  maxDecisions: 12,
  maxFactsValid: 32,
  maxFactsSuspect: 16,
  maxRecentArtifacts: 16,
  maxValueChars: 160,
})

export const CHECKPOINT_VIEW_BEGIN = "<session-checkpoint>"
export const CHECKPOINT_VIEW_END = "</session-checkpoint>"

/** A section's entries within their cap, and how many the cap hid. */
interface Shown {
  lines: string[]
  hidden: number
}

function capped<T>(items: readonly T[], max: number, line: (item: T) => string): Shown {
  const limit = Math.max(0, Math.floor(max))
  return { lines: items.slice(0, limit).map(line), hidden: Math.max(0, items.length - limit) }
}

export function renderView(cp: CheckpointV1, current: (uri: string) => string | undefined, caps: ViewCaps = VIEW_CAPS): string {
  const v = (text: string) => truncateChars(oneLine(text), caps.maxValueChars)
  const evidence = (ref: EvidenceRef) => `${ref.source}:${v(ref.ref)}`

  const task: Shown = { lines: cp.task ? [`- ${v(cp.task.text)} (evidence=${evidence(cp.task.evidence)})`] : [], hidden: 0 }

  const step = (item: PlanStep) => `- [${item.done ? "x" : " "}] ${v(item.text)} (id=${v(item.id)})`
  const open = capped(cp.plan.filter((item) => !item.done), caps.maxOpenPlanSteps, step)
  const closed = capped(cp.plan.filter((item) => item.done), caps.maxDonePlanSteps, step)
  const plan: Shown = { lines: [...open.lines, ...closed.lines], hidden: open.hidden + closed.hidden }

  const present = cp.recentArtifacts.flatMap((uri) => {
    const artifact = artifactOf(cp, uri)
    return artifact ? [artifact] : []
  })
  const recent = capped(present, caps.maxRecentArtifacts, (artifact) =>
    artifact.kind === "file"
      ? `- file: ${v(artifact.uri)} (${artifact.op}, hash=${artifact.hash === undefined ? "unknown" : v(artifact.hash)})`
      : `- cmd: ${v(artifact.command ?? artifact.uri)} (exit=${artifact.exitStatus ?? "unknown"})`,
  )

  // A decision another one supersedes is history: only the standing ones are shown, newest first.
  const superseded = new Set(cp.decisions.flatMap((item) => (item.supersedes !== undefined && item.supersedes !== item.decisionId ? [item.supersedes] : [])))
  const standing = cp.decisions
    .filter((item) => !superseded.has(item.decisionId))
    .sort((a, b) => b.seq - a.seq || compareText(a.decisionId, b.decisionId))
  const decisions = capped(standing, caps.maxDecisions, (item: DecisionRecord) => {
    const topic = item.topic === undefined ? "" : `${v(item.topic)}: `
    const supersedes = item.supersedes === undefined ? "" : ` supersedes=${v(item.supersedes)}`
    return `- ${topic}${v(item.decision)} — ${v(item.rationale)} (id=${v(item.decisionId)}${supersedes} evidence=${evidence(item.evidence)})`
  })

  const judged = Object.keys(cp.facts)
    .sort(compareText)
    .map((key) => ({ fact: cp.facts[key]!, verdict: factStatus(cp.facts[key]!, current) }))
  const valid = capped(
    judged.filter((item) => item.verdict.status === "VALID"),
    caps.maxFactsValid,
    ({ fact }) => `- ${v(fact.key)}: ${v(fact.value)} (evidence=${evidence(fact.evidence)} deps=${fact.dependsOn.length})`,
  )
  const suspect = capped(
    judged.filter((item) => item.verdict.status === "SUSPECT"),
    caps.maxFactsSuspect,
    ({ fact, verdict }) => `- ${v(fact.key)}: ${v(fact.value)} (why=${verdict.why!.reason} dep=${v(verdict.why!.uri)})`,
  )

  const sections: Array<[string, Shown]> = [
    ["TASK", task],
    ["PLAN", plan],
    ["RECENT_ARTIFACTS", recent],
    ["DECISIONS", decisions],
    ["FACTS_VALID", valid],
    ["FACTS_SUSPECT", suspect],
  ]
  const lines = ["[SESSION_CHECKPOINT v1]"]
  for (const [title, shown] of sections) {
    lines.push("", `[${title}]`, ...shown.lines)
    if (shown.hidden > 0) lines.push(`- (+${shown.hidden} more)`)
    else if (shown.lines.length === 0) lines.push("- (none)")
  }
  return `${lines.join("\n")}\n`
}

/** The view as injected: fixed markers around the caller's fixed instruction and the view. */
export function wrapView(view: string, preface: string): string {
  return `${CHECKPOINT_VIEW_BEGIN}\n${preface}\n\n${view}${CHECKPOINT_VIEW_END}`
}
