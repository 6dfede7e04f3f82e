// `<private>` handling for one session's transcript. The spans are found in the user's text parts
// first (and in any other text the caller names, such as the session's title), so that the same
// text is also removed where the assistant or a tool repeats it later (the model answering the
// user saw it, and may quote it) or where OpenCode's title agent copied it. The messages
// themselves are only read.
import { echoPieces, removeEchoes, stripPrivate } from "../../redact/private.js"
import type { TranscriptMessage } from "./transcript.js"

export interface PrivateFilter {
  /** For TranscriptOptions.transformUserText: cuts the spans out of one user text part. */
  transformUserText: (text: string) => string
  /** For TranscriptOptions.scrub: removes repeats of hidden text from any rendered string. */
  scrub: (text: string) => string
  /** Spans cut so far by transformUserText. */
  removed: () => number
}

export function privateFilter(messages: readonly TranscriptMessage[], alsoFrom: readonly string[] = []): PrivateFilter {
  const spans: string[] = alsoFrom.flatMap((text) => stripPrivate(text).spans)
  for (const message of messages) {
    if (message?.info?.role !== "user" || !Array.isArray(message.parts)) continue
    for (const part of message.parts) {
      if (part?.type === "text" && typeof part.text === "string") spans.push(...stripPrivate(part.text).spans)
    }
  }
  const pieces = echoPieces(spans)
  let removed = 0
  return {
    transformUserText: (text) => {
      const stripped = stripPrivate(text)
      removed += stripped.spans.length
      return stripped.text
    },
    scrub: (text) => (pieces.length ? removeEchoes(text, pieces) : text),
    removed: () => removed,
  }
}
