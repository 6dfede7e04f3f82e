// Peak memory of rendering a ~100 MB session for phase 1: the RSS high-water mark while
// renderTranscript runs, above the RSS with the messages already loaded. Each shape runs in a
// fresh process, so one shape's garbage never counts against another.
//
//   npm run build && node --expose-gc dist/scripts/check-transcript-memory.js [shape...] [--json]
//
// Shapes: "tools" (many tool calls with long outputs, the common heavy session), "text" (long
// user and assistant text parts, which are never cut per part), "unicode" (the same with one
// non-Latin-1 character a part, which makes V8 store those strings in two bytes a character),
// "paste" (one pasted 100 MB text part), "paste-unicode" (the same with one arrow in it: 200 MB
// as a V8 string). The target is a growth under 32 MB, a third of the input, so a render that
// copied the session even once would miss it (measured: about 3-14 MB); the exit code is 1 when a
// shape misses it.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { STAGE_ONE } from "../src/constants.js"
import { renderTranscript, type TranscriptMessage, type TranscriptPart } from "../src/write/transcript/transcript.js"

export const TARGET_GROWTH_MB = 32
/**
 * The flags each measuring process runs with. The young generation is pinned at Node 20's size:
 * Node 24's V8 sizes it by heuristics that let garbage reach 100 MB before a collection, which
 * measured the collector instead of the render (a copy of the session is live data either way).
 */
export const CHILD_FLAGS = ["--expose-gc", "--max-semi-space-size=16"] as const
const INPUT_BYTES = 100 * 1024 * 1024
const MB = 1024 * 1024

export interface Measurement {
  shape: string
  /** UTF-8 bytes of text in the messages, in MB. */
  inputMB: number
  baselineMB: number
  peakGrowthMB: number
  /** "hwm": Linux's VmHWM reset before the render; "maxrss": the process's lifetime peak, an upper bound. */
  method: "hwm" | "maxrss"
  renderMs: number
  outputTokens: number
}

const SHAPES: Record<string, () => TranscriptMessage[]> = {
  tools: () => session((turn) => [text(`why does step ${turn} fail?`)], (turn) => [text(`checking step ${turn}`), tool(turn, 16 * 1024)]),
  text: () => session((turn) => [text(prose(turn, 8 * 1024))], (turn) => [text(prose(turn + 1, 12 * 1024))]),
  unicode: () => session((turn) => [text(flat(`${prose(turn, 8 * 1024)} →`))], (turn) => [text(flat(`${prose(turn + 1, 12 * 1024)} ✓`))]),
  paste: () => [message("user", [text(prose(1, INPUT_BYTES))]), message("assistant", [text("That is a long log.")])],
  "paste-unicode": () => [message("user", [text(flat(`→ ${prose(1, INPUT_BYTES)}`))]), message("assistant", [text("That is a long log.")])],
}

/** Turns of `user` and `assistant` parts until the text in them reaches INPUT_BYTES. */
function session(user: (turn: number) => TranscriptPart[], assistant: (turn: number) => TranscriptPart[]): TranscriptMessage[] {
  const messages: TranscriptMessage[] = []
  for (let turn = 0, bytes = 0; bytes < INPUT_BYTES; turn++) {
    const pair = [message("user", user(turn)), message("assistant", assistant(turn))]
    bytes += pair.reduce((sum, m) => sum + textBytes(m), 0)
    messages.push(...pair)
  }
  return messages
}

/** UTF-8 bytes of a message's text parts and tool outputs. */
function textBytes(m: TranscriptMessage): number {
  const strings = (m.parts ?? []).flatMap((p) => [p.text, (p.state as { output?: unknown } | undefined)?.output])
  return strings.reduce<number>((sum, value) => sum + (typeof value === "string" ? Buffer.byteLength(value) : 0), 0)
}

const message = (role: string, parts: TranscriptPart[]): TranscriptMessage => ({ info: { role }, parts })
const text = (value: string): TranscriptPart => ({ type: "text", text: value })
const tool = (turn: number, outputBytes: number): TranscriptPart => ({
  type: "tool",
  tool: "bash",
  state: { status: "completed", input: { command: `npm test -- --shard ${turn}` }, output: prose(turn, outputBytes) },
})

