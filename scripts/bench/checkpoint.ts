// The session checkpoint over a 5,000-message session: the projection (every user message and
// finished tool call through the reducers, a fact recorded every 25 turns) and its view, against
// rendering the same session's extraction transcript in the same run; the same replay through the
// store, as the hooks run it (one transaction per event); and the view's size with every section
// at its cap.
import { createHash } from "node:crypto"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base"
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base"
import { artifactOf, CHECKPOINT_CAPS, emptyCheckpoint, observeArtifact, observeUserMessage, type CheckpointV1 } from "../../src/checkpoint/checkpoint.js"
import { observeToolResult } from "../../src/checkpoint/observe.js"
import { SessionCheckpoints } from "../../src/checkpoint/session-checkpoints.js"
import { applyUpdate } from "../../src/checkpoint/update.js"
import { renderView, VIEW_CAPS } from "../../src/checkpoint/view.js"
import { Diagnostics } from "../../src/diagnostics.js"
import { CheckpointStore } from "../../src/store/checkpoint-store.js"
import { openDatabase } from "../../src/store/database.js"
import { estimateTokens } from "../../src/util/token-estimate.js"
import { renderTranscript } from "../../src/write/transcript/transcript.js"
import { FakeHost } from "../../test/fakes/host.js"
import { median, type BenchResult } from "./measure.js"
import { generateSession, type HostMessage } from "./synthetic-session.js"

const MESSAGES = 5_000
const ROUNDS = 7
const SEED = 20_261_201
const MAX_TOKENS = 150_000
const FACT_EVERY_TURNS = 25
/** Target: the projection and its view cost at most what one transcript render of the session costs. */
const MAX_RATIO = 1
const MAX_EVENT_MS = 2
const MAX_VIEW_TOKENS = 8_000

interface Event {
  type: "user" | "tool" | "fact"
  run(cp: CheckpointV1): CheckpointV1
  apply(checkpoints: SessionCheckpoints): void
}

export async function benchCheckpoint(): Promise<BenchResult> {
  const messages = generateSession(SEED, 40 * 1024 * 1024).slice(0, MESSAGES)
  if (messages.length < MESSAGES) throw new Error("benchmark: the synthetic session is shorter than intended")
  const events = sessionEvents(messages)
  const project = () => {
    let cp = emptyCheckpoint("ses_bench")
    for (const event of events) cp = event.run(cp)
    return cp
  }
  const current = (cp: CheckpointV1) => (uri: string) => (Number(uri.match(/\d+/)?.[0] ?? 0) % 5 === 0 ? "sha256:changed" : artifactOf(cp, uri)?.hash)
  const projectAndView = () => {
    const cp = project()
    return renderView(cp, current(cp))
  }
  const render = () => renderTranscript(messages, { maxTokens: MAX_TOKENS })

  const view = projectAndView()
  render()
  const viewSamples: number[] = []
  const renderSamples: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, so both see the same machine state.
    let start = performance.now()
    if (projectAndView() !== view) throw new Error("benchmark: two projections of the same session differ")
    viewSamples.push(performance.now() - start)
    start = performance.now()
    render()
    renderSamples.push(performance.now() - start)
  }
  const projection = median(viewSamples)
  const transcript = median(renderSamples)

  const persisted = persistedReplay(events)
  const capped = cappedView()
  const cp = project()
  return {
    name: "checkpoint: projection and view_v1 over a 5,000-message session",
    details: [
      `input         ${messages.length} messages; ${events.filter((e) => e.type === "user").length} user messages, ${events.filter((e) => e.type === "tool").length} tool calls, ${events.filter((e) => e.type === "fact").length} facts recorded`,
      `checkpoint    ${cp.artifacts.length} artifacts kept (cap ${CHECKPOINT_CAPS.maxArtifacts}), ${Object.keys(cp.facts).length} facts (cap ${CHECKPOINT_CAPS.maxFacts}), ${Buffer.byteLength(JSON.stringify(cp))} bytes as stored`,
      `projection    ${projection.toFixed(1)} ms median of ${ROUNDS} (reducers and view; view ${Buffer.byteLength(view)} bytes)`,
      `transcript    ${transcript.toFixed(1)} ms median of ${ROUNDS} (the same session rendered for extraction, ${MAX_TOKENS}-token budget)`,
      `hooks         ${persisted.medianMs.toFixed(3)} ms median per event through memory.db (p99 ${persisted.p99Ms.toFixed(3)} ms, ${persisted.events} events)`,
      `view at caps  ${capped.bytes} bytes, ${capped.tokens} estimated tokens (o200k_base ${capped.o200k}, cl100k_base ${capped.cl100k}; every section full, every value ${VIEW_CAPS.maxValueChars} characters)`,
    ],
    checks: [
      { kind: "ratio", what: "projection and view of the session", ratio: projection / transcript, baseline: "rendering its extraction transcript", max: MAX_RATIO },
      { kind: "absolute", what: "median hook cost per event, persisted", value: persisted.medianMs, unit: "ms", digits: 3, max: MAX_EVENT_MS },
      { kind: "absolute", what: "view size with every section at its cap", value: capped.tokens, unit: "tokens", digits: 0, max: MAX_VIEW_TOKENS },
    ],
  }
}

