// Memory V2's evidence selection over one long session, side by side with V1's transcript render of
// the same messages at the same budget (Codex's 150,000-token fallback, 600,000 bytes): about 5 MB
// of messages as OpenCode returns them, with user text, assistant commentary and answers, tool
// calls (some with long outputs), sub-agent results, synthetic text, files and a few secrets.
//
// Target: V2 at most 2x V1's median. Both render every part the same way (transcript-parts.ts,
// redaction included, which dominates); V2 then does a second pass V1 has not (the tier-by-tier
// selection and the chunking), and cuts each row to its cap by bytes where V1 cuts by characters.
// Anything beyond twice V1 would mean that second pass is no longer linear.
import { selectEvidence } from "../../src/write/phase1/evidence.js"
import { renderTranscript } from "../../src/write/transcript/transcript.js"
import { median, type BenchResult } from "./measure.js"
import { generateSession } from "./synthetic-session.js"

const TARGET_BYTES = 5 * 1024 * 1024
const MAX_TOKENS = 150_000
const CHUNK_BYTES = 8_900
const MAX_RATIO = 2
const ROUNDS = 9
const SEED = 20_260_303

export async function benchEvidence(): Promise<BenchResult> {
  const messages = generateSession(SEED, TARGET_BYTES)
  const bytes = Buffer.byteLength(JSON.stringify(messages))
  const parts = messages.reduce((sum, message) => sum + message.parts.length, 0)
  const v1 = () => renderTranscript(messages, { maxTokens: MAX_TOKENS })
  const v2 = () => selectEvidence(messages, { budgetTokens: MAX_TOKENS, chunkBytes: CHUNK_BYTES })
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
      `input         ${messages.length} messages, ${parts} parts, ${(bytes / 1024 / 1024).toFixed(1)} MB as JSON; budget ${MAX_TOKENS} estimated tokens`,
      `V1 render     ${(Buffer.byteLength(firstV1.text) / 1024).toFixed(0)} KB, ${firstV1.stats.truncated ? "middle cut" : "not cut"}; ${medianV1.toFixed(1)} ms median of ${ROUNDS} (${range(samplesV1)})`,
      `V2 evidence   ${(firstV2.bytes / 1024).toFixed(0)} KB in ${firstV2.chunks.length} chunks (largest ${chunkMax} bytes), ${firstV2.kept} rows kept, ` +
        `${firstV2.omitted} omitted, ${redacted} secrets redacted; ${medianV2.toFixed(1)} ms median of ${ROUNDS} (${range(samplesV2)})`,
    ],
    checks: [
      { kind: "condition", what: "same input, same bytes, for V1 and V2 alike", holds: identical },
      { kind: "condition", what: "V2 evidence within the budget and every chunk within 8,900 bytes", holds: firstV2.bytes > 0 && firstV2.tokens <= MAX_TOKENS && chunkMax <= CHUNK_BYTES },
      { kind: "ratio", what: "V2 selectEvidence median", ratio: medianV2 / medianV1, baseline: "V1 renderTranscript of the same messages at the same budget", max: MAX_RATIO },
    ],
  }
}
