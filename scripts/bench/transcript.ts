// Rendering one long session for phase 1: about 5 MB of messages as OpenCode returns them
// (synthetic-session.ts), rendered to Codex's 150,000-token fallback budget.
import { renderTranscript } from "../../src/write/transcript/transcript.js"
import { median, type BenchResult } from "./measure.js"
import { generateSession } from "./synthetic-session.js"

const TARGET_BYTES = 5 * 1024 * 1024
const TARGET_MS = 500
const MAX_TOKENS = 150_000
const ROUNDS = 9
const SEED = 20_260_301

export async function benchTranscript(): Promise<BenchResult> {
  const messages = generateSession(SEED, TARGET_BYTES)
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
