// The model's side of the checkpoint: plan steps, decisions and facts proposed through the
// memory_checkpoint tool. A call is checked whole before anything is applied, so a refused call
// changes nothing. Evidence must name something this session observed, facts name the files they
// rest on (their hashes are the host's, taken at apply time), and standing instructions to the
// agent are refused: a checkpoint records the task's state, never a policy (RFC §11, S2).
import { z, type InferShape } from "../util/zod.js"
import {
  artifactOf,
  CHECKPOINT_CAPS,
  evictDecisions,
  evictFacts,
  factOf,
  type CheckpointV1,
  type DecisionRecord,
  type EvidenceRef,
  type FactRecord,
  type PlanStep,
} from "./checkpoint.js"
import { storedText } from "./text.js"

const KEY = /^[A-Za-z0-9_.:/-]+$/
// Values are cut to maxValueChars when stored; this only bounds what a call may carry.
const MAX_INPUT_CHARS = 4000

const name = (what: string) =>
  z.string().trim().min(1).max(80).regex(KEY, `${what} may hold only letters, digits and _ . : / -`)
const ref = z.string().trim().min(1).max(1000)
const text = z.string().trim().min(1).max(MAX_INPUT_CHARS)

const evidence = z.strictObject({ source: z.enum(["user", "tool", "file"]), ref })

// What a call is checked against before anything is applied: bounded strings, known keys only.
const UPDATE_SHAPE = {
  plan: z.array(z.strictObject({ id: name("a plan step id"), text, done: z.boolean().optional() })).max(CHECKPOINT_CAPS.maxPlanSteps).optional(),
  done: z.array(ref).max(CHECKPOINT_CAPS.maxPlanSteps).optional(),
  decision: z
    .strictObject({ id: name("a decision id"), topic: z.string().trim().min(1).max(80).optional(), decision: text, rationale: text, supersedes: ref.optional(), evidence })
    .optional(),
  fact: z.strictObject({ key: name("fact.key"), value: text, evidence, depends_on: z.array(ref).max(CHECKPOINT_CAPS.maxFactDeps) }).optional(),
}

/**
 * The arguments as the model is shown them, on every request of every session: names and
 * types only, so the schema stays small. The tool's description says what each field is for, and
 * the bounds are UPDATE_SHAPE's, checked when the call is applied.
 */
const evidenceArg = z.object({ source: z.enum(["user", "tool", "file"]), ref: z.string() })
export const CHECKPOINT_UPDATE_ARGS = {
  plan: z.array(z.object({ id: z.string(), text: z.string(), done: z.boolean().optional() })).optional(),
  done: z.array(z.string()).optional(),
  decision: z
    .object({ id: z.string(), topic: z.string().optional(), decision: z.string(), rationale: z.string(), supersedes: z.string().optional(), evidence: evidenceArg })
    .optional(),
  fact: z
    .object({ key: z.string(), value: z.string(), evidence: evidenceArg, depends_on: z.array(z.string()) })
    .optional(),
}

export type CheckpointUpdate = InferShape<typeof UPDATE_SHAPE>

export type UpdateResult = { ok: true; checkpoint: CheckpointV1; applied: string[] } | { ok: false; reason: string }

const UPDATE = z.strictObject(UPDATE_SHAPE)

