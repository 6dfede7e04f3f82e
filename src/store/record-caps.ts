// The most a model's answer may put in one record. Without a cap one runaway answer (megabytes of
// raw memory) is stored whole, written whole into raw_memories.md, and crowds every other session
// out of the consolidator's reads. A field over its cap keeps its head and its tail, with a marker
// saying how much of the middle went; the marker counts against the cap.
import { READ_PATH } from "../constants.js"
import { truncateMiddleCodex } from "../util/tokens.js"

/**
 * Codex's V2 cap on a rollout summary (phase1_output.rs), used for both versions' summaries. The V1
 * prompt asks for about 400 words, some 2,500 bytes: the cap only stops a runaway.
 */
export const ROLLOUT_SUMMARY_MAX_BYTES = 9_000
/**
 * Codex has no cap on V1's raw memory. 12,000 bytes is several times what the prompt's short
 * bullets come to, and four such records still fit in one OpenCode read of raw_memories.md (50 KB).
 */
export const RAW_MEMORY_MAX_BYTES = 12_000
/** Room kept for the cut marker, so that a cut field stays within its cap. */
const CUT_RESERVE_BYTES = 96

/** `text` within `maxBytes` UTF-8 bytes: unchanged when it fits, else its middle cut on character boundaries. */
export function capBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text
  return truncateMiddleCodex(text, (maxBytes - CUT_RESERVE_BYTES) / READ_PATH.BYTES_PER_TOKEN)
}

export interface CappedRecord {
  rawMemory: string
  rolloutSummary: string
  /** The fields that were cut, each with the bytes the model gave: for the log. */
  cuts: ReadonlyArray<{ field: "raw_memory" | "rollout_summary"; bytes: number }>
}

/** Both fields of a record within their caps. */
export function capRecord(rawMemory: string, rolloutSummary: string): CappedRecord {
  const cuts: Array<CappedRecord["cuts"][number]> = []
  const cap = (field: "raw_memory" | "rollout_summary", text: string, max: number) => {
    const capped = capBytes(text, max)
    if (capped !== text) cuts.push({ field, bytes: Buffer.byteLength(text, "utf8") })
    return capped
  }
  return { rawMemory: cap("raw_memory", rawMemory, RAW_MEMORY_MAX_BYTES), rolloutSummary: cap("rollout_summary", rolloutSummary, ROLLOUT_SUMMARY_MAX_BYTES), cuts }
}