/** ASCII prose of `bytes` characters, lines of varying words; different per seed. */
function prose(seed: number, bytes: number): string {
  const words = ["build", "test", "error", "module", "config", "deploy", "cache", "schema", "request", "handler"]
  const line = Array.from({ length: 12 }, (_, i) => words[(seed + i * 7) % words.length]).join(" ") + ` ${seed}\n`
  return Buffer.alloc(bytes, line).toString("utf8")
}

/**
 * The string as one flat copy, as JSON.parse hands strings over: a concatenation would otherwise
 * be flattened inside the render, and that copy counted against it.
 */
function flat(text: string): string {
  return Buffer.from(text).toString("utf8")
}

function rssMB(): number {
  return process.memoryUsage.rss() / MB
}

/** Resets the kernel's RSS high-water mark (Linux 4.0+); false where that is not possible. */
function resetPeak(): boolean {
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5")
    return true
  } catch {
    return false
  }
}

function peakMB(method: "hwm" | "maxrss"): number {
  if (method === "hwm") {
    const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1]
    if (kb) return Number(kb) / 1024
  }
  return process.resourceUsage().maxRSS / 1024
}

function measure(shape: string): Measurement {
  const build = SHAPES[shape]
  if (!build) throw new Error(`unknown shape ${shape}; one of ${Object.keys(SHAPES).join(", ")}`)
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error("run with node --expose-gc")
  const messages = build()
  const inputMB = messages.reduce((sum, m) => sum + textBytes(m), 0) / MB
  gc()
  gc()
  const method = resetPeak() ? "hwm" : "maxrss"
  const baselineMB = rssMB()
  const started = performance.now()
  const rendered = renderTranscript(messages, { maxTokens: STAGE_ONE.DEFAULT_TRANSCRIPT_TOKENS })
  const renderMs = performance.now() - started
  const peakGrowthMB = peakMB(method) - baselineMB
  // Keep the input alive to the end, so the baseline's memory stays in the peak as well.
  if (messages.length === 0) throw new Error("no messages")
  return { shape, inputMB, baselineMB, peakGrowthMB, method, renderMs, outputTokens: rendered.stats.tokens }
}

/** Measures each shape in a fresh `node --expose-gc` of this script, compiled (npm run build). */
export function measureInChildren(shapes: readonly string[] = Object.keys(SHAPES)): Measurement[] {
  const self = fileURLToPath(import.meta.url).replace(/\.ts$/, ".js")
  return shapes.map((shape) => {
    const child = spawnSync(process.execPath, [...CHILD_FLAGS, self, shape, "--json"], { encoding: "utf8", maxBuffer: 1024 * 1024, timeout: 120_000 })
    const line = child.stdout.trim().split("\n").at(-1) ?? ""
    if (!line.startsWith("{")) throw new Error(`shape ${shape} failed (status ${child.status}):\n${child.stderr}`)
    return JSON.parse(line) as Measurement
  })
}

function main(): void {
  const args = process.argv.slice(2)
  const json = args.includes("--json")
  const shapes = args.filter((arg) => arg !== "--json")
  // One shape: measure it here. None or several: one fresh child process each.
  if (shapes.length === 1) {
    const result = measure(shapes[0]!)
    console.log(json ? JSON.stringify(result) : describe(result))
    process.exitCode = result.peakGrowthMB < TARGET_GROWTH_MB ? 0 : 1
    return
  }
  let ok = true
  for (const result of measureInChildren(shapes.length ? shapes : undefined)) {
    ok &&= result.peakGrowthMB < TARGET_GROWTH_MB
    console.log(json ? JSON.stringify(result) : describe(result))
  }
  process.exitCode = ok ? 0 : 1
}

function describe(m: Measurement): string {
  const verdict = m.peakGrowthMB < TARGET_GROWTH_MB ? "ok" : "OVER"
  return (
    `${m.shape.padEnd(6)} input ${m.inputMB.toFixed(0)} MB of text, baseline RSS ${m.baselineMB.toFixed(0)} MB, ` +
    `peak growth ${m.peakGrowthMB.toFixed(0)} MB (${m.method}; target < ${TARGET_GROWTH_MB}) ${verdict}, ` +
    `render ${m.renderMs.toFixed(0)} ms, ${m.outputTokens} tokens out`
  )
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url))) main()
