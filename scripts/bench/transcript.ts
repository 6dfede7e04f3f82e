// Rendering one long session for phase 1: about 5 MB of messages as OpenCode returns them (text,
// reasoning, step markers, tool calls with long outputs, a few errors and secrets), rendered to
// Codex's 150,000-token fallback budget. The messages are typed with the host's own message type,
// so this file also checks at compile time that the transcript's input types accept it.
import type { Hooks } from "@opencode-ai/plugin"
import { renderTranscript } from "../../src/write/transcript.js"
import { median, type BenchResult } from "./measure.js"

type HostMessages = Parameters<NonNullable<Hooks["experimental.chat.messages.transform"]>>[1]["messages"]
type HostMessage = HostMessages[number]
type HostPart = HostMessage["parts"][number]

const TARGET_BYTES = 5 * 1024 * 1024
const TARGET_MS = 500
const MAX_TOKENS = 150_000
const ROUNDS = 9
const SEED = 20_260_301

export async function benchTranscript(): Promise<BenchResult> {
  const messages = generateSession()
  const bytes = Buffer.byteLength(JSON.stringify(messages))
  const parts = messages.reduce((sum, message) => sum + message.parts.length, 0)
  const render = () => renderTranscript(messages, { maxTokens: MAX_TOKENS })
  // Warm up, then time each render on its own.
  const first = render()
  render()
  const samples: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now()
    const rendered = render()
    samples.push(performance.now() - start)
    if (rendered.text !== first.text) throw new Error("benchmark: two renders of the same session differ")
  }
  const medianMs = median(samples)
  const redacted = Object.values(first.redactions).reduce((sum, count) => sum + count, 0)
  return {
    name: "transcript: render one ~5 MB session for phase 1",
    details: [
      `input         ${messages.length} messages, ${parts} parts, ${(bytes / 1024 / 1024).toFixed(1)} MB as JSON`,
      `output        ${(Buffer.byteLength(first.text) / 1024).toFixed(0)} KB, ${first.stats.tokens} tokens (budget ${MAX_TOKENS}), ` +
        `${first.stats.truncated ? "middle cut" : "not cut"}, ${first.stats.dropped} parts dropped, ${redacted} secrets redacted`,
      `render        ${medianMs.toFixed(1)} ms median of ${ROUNDS} (min ${Math.min(...samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)})`,
    ],
    checks: [{ kind: "absolute", what: "median render of the 5 MB session", value: medianMs, unit: "ms", max: TARGET_MS }],
  }
}

// ---- The session: seeded pseudo-random turns until the JSON reaches TARGET_BYTES. ----

const WORDS = (
  "the a to of and in is for that it with on this test file function return const error value " +
  "config build session memory cache request response update deploy branch commit import export " +
  "timeout retry handler parse render module package script database query index schema migration"
).split(" ")

function generateSession(): HostMessage[] {
  const random = seeded(SEED)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const prose = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(" ")
  const codeLines = (count: number) =>
    Array.from({ length: count }, (_, i) => `${String(i + 1).padStart(5)}\t  const ${pick(WORDS)}_${i} = ${pick(WORDS)}(${pick(WORDS)}, ${Math.floor(random() * 1000)})`).join("\n")

  const messages: HostMessage[] = []
  let bytes = 0
  for (let turn = 0; bytes < TARGET_BYTES; turn++) {
    const userParts: HostPart[] = [{ ...ids(turn, 0), type: "text", text: `${prose(20 + Math.floor(random() * 80))}?` }]
    if (turn % 10 === 3) userParts.push({ ...ids(turn, 1), type: "file", mime: "text/plain", filename: `notes-${turn}.txt`, url: "data:text/plain;base64,AAAA" })
    const assistantParts: HostPart[] = [
      { ...ids(turn, 2), type: "step-start" },
      { ...ids(turn, 3), type: "reasoning", text: prose(100), time: { start: turn } },
      { ...ids(turn, 4), type: "text", text: prose(40 + Math.floor(random() * 60)) },
    ]
    const tools = 1 + Math.floor(random() * 3)
    for (let call = 0; call < tools; call++) {
      // Most outputs are short; one call in sixteen dumps a long file or log.
      const lines = random() < 0.0625 ? 150 + Math.floor(random() * 250) : 3 + Math.floor(random() * 25)
      const secret = turn % 50 === 7 && call === 0 ? "\nexport GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123456789\n" : ""
      const input = { command: `npm run ${pick(WORDS)} -- --filter ${pick(WORDS)}`, description: prose(6) }
      const time = { start: turn, end: turn + 1 }
      const state: HostToolState =
        random() < 0.1
          ? { status: "error", input, error: `Command failed with exit code 1\n${codeLines(8)}`, time }
          : { status: "completed", input, output: codeLines(lines) + secret, title: input.description, metadata: {}, time }
      assistantParts.push({ ...ids(turn, 10 + call), type: "tool", callID: `call_${turn}_${call}`, tool: pick(["bash", "read", "grep"]), state })
    }
    assistantParts.push({ ...ids(turn, 20), type: "step-finish", reason: "stop", cost: 0, tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } })
    const pair: HostMessage[] = [
      { info: userInfo(turn), parts: userParts },
      { info: assistantInfo(turn), parts: assistantParts },
    ]
    for (const message of pair) {
      messages.push(message)
      bytes += Buffer.byteLength(JSON.stringify(message))
    }
  }
  return messages
}

type HostToolState = Extract<HostPart, { type: "tool" }>["state"]

function ids(turn: number, part: number) {
  return { id: `prt_${turn}_${part}`, sessionID: "ses_bench", messageID: `msg_${turn}` }
}

function userInfo(turn: number): HostMessage["info"] {
  return { id: `msg_${turn}_u`, sessionID: "ses_bench", role: "user", time: { created: turn }, agent: "build", model: { providerID: "p", modelID: "m" } }
}

function assistantInfo(turn: number): HostMessage["info"] {
  return {
    id: `msg_${turn}_a`,
    sessionID: "ses_bench",
    role: "assistant",
    time: { created: turn, completed: turn + 1 },
    parentID: `msg_${turn}_u`,
    modelID: "m",
    providerID: "p",
    mode: "build",
    path: { cwd: "/repo", root: "/repo" },
    cost: 0,
    tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
  }
}

/** A linear congruential generator: the same seed gives the same session on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}
