// The citation loop: strip <memory-citation> blocks from what is shown and stored, and turn them
// into usage counts, once per assistant text part. Usage lives only in the database; nothing here
// touches the memory folder, so a citation alone never gives phase 2 a reason to run.
import { createHash } from "node:crypto"
import { redactText } from "../redact/redact.js"
import type { CitedRange } from "../store/memory-store.js"
import { extractCitations, hasCitation, type Citation } from "./citations.js"

/**
 * Where counted citations go: the catalog's once-per-part record, then the cited sessions' usage
 * in the citing session's memory version. Returns false for a part already counted.
 */
export interface CitationSink {
  recordCitation(partId: string, citingSession: string | undefined, sessionIds: readonly string[], files: readonly CitedRange[]): boolean
}

export interface CitationUsageDeps {
  /** The sink once the database is open; citations seen before that are stripped but not counted. */
  sink: () => CitationSink | undefined
  onError: (error: unknown) => void
}

interface TextPartLike {
  id?: string
  sessionID?: string
  type?: string
  text?: string
}

interface MessageLike {
  info: { role?: string; sessionID?: string }
  parts: TextPartLike[]
}

export class CitationUsage {
  constructor(private readonly deps: CitationUsageDeps) {}

  /** `experimental.text.complete`: the final text of one part, before OpenCode stores it. */
  completeText(sessionId: string, partId: string, text: string): string {
    if (!hasCitation(text)) return text
    const parsed = extractCitations(text)
    this.record(partId, sessionId, parsed.citation)
    return parsed.text
  }

  /**
   * `experimental.chat.messages.transform`: blocks still in history (older hosts, or a reply
   * stored before the plugin was installed) are stripped from what the model sees, and counted
   * if they never were.
   */
  stripHistory(messages: MessageLike[]): void {
    for (const message of messages) {
      if (message.info.role !== "assistant") continue
      for (const part of message.parts) {
        if (part.type !== "text" || typeof part.text !== "string" || !hasCitation(part.text)) continue
        const parsed = extractCitations(part.text)
        if (part.id) this.record(part.id, part.sessionID ?? message.info.sessionID, parsed.citation)
        part.text = parsed.text
      }
    }
  }

  /**
   * A reply's text on a host that keeps citation blocks in stored replies for its own UI
   * (OpenCode 2): returned without the blocks, and counted once, keyed by the session and the
   * text itself, so every place the same reply is seen (its end event, each later request that
   * carries it) counts it at most once.
   */
  storedText(sessionId: string, text: string): string {
    if (!hasCitation(text)) return text
    const parsed = extractCitations(text)
    this.record(`stored:${sessionId}:${createHash("sha256").update(text).digest("hex").slice(0, 32)}`, sessionId, parsed.citation)
    return parsed.text
  }

  /** `message.part.updated`: a fallback counter for finished parts the other hooks missed. */
  observePart(part: TextPartLike & { time?: { end?: number } }): void {
    if (part.type !== "text" || !part.id || typeof part.text !== "string" || !part.time?.end) return
    if (!hasCitation(part.text)) return
    this.record(part.id, part.sessionID, extractCitations(part.text).citation)
  }

  private record(partId: string, sessionId: string | undefined, citation: Citation | undefined): void {
    if (!citation || (citation.entries.length === 0 && citation.sessionIds.length === 0)) return
    const sink = this.deps.sink()
    if (!sink) return
    try {
      // The path is whatever the model wrote: redacted before it is stored, like any text from the host.
      const files: CitedRange[] = citation.entries.map((entry) => ({ path: redactText(entry.path), start: entry.start, end: entry.end }))
      sink.recordCitation(partId, sessionId, citation.sessionIds, files)
    } catch (error) {
      this.deps.onError(error)
    }
  }
}
