// One session's messages, as `GET /session/{id}/message` returns them (oldest first), rendered into
// the compact text phase 1's extraction model reads. Pure: the same messages give the same bytes.
//
// The format, one entry per block, blocks separated by a blank line:
//
//   [user]
//   Why does `npm test` fail on CI?
//
//   [assistant]
//   Let me look at the workflow first.
//
//   [tool read] {"filePath":"/repo/.github/workflows/ci.yml"}
//   <output; past maxToolOutputChars its middle is cut: [... N characters cut ...]>
//
//   [tool bash] {"command":"npm test"}
//   error: <the error text>
//
//   [tool bash] {"command":"npm run dev"}
//   (never finished: running)
//
//   [file] screenshot.png (image/png)
//
//   [assistant error] MessageAbortedError: <message>
//
//   ---
//   [user]
//   <the next turn: every user message after the first entry opens with the `---` line>
//
// Agent and subtask parts are one line too (`[agent] explore`, `[subtask general] <description>`).
// Text parts that follow each other in one message share one label. Every entry carries its own
// label, so a budget cut at an entry boundary leaves a readable tail. What is left out, and why,
// is documented where it is decided (transcript-parts.ts, transcript-strip.ts).
import { redact } from "../../redact/redact.js"
import { estimateTokens } from "../../util/tokens.js"
import { BlockFitter } from "./block-fitter.js"
import type { OwnToolCall } from "./own-output.js"
import { messageErrorEntry, partEntry, partText, redactionTally, type PartContext, type Role, type TranscriptPart } from "./transcript-parts.js"

export type { TranscriptPart } from "./transcript-parts.js"

/** One element of the host's message list. Everything is optional: what is missing is skipped. */
export interface TranscriptMessage {
  readonly info?: { readonly role?: unknown; readonly error?: unknown; readonly time?: { readonly created?: unknown } }
  readonly parts?: readonly TranscriptPart[]
}

export interface TranscriptOptions {
  /** Token budget for the whole rendered transcript, in estimated tokens (token-estimate.ts). */
  maxTokens: number
  /** Longest tool output kept, in characters, before it is cut with a marker. */
  maxToolOutputChars?: number
  /** Longest tool input (compact JSON) kept, in characters, before it is cut with a marker. */
  maxToolInputChars?: number
  /** Text the plugin itself injected into conversations (the memory block), dropped wherever it appears. */
  injectedMarkers?: readonly string[]
  /** Rewrites each user text part before anything else (the seam for `<private>` handling). */
  transformUserText?: (text: string) => string
  /** Rewrites every rendered string, of any role, just before redaction (private text quoted back). */
  scrub?: (text: string) => string
  /** Tool calls whose result is memory's own text: each becomes one line naming the tool (own-output.ts). */
  ownTool?: OwnToolCall
}

export interface RenderedTranscript {
  text: string
  /** Secrets replaced, by class (from redact()), counted before any cut. */
  redactions: Record<string, number>
  /**
   * Messages and parts rendered and parts dropped by the rules above, all before the budget cut;
   * `truncated` says whether the budget cut the middle, `tokens` is the estimate of `text`.
   */
  stats: { messages: number; parts: number; dropped: number; truncated: boolean; tokens: number }
}

export const TRANSCRIPT_DEFAULTS = Object.freeze({
  /** Enough for a command's invocation and verdict; the rest of a long output rarely teaches anything. */
  MAX_TOOL_OUTPUT_CHARS: 2_000,
  /** Inputs matter less than outputs: a file written or an edit made shows again in what follows. */
  MAX_TOOL_INPUT_CHARS: 1_000,
})

const TURN_SEPARATOR = "---"

export function renderTranscript(messages: readonly TranscriptMessage[], options: TranscriptOptions): RenderedTranscript {
  const { redact: tally, counts: redactions } = redactionTally(options.scrub)
  const base = {
    maxToolOutputChars: options.maxToolOutputChars ?? TRANSCRIPT_DEFAULTS.MAX_TOOL_OUTPUT_CHARS,
    maxToolInputChars: options.maxToolInputChars ?? TRANSCRIPT_DEFAULTS.MAX_TOOL_INPUT_CHARS,
    // More characters than the budget holds of anything but long runs of spaces or tabs (the
    // estimate gives other text at most 8 characters a token), so this cut only bounds memory; the
    // margin keeps a secret split by it out of what is shown.
    maxTextChars: Math.max(0, Math.floor(options.maxTokens)) * 8 + 16_384,
    injectedMarkers: options.injectedMarkers ?? [],
    transformUserText: options.transformUserText,
    redact: tally,
    ownTool: options.ownTool,
  }
  const fitter = new BlockFitter(options.maxTokens)
  const stats = { messages: 0, parts: 0, dropped: 0 }
  for (const message of messages) {
    const role = message?.info?.role
    const parts = Array.isArray(message?.parts) ? message.parts : []
    if (role !== "user" && role !== "assistant") {
      stats.dropped += parts.length
      continue
    }
    const rendered = renderMessage(role, message.info?.error, parts, { ...base, role })
    stats.parts += rendered.kept
    stats.dropped += parts.length - rendered.kept
    if (!rendered.blocks.length) continue
    stats.messages++
    if (role === "user" && fitter.started) rendered.blocks[0] = `${TURN_SEPARATOR}\n${rendered.blocks[0]}`
    for (const block of rendered.blocks) fitter.add(block)
  }
  const fitted = fitter.finish()
  return { text: fitted.text, redactions, stats: { ...stats, truncated: fitted.truncated, tokens: estimateTokens(fitted.text) } }
}

function renderMessage(role: Role, error: unknown, parts: readonly TranscriptPart[], context: PartContext) {
  const blocks: string[] = []
  const texts: string[] = []
  const flushTexts = () => {
    if (texts.length) blocks.push(`[${role}]\n${texts.join("\n\n")}`)
    texts.length = 0
  }
  let kept = 0
  for (const part of parts) {
    if (typeof part !== "object" || part === null) continue
    if (part.type === "text") {
      const text = partText(part, context)
      if (text === undefined) continue
      texts.push(text)
    } else {
      const entry = partEntry(part, context)
      if (entry === undefined) continue
      flushTexts()
      blocks.push(entry)
    }
    kept++
  }
  flushTexts()
  const errorEntry = role === "assistant" ? messageErrorEntry(error, context) : undefined
  if (errorEntry) blocks.push(errorEntry)
  return { blocks, kept }
}
