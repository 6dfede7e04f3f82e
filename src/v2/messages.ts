// OpenCode 2's stored messages -> the message shape the write path reads (OpenCode 1's
// `{ info, parts }`), so one transcript renderer and one evidence selector serve both hosts.
// V2 tags each message by `type` and keeps an assistant's text, reasoning and tool calls in
// `content`; everything arrives as JSON from the host, so each field is checked before use and a
// message of a type the write path has no use for (agent or model switches, turn ends) is
// dropped; a compaction becomes the boundary V1 marks with a compaction part. Pure.
import type { TranscriptMessage, TranscriptPart } from "../write/transcript/transcript.js"

export function toTranscriptMessages(messages: readonly unknown[]): TranscriptMessage[] {
  const out: TranscriptMessage[] = []
  for (const value of messages) {
    const message = record(value)
    if (!message) continue
    const converted = convert(message)
    if (converted) out.push(converted)
  }
  return out
}

function convert(message: Readonly<Record<string, unknown>>): TranscriptMessage | undefined {
  const id = str(message.id)
  // When it was said: a reset or a forget leaves out what came before it (extraction-job.ts).
  const created = num(record(message.time)?.created)
  const time = created === undefined ? {} : { time: { created } }
  switch (message.type) {
    case "user": {
      const parts: TranscriptPart[] = []
      const text = str(message.text)
      if (text) parts.push({ type: "text", text, ...(id ? { id } : {}) })
      for (const file of list(message.files)) {
        const f = record(file)
        // A user's file: { data, mime, name?, source: { type: "uri", uri } | { type: "inline" } } (schema session-message.ts).
        if (f) parts.push({ type: "file", filename: str(f.name) ?? str(record(f.source)?.uri) ?? str(f.uri) ?? "", mime: str(f.mime) ?? "" })
      }
      return parts.length ? { info: { role: "user", ...time }, parts } : undefined
    }
    // Text OpenCode adds on the user's behalf, as V1 marks its synthetic parts.
    case "synthetic": {
      const text = str(message.text)
      return text ? { info: { role: "user", ...time }, parts: [{ type: "text", text, synthetic: true }] } : undefined
    }
    case "assistant": {
      const parts = list(message.content).flatMap((item) => assistantPart(record(item)))
      const error = record(message.error)
      const info = error ? { role: "assistant", ...time, error: { name: str(error.name) ?? str(error.type) ?? "error", data: { message: str(error.message) ?? "" } } } : { role: "assistant", ...time }
      return parts.length || error ? { info, parts } : undefined
    }
    // A compaction is a segment boundary (src/write/phase1/segments.ts); its summary is the model's
    // retelling of what came before, so only the boundary is kept. A failed one cut nothing.
    case "compaction": {
      if (message.status === "failed") return undefined
      return { info: { role: "user", ...time }, parts: [{ type: "compaction" }] }
    }
    default:
      return undefined
  }
}

function assistantPart(item: Readonly<Record<string, unknown>> | undefined): TranscriptPart[] {
  if (!item) return []
  if (item.type === "text") {
    const text = str(item.text)
    return text ? [{ type: "text", text }] : []
  }
  if (item.type === "tool") {
    const state = record(item.state) ?? {}
    const status = str(state.status)
    const input = parseInput(state.input)
    const output = contentText(state.content)
    const toolState =
      status === "completed"
        ? { status, input, output }
        : status === "error"
          ? { status, input, error: str(state.error) ?? str(record(state.error)?.message) ?? output }
          : { status: status ?? "pending", input }
    return [{ type: "tool", tool: str(item.name) ?? "unknown", callID: str(item.id) ?? "", state: toolState }]
  }
  // Reasoning and anything newer carry nothing the extraction needs, as in V1.
  return []
}

/** V2 streams a tool's input as JSON text; a value that does not parse is kept as the text. */
function parseInput(input: unknown): unknown {
  if (typeof input !== "string") return input
  try {
    return JSON.parse(input)
  } catch {
    return input
  }
}

/** Tool content is a list of parts; their text, joined. Files are named, never copied. */
function contentText(content: unknown): string {
  return list(content)
    .map((part) => {
      const p = record(part)
      if (p?.type === "text") return str(p.text) ?? ""
      if (p?.type === "file") return `[file] ${str(p.name) ?? str(p.uri) ?? ""}`
      return ""
    })
    .filter(Boolean)
    .join("\n")
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : []
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined
}

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}
