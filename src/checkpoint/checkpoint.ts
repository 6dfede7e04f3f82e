// A session's checkpoint, after the Deterministic Session Checkpoint RFC: a small, bounded state
// (task pointer, plan, decisions, artifacts, facts) that replaces a narrative summary at compaction.
// The host owns the task, the todo steps and the artifacts (these reducers); the model proposes
// plan steps, decisions and facts through validated updates (update.ts). Every reducer is pure:
// it returns a new checkpoint one seq later, within the caps, and never touches its input.
import { compareText, storedText, truncateChars } from "./text.js"

export const CHECKPOINT_CAPS = Object.freeze({
  maxFacts: 64,
  maxDecisions: 32,
  maxPlanSteps: 32,
  maxRecentArtifacts: 16,
  maxArtifacts: 256,
  maxValueChars: 160,
  maxTaskChars: 2000,
  maxCommandChars: 300,
  /** User message ids kept for evidence checks. */
  maxUserMessages: 256,
  /** Files one fact may depend on. */
  maxFactDeps: 8,
})

export type EvidenceRef = {
  source: "user" | "tool" | "file"
  /** A user message id, a tool call id, or a file path (an artifact uri). */
  ref: string
}

export interface Artifact {
  /** The file path as given, or "cmd:<callID>" for a command. */
  uri: string
  kind: "file" | "command"
  op: "read" | "edit" | "write" | "run"
  /** Computed by the host (e.g. "sha256:<hex12>"); absent when unknown. */
  hash?: string
  command?: string
  exitStatus?: number | null
  callId: string
  lastObservedSeq: number
}

export interface FactRecord {
  key: string
  value: string
  evidence: EvidenceRef
  /** Each file's hash as recorded when the fact was stored. */
  dependsOn: Array<{ uri: string; hash?: string }>
  lastTouchedSeq: number
}

export interface DecisionRecord {
  decisionId: string
  topic?: string
  decision: string
  rationale: string
  supersedes?: string
  evidence: EvidenceRef
  seq: number
}

export interface PlanStep {
  id: string
  text: string
  done: boolean
  source: "todo" | "model"
}

export interface CheckpointV1 {
  schemaVersion: 1
  sessionId: string
  seq: number
  task: { text: string; evidence: EvidenceRef } | null
  plan: PlanStep[]
  decisions: DecisionRecord[]
  /**
   * Observed files and commands, one per uri, in the order first observed. A list rather than a
   * uri-keyed object: a copy per observation stays cheap however the uris change (an object with
   * ever-new keys costs V8 a new shape per copy, which dominated the projection).
   */
  artifacts: Artifact[]
  facts: Record<string, FactRecord>
  /** Artifact uris, most recent first. */
  recentArtifacts: string[]
  /** Ids of the user messages seen (the last maxUserMessages), for evidence checks. */
  userMessages: string[]
}

export function emptyCheckpoint(sessionId: string): CheckpointV1 {
  return { schemaVersion: 1, sessionId, seq: 0, task: null, plan: [], decisions: [], artifacts: [], facts: {}, recentArtifacts: [], userMessages: [] }
}

export function artifactOf(cp: CheckpointV1, uri: string): Artifact | undefined {
  return cp.artifacts.find((artifact) => artifact.uri === uri)
}

// Lookups by own property only: a key such as "constructor" must not find Object's.

export function factOf(cp: CheckpointV1, key: string): FactRecord | undefined {
  return Object.hasOwn(cp.facts, key) ? cp.facts[key] : undefined
}

export function observeUserMessage(cp: CheckpointV1, message: { messageId: string; text: string }): CheckpointV1 {
  const userMessages = [...cp.userMessages.filter((id) => id !== message.messageId), message.messageId].slice(-CHECKPOINT_CAPS.maxUserMessages)
  // A message without text (attachments only) states no new task: the pointer stays.
  const task = message.text.trim() === ""
    ? cp.task
    : { text: truncateChars(message.text, CHECKPOINT_CAPS.maxTaskChars), evidence: { source: "user" as const, ref: message.messageId } }
  return { ...cp, seq: cp.seq + 1, task, userMessages }
}

