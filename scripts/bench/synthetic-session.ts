// One long synthetic session as OpenCode returns it, for the transcript and evidence benchmarks:
// seeded pseudo-random turns (user text, files, synthetic text, reasoning, tool calls with some long
// outputs and sub-agent results, assistant answers, a few errors and secrets) until the JSON
// reaches the target size. The messages are typed with the host's own message type, so this file
// also checks at compile time that the transcript's input types accept them.
import type { Hooks } from "@opencode-ai/plugin"

type HostMessages = Parameters<NonNullable<Hooks["experimental.chat.messages.transform"]>>[1]["messages"]
export type HostMessage = HostMessages[number]
type HostPart = HostMessage["parts"][number]
type HostToolState = Extract<HostPart, { type: "tool" }>["state"]

const WORDS = (
  "the a to of and in is for that it with on this test file function return const error value " +
  "config build session memory cache request response update deploy branch commit import export " +
  "timeout retry handler parse render module package script database query index schema migration"
).split(" ")

export function generateSession(seed: number, targetBytes: number): HostMessage[] {
  const random = seeded(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const prose = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(" ")
  const codeLines = (count: number) =>
    Array.from({ length: count }, (_, i) => `${String(i + 1).padStart(5)}\t  const ${pick(WORDS)}_${i} = ${pick(WORDS)}(${pick(WORDS)}, ${Math.floor(random() * 1000)})`).join("\n")

  const messages: HostMessage[] = []
  let bytes = 0
  for (let turn = 0; bytes < targetBytes; turn++) {
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
