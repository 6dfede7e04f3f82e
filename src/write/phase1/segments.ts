// A session's compactions cut its history into segments. Everything before a compaction is final
// the moment the compaction starts, so each closed segment is learned from on its own, at once,
// under its own record key (`<session>#<n>`, or `<session>#<n>.<part>` when a segment is larger
// than the extraction budget and is packed into parts at message boundaries). The session's own
// key keeps the open segment: what came after the last compaction. A compaction's summary is the
// model's retelling of a segment already learned from, so it belongs to no segment.
import type { TranscriptMessage } from "../transcript/transcript.js"

export { segmentKey, sessionOfKey } from "../../store/record-keys.js"

export interface Segment {
  /** 1 for the history before the first compaction, and so on. */
  ordinal: number
  /** When the compaction that closed it began (its message's creation time): the record's watermark. */
  closedAt: number
  messages: TranscriptMessage[]
}

export interface Segments {
  closed: Segment[]
  /** After the last compaction (the whole session when there was none). */
  open: TranscriptMessage[]
}

interface Info {
  role?: unknown
  summary?: unknown
  time?: { created?: unknown }
}

export function splitSegments(messages: readonly TranscriptMessage[]): Segments {
  const closed: Segment[] = []
  let current: TranscriptMessage[] = []
  for (const message of messages) {
    const info = (message?.info ?? {}) as Info
    if (info.role === "assistant" && info.summary === true) continue
    if (info.role === "user" && (message.parts ?? []).some((part) => part?.type === "compaction")) {
      const created = typeof info.time?.created === "number" ? info.time.created : 0
      // A boundary never moves backwards, even when a host's clock did.
      const closedAt = Math.max(created, closed.at(-1)?.closedAt ?? 0)
      closed.push({ ordinal: closed.length + 1, closedAt, messages: current })
      current = []
      continue
    }
    current.push(message)
  }
  return { closed, open: current }
}

/**
 * Packs messages, in order, into parts of at most `budgetTokens` as `measure` counts them. A
 * message is never split: one larger than the budget gets a part of its own, and the transcript
 * cut inside that part is the only cut its segment takes.
 */
export function packParts<T>(messages: readonly T[], budgetTokens: number, measure: (message: T) => number): T[][] {
  const parts: T[][] = []
  let current: T[] = []
  let size = 0
  for (const message of messages) {
    const tokens = measure(message)
    if (current.length && size + tokens > budgetTokens) {
      parts.push(current)
      current = []
      size = 0
    }
    current.push(message)
    size += tokens
  }
  if (current.length) parts.push(current)
  return parts
}