/** The session as the hooks see it: user messages, finished tool calls (hashed as the host would), and facts. */
function sessionEvents(messages: readonly HostMessage[]): Event[] {
  const events: Event[] = []
  let turn = 0
  let lastFile: { uri: string; callId: string } | undefined
  for (const message of messages) {
    if (message.info.role === "user") {
      turn++
      const text = message.parts.flatMap((part) => (part.type === "text" && !part.synthetic ? [part.text] : [])).join("\n")
      const messageId = message.info.id
      events.push({ type: "user", run: (cp) => observeUserMessage(cp, { messageId, text }), apply: (c) => c.onUserMessage("ses_bench", messageId, [text]) })
      if (turn % FACT_EVERY_TURNS === 0 && lastFile) {
        const file = lastFile
        const update = { fact: { key: `fact.${turn % 200}`, value: `Turn ${turn} learned something about ${file.uri}`, evidence: { source: "tool", ref: file.callId }, depends_on: [file.uri] } }
        events.push({
          type: "fact",
          run: (cp) => {
            const result = applyUpdate(cp, update)
            return result.ok ? result.checkpoint : cp
          },
          apply: (c) => void c.apply("ses_bench", update),
        })
      }
      continue
    }
    for (const part of message.parts) {
      if (part.type !== "tool" || part.state.status !== "completed") continue
      const input = part.state.input as Record<string, unknown>
      // The synthetic session's reads name no file: give each one of 300 files.
      const args = part.tool === "read" ? { filePath: `/repo/src/file-${turn % 300}.ts` } : input
      const seen = observeToolResult({ tool: part.tool, callID: part.callID, args }, "/repo")
      if (!seen || seen.type === "todos") continue
      const output = part.state.output
      const result = { tool: part.tool, callID: part.callID, args }
      if (seen.type === "file") {
        lastFile = { uri: seen.uri, callId: seen.callId }
        events.push({
          type: "tool",
          run: (cp) => observeArtifact(cp, { uri: seen.uri, kind: "file", op: seen.op, callId: seen.callId, hash: hashOf(output) }),
          apply: (c) => c.onToolResult("ses_bench", result),
        })
      } else {
        events.push({
          type: "tool",
          run: (cp) => observeArtifact(cp, { uri: `cmd:${seen.callId}`, kind: "command", op: "run", command: seen.command, exitStatus: seen.exitStatus, callId: seen.callId }),
          apply: (c) => c.onToolResult("ses_bench", result),
        })
      }
    }
  }
  return events
}

/** The same events through SessionCheckpoints and memory.db, one transaction each, as the hooks run them. */
function persistedReplay(events: readonly Event[]): { medianMs: number; p99Ms: number; events: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-cp-"))
  const { db } = openDatabase(path.join(dir, "memory.db"))
  try {
    const store = new CheckpointStore(db)
    // Files are hashed from disk in the hooks; the bench's files do not exist, so hashing is skipped here.
    const checkpoints = new SessionCheckpoints({ store: () => store, directory: () => "/repo", diagnostics: new Diagnostics(new FakeHost()), preface: "", hash: () => "sha256:bench" })
    const samples: number[] = []
    for (const event of events) {
      const start = performance.now()
      event.apply(checkpoints)
      samples.push(performance.now() - start)
    }
    samples.sort((a, b) => a - b)
    return { medianMs: median(samples), p99Ms: samples[Math.floor(samples.length * 0.99)] ?? 0, events: samples.length }
  } finally {
    db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A checkpoint with every section beyond its cap and every value at full length, and its view's size. */
function cappedView(): { bytes: number; tokens: number; o200k: number; cl100k: number } {
  const long = (seed: string) => `${seed} `.repeat(200).slice(0, 400)
  let cp = observeUserMessage(emptyCheckpoint("ses_caps"), { messageId: "msg_1", text: long("task") })
  for (let i = 0; i < CHECKPOINT_CAPS.maxArtifacts; i++) {
    cp = observeArtifact(cp, { uri: `src/${long(`dir${i}`).replace(/ /g, "/")}.ts`, kind: "file", op: "edit", callId: `call_${i}`, hash: `sha256:${i.toString(16).padStart(16, "0")}` })
  }
  const uris = cp.artifacts.map((artifact) => artifact.uri)
  for (let i = 0; i < CHECKPOINT_CAPS.maxFacts; i++) {
    const result = applyUpdate(cp, { fact: { key: `fact.number.${i}`, value: long(`value${i}`), evidence: { source: "tool", ref: `call_${i}` }, depends_on: [uris[i]!] } })
    if (result.ok) cp = result.checkpoint
  }
  for (let i = 0; i < CHECKPOINT_CAPS.maxDecisions; i++) {
    const result = applyUpdate(cp, { decision: { id: `d${i}`, topic: `topic ${i}`, decision: long(`decision${i}`), rationale: long(`because${i}`), evidence: { source: "user", ref: "msg_1" } } })
    if (result.ok) cp = result.checkpoint
  }
  const result = applyUpdate(cp, { plan: Array.from({ length: CHECKPOINT_CAPS.maxPlanSteps }, (_, i) => ({ id: `step-${i}`, text: long(`step${i}`), done: i % 3 === 0 })) })
  if (result.ok) cp = result.checkpoint
  // Half the facts' files changed: both fact sections fill.
  const view = renderView(cp, (uri) => (uris.indexOf(uri) % 2 === 0 ? artifactOf(cp, uri)?.hash : "sha256:changed"))
  const bytes = Buffer.byteLength(view)
  return { bytes, tokens: estimateTokens(view), o200k: countO200k(view), cl100k: countCl100k(view) }
}

function hashOf(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`
}
