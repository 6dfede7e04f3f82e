// The checkpoints of one plugin instance: host observations and model updates go into each
// session's checkpoint_v1 (kept in memory.db), a compaction gets the rendered view, and the view
// of the last compaction is frozen and handed to every later turn until the next. Everything
// here runs inside the adapters' guard: a failure is logged and the host's turn and compaction go
// on as if the plugin were absent.
import path from "node:path"
import type { Diagnostics } from "../diagnostics.js"
import { redactText } from "../redact/redact.js"
import { stripPrivate } from "../redact/private.js"
import type { CheckpointStore } from "../store/checkpoint-store.js"
import { emptyCheckpoint, observeArtifact, observeTodos, observeUserMessage, type CheckpointV1 } from "./checkpoint.js"
import { fileHash } from "./file-hash.js"
import { fileOfUri, fileUri, observeToolResult, type ToolResult } from "./observe.js"
import { applyUpdate } from "./update.js"
import { renderView, wrapView } from "./view.js"

export type CheckpointMode = "augment" | "replace"

export interface CheckpointDeps {
  store: () => CheckpointStore | undefined
  /**
   * A session's project folder: its file uris are relative to it, and re-hashed under it. One
   * folder per instance on OpenCode 1.x; per session on OpenCode 2, whose one memory serves
   * every location.
   */
  directory: (sessionId: string) => string | undefined
  diagnostics: Diagnostics
  /** The fixed instruction that opens every view (templates/checkpoint/preface.md). */
  preface: string
  /** Tells a file's current hash; fileHash by default (tests inject faults here). */
  hash?: (file: string) => string | undefined
  now?: () => number
  /** False for a session memory keeps nothing of (mode disabled): no checkpoint is recorded or shown. */
  keeps?: (sessionId: string) => boolean
}

export type ApplyOutcome = { ok: true; applied: string[] } | { ok: false; reason: string }

/** How long a compaction may run before its session's turns get the frozen view again regardless. */
const COMPACTION_WINDOW_MS = 10 * 60 * 1000

export class SessionCheckpoints {
  private readonly hash: (file: string) => string | undefined
  /** Sessions whose compaction is running, since when: their compaction request gets the new view, not the old. */
  private readonly compacting = new Map<string, number>()

  private readonly now: () => number

  constructor(private readonly deps: CheckpointDeps) {
    this.hash = deps.hash ?? fileHash
    this.now = deps.now ?? Date.now
  }

  /** A user's message: the task pointer, with `<private>` spans cut and secrets redacted first. */
  onUserMessage(sessionId: string, messageId: string, texts: readonly string[]): void {
    const text = redactText(stripPrivate(texts.join("\n\n")).text)
    this.change(sessionId, (cp) => observeUserMessage(cp, { messageId, text }))
  }

  /** A finished tool call: a file or command artifact (hashed now, by the plugin), or the todo list. */
  onToolResult(sessionId: string, result: ToolResult): void {
    const seen = observeToolResult(result, this.deps.directory(sessionId))
    if (!seen) return
    if (seen.type === "todos") return this.onTodos(sessionId, seen.todos)
    if (seen.type === "file") {
      const hash = this.hash(seen.file)
      this.change(sessionId, (cp) => observeArtifact(cp, { uri: seen.uri, kind: "file", op: seen.op, callId: seen.callId, ...(hash ? { hash } : {}) }))
      return
    }
    const command = redactText(stripPrivate(seen.command).text)
    this.change(sessionId, (cp) => observeArtifact(cp, { uri: `cmd:${seen.callId}`, kind: "command", op: "run", command, exitStatus: seen.exitStatus, callId: seen.callId }))
  }

  private onTodos(sessionId: string, todos: Array<{ id?: string; content: string; status: string }>): void {
    const clean = todos.map((todo) => ({ ...todo, content: redactText(stripPrivate(todo.content).text) }))
    this.change(sessionId, (cp) => observeTodos(cp, clean))
  }

  /** memory_checkpoint: a validated update, or a refusal that changes nothing. */
  apply(sessionId: string, update: unknown): ApplyOutcome {
    const store = this.requireStore()
    if (!this.keeps(sessionId)) return { ok: false, reason: "this session is disabled in memory (memory_mode), so nothing of it is kept, its checkpoint included" }
    let outcome: ApplyOutcome = { ok: false, reason: "nothing was applied" }
    store.update(sessionId, (state) => {
      const cp = this.parse(sessionId, state)
      const result = applyUpdate(cp, resolveFilePaths(cp, resolveCurrentMessage(cp, update), this.deps.directory(sessionId)))
      if (!result.ok) {
        outcome = result
        return undefined
      }
      outcome = { ok: true, applied: result.applied }
      return { state: JSON.stringify(result.checkpoint), result: undefined }
    })
    return outcome
  }

  /** The current view, rendered against the files as they are now. */
  view(sessionId: string): string {
    const cp = this.parse(sessionId, this.deps.store()?.get(sessionId)?.state)
    return renderView(cp, (uri) => this.currentHash(sessionId, uri))
  }

  /**
   * A compaction starts: the view, wrapped, for the compaction's context. It is kept as pending,
   * so that the compaction's end freezes exactly these bytes.
   */
  compactionContext(sessionId: string): string | undefined {
    const store = this.requireStore()
    if (!this.keeps(sessionId)) return undefined
    const wrapped = wrapView(this.view(sessionId), this.deps.preface)
    // A session with no checkpoint row yet still gets one, so the view can be kept.
    store.update(sessionId, (state) => (state === undefined ? { state: JSON.stringify(emptyCheckpoint(sessionId)), result: undefined } : undefined))
    store.setPending(sessionId, wrapped)
    this.compacting.set(sessionId, this.now())
    return wrapped
  }