export function observeTodos(cp: CheckpointV1, todos: ReadonlyArray<{ id?: string; content: string; status: string }>): CheckpointV1 {
  const ids = new Set<string>()
  const steps: PlanStep[] = []
  todos.forEach((todo, index) => {
    const id = todo.id ?? `todo-${index + 1}`
    // A repeated id keeps its first step, so an id names one step.
    if (ids.has(id)) return
    ids.add(id)
    const done = todo.status === "completed" || todo.status === "cancelled"
    steps.push({ id, text: storedText(todo.content, CHECKPOINT_CAPS.maxValueChars), done, source: "todo" })
  })
  // The todo list owns its ids: a model step with the same id gives way.
  const model = cp.plan.filter((step) => step.source === "model" && !ids.has(step.id))
  return { ...cp, seq: cp.seq + 1, plan: [...steps, ...model].slice(0, CHECKPOINT_CAPS.maxPlanSteps) }
}

export function observeArtifact(cp: CheckpointV1, observed: Omit<Artifact, "lastObservedSeq">): CheckpointV1 {
  const seq = cp.seq + 1
  // The newest observation replaces the record whole: no hash given means the hash is unknown now.
  const artifact: Artifact = {
    uri: observed.uri,
    kind: observed.kind,
    op: observed.op,
    ...(observed.hash === undefined ? {} : { hash: observed.hash }),
    ...(observed.command === undefined ? {} : { command: storedText(observed.command, CHECKPOINT_CAPS.maxCommandChars) }),
    ...(observed.exitStatus === undefined ? {} : { exitStatus: observed.exitStatus }),
    callId: observed.callId,
    lastObservedSeq: seq,
  }
  const at = cp.artifacts.findIndex((known) => known.uri === observed.uri)
  const { artifacts, evicted } = evictArtifacts(at < 0 ? [...cp.artifacts, artifact] : cp.artifacts.map((known, index) => (index === at ? artifact : known)), cp.facts)
  const recentArtifacts = [observed.uri, ...cp.recentArtifacts.filter((uri) => uri !== observed.uri)]
    .filter((uri) => !evicted.has(uri))
    .slice(0, CHECKPOINT_CAPS.maxRecentArtifacts)
  return { ...cp, seq, artifacts, recentArtifacts }
}

/**
 * Artifacts within maxArtifacts: the least recently observed go first (tie: uri), but never one a
 * fact depends on. One linear scan per victim: an observation adds at most one artifact.
 */
function evictArtifacts(artifacts: Artifact[], facts: Record<string, FactRecord>): { artifacts: Artifact[]; evicted: ReadonlySet<string> } {
  let excess = artifacts.length - CHECKPOINT_CAPS.maxArtifacts
  if (excess <= 0) return { artifacts, evicted: new Set() }
  const pinned = new Set(Object.values(facts).flatMap((fact) => fact.dependsOn.map((dep) => dep.uri)))
  const victims = new Set<string>()
  for (; excess > 0; excess--) {
    let victim: Artifact | undefined
    for (const artifact of artifacts) {
      if (pinned.has(artifact.uri) || victims.has(artifact.uri)) continue
      if (!victim || artifact.lastObservedSeq < victim.lastObservedSeq || (artifact.lastObservedSeq === victim.lastObservedSeq && compareText(artifact.uri, victim.uri) < 0)) victim = artifact
    }
    if (!victim) break
    victims.add(victim.uri)
  }
  return { artifacts: artifacts.filter((artifact) => !victims.has(artifact.uri)), evicted: victims }
}

/** Facts within maxFacts: the least recently touched go first (tie: key). Also returns the evicted keys. */
export function evictFacts(facts: Record<string, FactRecord>): { facts: Record<string, FactRecord>; evicted: string[] } {
  const excess = Object.keys(facts).length - CHECKPOINT_CAPS.maxFacts
  if (excess <= 0) return { facts, evicted: [] }
  const evicted = Object.values(facts)
    .sort((a, b) => a.lastTouchedSeq - b.lastTouchedSeq || compareText(a.key, b.key))
    .slice(0, excess)
    .map((fact) => fact.key)
  const gone = new Set(evicted)
  return { facts: Object.fromEntries(Object.entries(facts).filter(([key]) => !gone.has(key))), evicted }
}

/** Decisions within maxDecisions: the oldest seq goes first (tie: id). Also returns the evicted ids. */
export function evictDecisions(decisions: readonly DecisionRecord[]): { decisions: DecisionRecord[]; evicted: string[] } {
  const excess = decisions.length - CHECKPOINT_CAPS.maxDecisions
  if (excess <= 0) return { decisions: [...decisions], evicted: [] }
  const evicted = [...decisions]
    .sort((a, b) => a.seq - b.seq || compareText(a.decisionId, b.decisionId))
    .slice(0, excess)
    .map((decision) => decision.decisionId)
  const gone = new Set(evicted)
  return { decisions: decisions.filter((decision) => !gone.has(decision.decisionId)), evicted }
}
