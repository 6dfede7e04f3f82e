// One OpenCode message part -> its piece of the transcript, or nothing. Parts arrive as JSON from
// the host, so every field is checked before use and a part missing what it needs is skipped.
import { extractCitations } from "../../read/citations.js"
import { redact } from "../../redact/redact.js"
import { ownToolLine, type OwnToolCall } from "./own-output.js"
import { cutChars } from "./transcript-cut.js"
import { stripInjected } from "./transcript-strip.js"

/** A part as far as the transcript reads it: its `type` and whichever fields that type has. */
export type TranscriptPart = { readonly type?: unknown; readonly [field: string]: unknown }

export type Role = "user" | "assistant"

export interface PartContext {
  role: Role
  maxToolOutputChars: number
  maxToolInputChars: number
  /** Text parts are cut to this many characters before redaction: no more can be shown. */
  maxTextChars: number
  injectedMarkers: readonly string[]
  transformUserText: ((text: string) => string) | undefined
  /** Replaces secrets and tallies them; every rendered string goes through it. */
  redact: (text: string) => string
  /** Tool calls whose result is memory's own text (own-output.ts): shown as one line, nothing of them copied. */
  ownTool?: OwnToolCall | undefined
}

/** One-line values (names, descriptions, error messages) are capped at this many characters. */
const LINE_MAX_CHARS = 200

/**
 * The cleaned text of a text part, or undefined when it is dropped: text OpenCode added on the
 * user's behalf (`synthetic`) or left out of the conversation (`ignored`), and text that is empty
 * once the plugin's own text and citation blocks are gone.
 */
export function partText(part: TranscriptPart, context: PartContext): string | undefined {
  if (part.synthetic === true || part.ignored === true) return undefined
  const raw = str(part.text)
  if (raw === undefined) return undefined
  // The seam for user-side filtering such as <private> spans: applied before anything else.
  const own = context.role === "user" && context.transformUserText ? context.transformUserText(raw) : raw
  const text = trimBlankEdges(extractCitations(stripInjected(own, context.injectedMarkers)).text)
  return text ? context.redact(cutChars(text, context.maxTextChars, true)) : undefined
}

/**
 * The entry of a non-text part, or undefined when the part is dropped. Reasoning, step-start,
 * step-finish, snapshot, patch, retry and compaction parts carry nothing the extraction model needs
 * (thinking, bookkeeping, retried requests), and unknown types from newer hosts are skipped alike.
 */
export function partEntry(part: TranscriptPart, context: PartContext): string | undefined {
  switch (part.type) {
    case "tool":
      return toolEntry(part, context)
    case "file":
      return fileEntry(part, context)
    case "agent": {
      const name = str(part.name)
      return name ? `[agent] ${line(name, context)}` : undefined
    }
    case "subtask": {
      const agent = str(part.agent)
      const about = str(part.description) || str(part.prompt)
      if (!agent && !about) return undefined
      return `[subtask${agent ? ` ${line(agent, context)}` : ""}]${about ? ` ${line(about, context)}` : ""}`
    }
    default:
      return undefined
  }
}

/** One line for an assistant message that ended in an error (aborted, output too long, API error). */
export function messageErrorEntry(error: unknown, context: PartContext): string | undefined {
  const fields = record(error)
  if (!fields) return undefined
  const name = str(fields.name) || "error"
  const message = str(record(fields.data)?.message)
  return `[assistant error] ${line(name, context)}${message ? `: ${line(message, context)}` : ""}`
}

function toolEntry(part: TranscriptPart, context: PartContext): string {
  const tool = str(part.tool) || "unknown"
  const name = line(tool, context)
  const state = record(part.state) ?? {}
  if (context.ownTool?.(tool, state.input)) return ownToolLine(name)
  const input = toolInput(state.input, context)
  return `[tool ${name}]${input ? ` ${input}` : ""}\n${toolResult(state, context)}`
}

/** Compact JSON on one line, secrets redacted before the cut so that no partial secret survives it. */
function toolInput(input: unknown, context: PartContext): string {
  if (input === undefined) return ""
  let json: string
  try {
    json = JSON.stringify(input) ?? ""
  } catch {
    json = "(input not serialisable)"
  }
  if (json === "{}") return ""
  return cutChars(context.redact(json), context.maxToolInputChars, true)
}

function toolResult(state: Readonly<Record<string, unknown>>, context: PartContext): string {
  const status = str(state.status)
  if (status === "completed") {
    const output = stripInjected(str(state.output) ?? "", context.injectedMarkers).trimEnd()
    return output ? cutChars(context.redact(output), context.maxToolOutputChars) : "(no output)"
  }
  if (status === "error") {
    const error = (str(state.error) ?? "").trim()
    return `error: ${error ? cutChars(context.redact(error), context.maxToolOutputChars) : "(no message)"}`
  }
  return `(never finished${status ? `: ${line(status, context)}` : ""})`
}

/** A mention only: the content of an attached file is never copied (a data: URL is the file). */
function fileEntry(part: TranscriptPart, context: PartContext): string {
  const url = str(part.url)
  const name = str(part.filename) || str(record(part.source)?.path) || (url && !url.startsWith("data:") ? url : "") || "(unnamed)"
  const mime = str(part.mime)
  return `[file] ${line(name, context)}${mime ? ` (${line(mime, context)})` : ""}`
}

/** Whitespace collapsed to single spaces, redacted, capped. */
function line(text: string, context: PartContext): string {
  return cutChars(context.redact(text.replace(/\s+/g, " ").trim()), LINE_MAX_CHARS, true)
}

/** Drops blank lines at the start and whitespace at the end, keeping the first line's indent. */
function trimBlankEdges(text: string): string {
  return text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd()
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined
}

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
}

/**
 * The redaction step every rendered string goes through (after `scrub`, the private-text seam),
 * with the counts by class it keeps for the audit. One per rendering.
 */
export function redactionTally(scrub: ((text: string) => string) | undefined): { redact: (text: string) => string; counts: Record<string, number> } {
  const counts: Record<string, number> = {}
  return {
    counts,
    redact: (text) => {
      const result = redact(scrub ? scrub(text) : text)
      for (const [name, count] of Object.entries(result.counts)) counts[name] = (counts[name] ?? 0) + count
      return result.text
    },
  }
}
