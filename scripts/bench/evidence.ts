// Memory V2's evidence selection over one long session, side by side with V1's transcript render of
// the same messages at the same budget (Codex's 150,000-token fallback, 600,000 bytes): about 5 MB
// of messages as OpenCode returns them, with user text, assistant commentary and answers, tool
// calls (some with long outputs), sub-agent results, synthetic text, files and a few secrets.
//
// Target: V2 at most 2x V1's median. Both render every part the same way (transcript-parts.ts,
// redaction included, which dominates); V2 then does a second pass V1 has not (the tier-by-tier
// selection and the chunking), and cuts each row to its cap by bytes where V1 cuts by characters.
// Anything beyond twice V1 would mean that second pass is no longer linear.
import type { Hooks } from "@opencode-ai/plugin"
import { selectEvidence } from "../../src/write/evidence.js"
import { renderTranscript } from "../../src/write/transcript.js"
import { median, type BenchResult } from "./measure.js"

type HostMessages = Parameters<NonNullable<Hooks["experimental.chat.messages.transform"]>>[1]["messages"]
type HostMessage = HostMessages[number]
type HostPart = HostMessage["parts"][number]
type HostToolState = Extract<HostPart, { type: "tool" }>["state"]

const TARGET_BYTES = 5 * 1024 * 1024
const MAX_TOKENS = 150_000
const BUDGET_BYTES = MAX_TOKENS * 4
const CHUNK_BYTES = 8_900
const MAX_RATIO = 2
const ROUNDS = 9
const SEED = 20_260_303

export async function benchEvidence(): Promise<BenchResult> {
  const messages = generateSession()
  const bytes = Buffer.byteLength(JSON.stringify(messages))
  const parts = messages.reduce((sum, message) => sum + message.parts.length, 0)
  const v1 = () => renderTranscript(messages, { maxTokens: MAX_TOKENS })
  const v2 = () => selectEvidence(messages, { budgetBytes: BUDGET_BYTES, chunkBytes: CHUNK_BYTES })
  // Warm up both, then alternate them so that the machine's load falls on both alike.
  const firstV1 = v1()
  const firstV2 = v2()
  v1()
  v2()
  const samplesV1: number[] = []
  const samplesV2: number[] = []
  let identical = true
  for (let round = 0; round < ROUNDS; round++) {
    let start = performance.now()
    const rendered = v1()
    samplesV1.push(performance.now() - start)
    start = performance.now()
    const evidence = v2()
    samplesV2.push(performance.now() - start)
    identical &&= rendered.text === firstV1.text && evidence.chunks.join("") === firstV2.chunks.join("")
  }
  const medianV1 = median(samplesV1)
  const medianV2 = median(samplesV2)
  const chunkMax = Math.max(0, ...firstV2.chunks.map((chunk) => Buffer.byteLength(chunk)))
  const redacted = Object.values(firstV2.redactions).reduce((sum, count) => sum + count, 0)
  const range = (samples: readonly number[]) => `min ${Math.min(...samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`
  return {
    name: "evidence: V2 tiered selection of one ~5 MB session, against V1's transcript render",
    details: [
      `input         ${messages.length} messages, ${parts} parts, ${(bytes / 1024 / 1024).toFixed(1)} MB as JSON; budget ${MAX_TOKENS} tokens (${BUDGET_BYTES} bytes)`,
      `V1 render     ${(Buffer.byteLength(firstV1.text) / 1024).toFixed(0)} KB, ${firstV1.stats.truncated ? "middle cut" : "not cut"}; ${medianV1.toFixed(1)} ms median of ${ROUNDS} (${range(samplesV1)})`,
      `V2 evidence   ${(firstV2.bytes / 1024).toFixed(0)} KB in ${firstV2.chunks.length} chunks (largest ${chunkMax} bytes), ${firstV2.kept} rows kept, ` +
        `${firstV2.omitted} omitted, ${redacted} secrets redacted; ${medianV2.toFixed(1)} ms median of ${ROUNDS} (${range(samplesV2)})`,
    ],
    checks: [
      { kind: "condition", what: "same input, same bytes, for V1 and V2 alike", holds: identical },
      { kind: "condition", what: "V2 evidence within the budget and every chunk within 8,900 bytes", holds: firstV2.bytes > 0 && firstV2.bytes <= BUDGET_BYTES && chunkMax <= CHUNK_BYTES },
      { kind: "ratio", what: "V2 selectEvidence median", ratio: medianV2 / medianV1, baseline: "V1 renderTranscript of the same messages at the same budget", max: MAX_RATIO },
    ],
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
    if (turn % 10 === 3) userParts.push({ ...ids(turn, 1), type: "file", mime: "image/png", filename: `shot-${turn}.png`, url: "data:image/png;base64,AAAA" })
    if (turn % 7 === 2) userParts.push({ ...ids(turn, 5), type: "text", synthetic: true, text: `Called the Read tool with the following input: {"filePath":"notes-${turn}.md"}\n${codeLines(20)}` })
    const assistantParts: HostPart[] = [
      { ...ids(turn, 2), type: "step-start" },
      { ...ids(turn, 3), type: "reasoning", text: prose(100), time: { start: turn } },
      { ...ids(turn, 4), type: "text", text: prose(40 + Math.floor(random() * 60)) },
    ]
    const tools = 1 + Math.floor(random() * 3)
    for (let call = 0; call < tools; call++) {
      // Most outputs are short; one call in sixteen dumps a long file or log, one in twelve asks a sub-agent.
      const lines = random() < 0.0625 ? 150 + Math.floor(random() * 250) : 3 + Math.floor(random() * 25)
      const secret = turn % 50 === 7 && call === 0 ? "\nexport GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123456789\n" : ""
      const subagent = random() < 1 / 12
      const input = subagent ? { description: prose(5), prompt: prose(30), subagent_type: "explore" } : { command: `npm run ${pick(WORDS)} -- --filter ${pick(WORDS)}`, description: prose(6) }
      const time = { start: turn, end: turn + 1 }
      const state: HostToolState =
        random() < 0.1
          ? { status: "error", input, error: `Command failed with exit code 1\n${codeLines(8)}`, time }
          : { status: "completed", input, output: subagent ? prose(300) : codeLines(lines) + secret, title: prose(3), metadata: {}, time }
      assistantParts.push({ ...ids(turn, 10 + call), type: "tool", callID: `call_${turn}_${call}`, tool: subagent ? "task" : pick(["bash", "read", "grep"]), state })
    }
    assistantParts.push({ ...ids(turn, 19), type: "text", text: prose(30 + Math.floor(random() * 60)) })
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