// Standing instructions, matched at the start of a text or after "the agent/assistant/you should".
const POLICY_OPENINGS: readonly RegExp[] = [
  /^always\b/,
  /^never\b/,
  /^from now on\b/,
  /^you must\b/,
  /^(?:do not|don't) ever\b/,
  /^in (?:every|each|all) (?:future )?(?:sessions?|responses?|conversations?)\b/,
]
// Matched anywhere: no task state ever needs to say it.
const POLICY_ANYWHERE: readonly RegExp[] = [/\bignore (?:all )?(?:the )?(?:previous|prior|above) instructions\b/]
const LEAD_IN = /^(?:the (?:agent|assistant)|you) should\s+/
// Bullets, quotes and emphasis in front of the words themselves.
const DECORATION = /^[\s"'`*_>•-]+/

/** Whether a text reads as a standing instruction to the agent rather than a record of the task. */
export function isBehaviourPolicy(value: string): boolean {
  const plain = value.toLowerCase().replace(/\s+/g, " ").replace(DECORATION, "")
  if (POLICY_ANYWHERE.some((pattern) => pattern.test(plain))) return true
  const opening = plain.replace(LEAD_IN, "")
  return POLICY_OPENINGS.some((pattern) => pattern.test(plain) || pattern.test(opening))
}

export function applyUpdate(cp: CheckpointV1, update: unknown): UpdateResult {
  const parsed = UPDATE.safeParse(update)
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(arguments)"}: ${issue.message}`)
    return { ok: false, reason: `invalid arguments: ${fields.join("; ")}` }
  }
  const problems = problemsOf(cp, parsed.data)
  if (problems.length > 0) return { ok: false, reason: problems.join("\n") }
  return { ok: true, ...applyChecked(cp, parsed.data) }
}

const quote = (value: string) => JSON.stringify(value)

function problemsOf(cp: CheckpointV1, update: CheckpointUpdate): string[] {
  const { plan = [], done = [], decision, fact } = update
  if (plan.length === 0 && done.length === 0 && !decision && !fact) {
    return ["nothing to record: give at least one of plan, done, decision or fact"]
  }
  const problems: string[] = []
  const policy = (field: string, value: string) => {
    if (isBehaviourPolicy(value)) {
      problems.push(`${field} stores a behaviour policy (a standing instruction to the agent); record what was observed or decided for this task, not a rule for the agent`)
    }
  }

  const owners = new Map(cp.plan.map((step) => [step.id, step.source]))
  const listed = new Set<string>()
  plan.forEach((step, index) => {
    if (listed.has(step.id)) problems.push(`plan.${index}.id: ${quote(step.id)} is listed twice`)
    listed.add(step.id)
    if (owners.get(step.id) === "todo") problems.push(`plan.${index}.id: ${quote(step.id)} is a todo step, which follows the todo list; use another id`)
    policy(`plan.${index}.text`, step.text)
  })
  const steps = cp.plan.length + [...listed].filter((id) => !owners.has(id)).length
  if (steps > CHECKPOINT_CAPS.maxPlanSteps) {
    problems.push(`plan: the plan would hold ${steps} steps, over its cap of ${CHECKPOINT_CAPS.maxPlanSteps}; update existing steps by id instead`)
  }
  done.forEach((id, index) => {
    if (!owners.has(id) && !listed.has(id)) problems.push(`done.${index}: no plan step ${quote(id)}`)
  })

  if (decision) {
    problems.push(...evidenceProblems(cp, "decision.evidence", decision.evidence))
    if (decision.supersedes !== undefined) {
      if (decision.supersedes === decision.id) problems.push("decision.supersedes: a decision cannot supersede itself")
      else if (!cp.decisions.some((earlier) => earlier.decisionId === decision.supersedes)) {
        problems.push(`decision.supersedes: no decision ${quote(decision.supersedes)}`)
      }
    }
    policy("decision.decision", decision.decision)
    policy("decision.rationale", decision.rationale)
  }

  if (fact) {
    problems.push(...evidenceProblems(cp, "fact.evidence", fact.evidence))
    if (fact.depends_on.length === 0 && fact.evidence.source !== "user") {
      problems.push("fact.depends_on: name the files this fact rests on; it may be empty only when the evidence is a user message")
    }
    fact.depends_on.forEach((uri, index) => {
      const artifact = artifactOf(cp, uri)
      if (!artifact) problems.push(`fact.depends_on.${index}: ${quote(uri)} is not a file observed in this session; read it first`)
      else if (artifact.kind !== "file") problems.push(`fact.depends_on.${index}: ${quote(uri)} is a command, not a file`)
    })
    policy("fact.value", fact.value)
  }
  return problems
}

function evidenceProblems(cp: CheckpointV1, field: string, evidence: EvidenceRef): string[] {
  switch (evidence.source) {
    case "user":
      return cp.userMessages.includes(evidence.ref) ? [] : [`${field}: no user message ${quote(evidence.ref)} in this session`]
    case "tool":
      return cp.artifacts.some((artifact) => artifact.callId === evidence.ref)
        ? []
        : [`${field}: no tool call ${quote(evidence.ref)} observed in this session`]
    case "file":
      return artifactOf(cp, evidence.ref)?.kind === "file" ? [] : [`${field}: no file ${quote(evidence.ref)} observed in this session; read it first`]
  }
}

/** Applies an update `problemsOf` found nothing wrong with: one seq for the whole call. */
function applyChecked(cp: CheckpointV1, update: CheckpointUpdate): { checkpoint: CheckpointV1; applied: string[] } {
  const seq = cp.seq + 1
  const applied: string[] = []
  const value = (text: string) => storedText(text, CHECKPOINT_CAPS.maxValueChars)

  const proposed = new Map((update.plan ?? []).map((step) => [step.id, step]))
  const finished = new Set(update.done ?? [])
  const updated = cp.plan.map((step): PlanStep => {
    const change = proposed.get(step.id)
    if (change) applied.push(`plan step ${step.id} updated`)
    return change ? { id: step.id, text: value(change.text), done: change.done ?? step.done, source: "model" } : step
  })
  const known = new Set(cp.plan.map((step) => step.id))
  const added = [...proposed.values()]
    .filter((step) => !known.has(step.id))
    .map((step): PlanStep => {
      applied.push(`plan step ${step.id} added`)
      return { id: step.id, text: value(step.text), done: step.done ?? false, source: "model" }
    })
  const plan = [...updated, ...added].map((step) => (finished.has(step.id) && !step.done ? { ...step, done: true } : step))
  for (const id of finished) applied.push(`plan step ${id} marked done`)

  // A fresh object, so filling it in leaves `cp` as it was.
  const next: CheckpointV1 = { ...cp, seq, plan }
  if (update.decision) {
    const decided = update.decision
    const replaced = cp.decisions.some((earlier) => earlier.decisionId === decided.id)
    const kept = evictDecisions([...cp.decisions.filter((earlier) => earlier.decisionId !== decided.id), decisionRecord(decided, seq, value)])
    next.decisions = kept.decisions
    applied.push(`decision ${decided.id} ${replaced ? "replaced" : "recorded"}${decided.supersedes ? `, superseding ${decided.supersedes}` : ""}`)
    for (const id of kept.evicted) applied.push(`decision ${id} evicted (cap ${CHECKPOINT_CAPS.maxDecisions})`)
  }
  if (update.fact) {
    const learned = update.fact
    const kept = evictFacts({ ...cp.facts, [learned.key]: factRecord(cp, learned, seq, value) })
    next.facts = kept.facts
    applied.push(`fact ${learned.key} ${factOf(cp, learned.key) ? "updated" : "recorded"}`)
    for (const key of kept.evicted) applied.push(`fact ${key} evicted (cap ${CHECKPOINT_CAPS.maxFacts})`)
  }
  return { checkpoint: next, applied }
}

function decisionRecord(decision: NonNullable<CheckpointUpdate["decision"]>, seq: number, value: (text: string) => string): DecisionRecord {
  return {
    decisionId: decision.id,
    ...(decision.topic === undefined ? {} : { topic: value(decision.topic) }),
    decision: value(decision.decision),
    rationale: value(decision.rationale),
    ...(decision.supersedes === undefined ? {} : { supersedes: decision.supersedes }),
    evidence: { source: decision.evidence.source, ref: decision.evidence.ref },
    seq,
  }
}

function factRecord(cp: CheckpointV1, fact: NonNullable<CheckpointUpdate["fact"]>, seq: number, value: (text: string) => string): FactRecord {
  // Each file's hash as the host recorded it now: the fact is VALID while the file keeps it.
  const dependsOn = [...new Set(fact.depends_on)].map((uri) => {
    const hash = artifactOf(cp, uri)?.hash
    return hash === undefined ? { uri } : { uri, hash }
  })
  return { key: fact.key, value: value(fact.value), evidence: { source: fact.evidence.source, ref: fact.evidence.ref }, dependsOn, lastTouchedSeq: seq }
}