  /** The compaction ended: its view is what every turn carries until the next compaction. */
  onCompacted(sessionId: string): void {
    this.compacting.delete(sessionId)
    const store = this.deps.store()
    if (!store) return
    // A compaction whose start the plugin did not see (the hook failed or timed out) gets today's view.
    if (!store.freeze(sessionId)) {
      this.compactionContext(sessionId)
      this.compacting.delete(sessionId)
      store.freeze(sessionId)
    }
  }

  /** The frozen view for this session's turns, byte-identical until the next compaction. */
  frozenView(sessionId: string): string | undefined {
    const since = this.compacting.get(sessionId)
    // OpenCode 1.x builds the compaction request's system prompt too: it has the new view in its context.
    if (since !== undefined && this.now() - since < COMPACTION_WINDOW_MS) return undefined
    return this.deps.store()?.frozenView(sessionId)
  }

  forget(sessionId: string): void {
    this.compacting.delete(sessionId)
    this.deps.store()?.delete(sessionId)
  }

  private currentHash(sessionId: string, uri: string): string | undefined {
    if (uri.startsWith("cmd:")) return undefined
    return this.hash(fileOfUri(uri, this.deps.directory(sessionId)))
  }

  private keeps(sessionId: string): boolean {
    return this.deps.keeps?.(sessionId) ?? true
  }

  private change(sessionId: string, reduce: (cp: CheckpointV1) => CheckpointV1): void {
    if (!this.keeps(sessionId)) return
    this.deps.store()?.update(sessionId, (state) => ({ state: JSON.stringify(reduce(this.parse(sessionId, state))), result: undefined }))
  }

  /** A stored state that does not read back as a checkpoint starts over, and says so. */
  private parse(sessionId: string, state: string | undefined): CheckpointV1 {
    if (state === undefined) return emptyCheckpoint(sessionId)
    try {
      const value = JSON.parse(state) as Partial<CheckpointV1>
      if (value?.schemaVersion === 1 && value.sessionId === sessionId && typeof value.seq === "number" && Array.isArray(value.plan) && Array.isArray(value.artifacts)) return value as CheckpointV1
      throw new Error("not a checkpoint_v1 object")
    } catch (error) {
      this.deps.diagnostics.report("warn", "checkpoint", `the checkpoint of ${sessionId} could not be read (${error instanceof Error ? error.message : String(error)}); it starts over`)
      return emptyCheckpoint(sessionId)
    }
  }

  private requireStore(): CheckpointStore {
    const store = this.deps.store()
    if (!store) throw new Error("the memory database is not open yet; try again in a moment")
    return store
  }
}

/**
 * Models do not see message ids, so a user evidence ref of "current" names the latest user message
 * the host reported. Resolved here, from host truth; anything else is validated as given.
 */
export function resolveCurrentMessage(cp: CheckpointV1, update: unknown): unknown {
  const latest = cp.userMessages.at(-1)
  if (!latest || typeof update !== "object" || update === null) return update
  const resolve = (entry: unknown): unknown => {
    if (typeof entry !== "object" || entry === null) return entry
    const evidence = (entry as { evidence?: { source?: unknown; ref?: unknown } }).evidence
    if (evidence?.source !== "user" || evidence.ref !== CURRENT_MESSAGE) return entry
    return { ...entry, evidence: { ...evidence, ref: latest } }
  }
  const { decision, fact } = update as { decision?: unknown; fact?: unknown }
  return { ...update, ...(decision === undefined ? {} : { decision: resolve(decision) }), ...(fact === undefined ? {} : { fact: resolve(fact) }) }
}

export const CURRENT_MESSAGE = "current"

/**
 * File references as the model may write them (absolute, as `read` took them; relative; `./x`)
 * turned into the uri the checkpoint observed them under. A path that names no observed file is
 * left as given, so the refusal quotes what the model sent.
 */
export function resolveFilePaths(cp: CheckpointV1, update: unknown, directory: string | undefined): unknown {
  if (typeof update !== "object" || update === null) return update
  const observed = new Set(cp.artifacts.filter((artifact) => artifact.kind === "file").map((artifact) => artifact.uri))
  const resolve = (ref: unknown): unknown => {
    if (typeof ref !== "string" || observed.has(ref)) return ref
    const given = ref.trim()
    const absolute = path.isAbsolute(given) ? path.normalize(given) : directory ? path.resolve(directory, given) : undefined
    const uri = absolute ? fileUri(absolute, directory) : path.posix.normalize(given.replaceAll("\\", "/")).replace(/^(\.\/)+/, "")
    return observed.has(uri) ? uri : ref
  }
  const withEvidence = (entry: unknown): unknown => {
    if (typeof entry !== "object" || entry === null) return entry
    const evidence = (entry as { evidence?: { source?: unknown; ref?: unknown } }).evidence
    const dependsOn = (entry as { depends_on?: unknown }).depends_on
    return {
      ...entry,
      ...(evidence?.source === "file" ? { evidence: { ...evidence, ref: resolve(evidence.ref) } } : {}),
      ...(Array.isArray(dependsOn) ? { depends_on: dependsOn.map(resolve) } : {}),
    }
  }
  const { decision, fact } = update as { decision?: unknown; fact?: unknown }
  return { ...update, ...(decision === undefined ? {} : { decision: withEvidence(decision) }), ...(fact === undefined ? {} : { fact: withEvidence(fact) }) }
}
