// Memory V2's extraction input: one session's messages turned into labelled rows, each row given
// a tier by who said it, and the rows chosen tier by tier until the budget is spent. V1 keeps the
// head and the tail of the whole transcript (transcript.ts); V2 keeps what the user said and what
// the assistant concluded first, and lets tool output go first when the session is too long.
//
// A row is one rendered piece of a message, rendered by transcript-parts.ts (the same private
// scrub, injected-block and citation stripping and redaction as V1), then labelled:
//
//   [human user]            the user's own text (an attached image or audio file as a placeholder
//                           in it, as Codex has them), and their answers to the assistant's question tool
//   [assistant final]       the assistant's last text before the user speaks again (or the session ends)
//   [assistant commentary]  every other assistant text
//   [other agent]           agent and subtask parts, and what a sub-agent (the task tool) returned
//   [context]               text OpenCode added itself (synthetic), compaction summaries, other files, errors
//   [tool <name>]           a tool call with its result
//
// The selection takes the tiers in that priority order (human, final, other agent, commentary,
// context, tool), newest rows first within a tier, and renders what it took in chronological
// order, one marker line standing for each run of rows left out. The rendering is then split into
// chunks of at most `chunkBytes` UTF-8 bytes, at row boundaries where it can: the extractor gets
// them as separate text parts. Pure: the same messages give the same bytes.
//
// The budget is estimated tokens (token-estimate.ts), as the model counts them; the caps of a row
// and a chunk are Codex's, in bytes, as Codex has them.
import { READ_PATH } from "../../constants.js"
import { redact } from "../../redact/redact.js"
import { estimateTokens, truncateMiddle, truncateMiddleCodex } from "../../util/tokens.js"
import type { OwnToolCall } from "../transcript/own-output.js"
import { messageErrorEntry, partEntry, partText, redactionTally, type PartContext, type TranscriptPart } from "../transcript/transcript-parts.js"
import { TRANSCRIPT_DEFAULTS, type TranscriptMessage } from "../transcript/transcript.js"

export type EvidenceTier = "human" | "final" | "other_agent" | "commentary" | "context" | "tool"

export interface EvidenceOptions {
  /** Budget for the whole rendering, in estimated tokens. */
  budgetTokens: number
  /** Largest chunk, in UTF-8 bytes (at least 4, so that any character fits). */
  chunkBytes?: number
  /** Text the plugin itself injected into conversations (the memory block), dropped wherever it appears. */
  injectedMarkers?: readonly string[]
  /** Rewrites each user text part before anything else (the seam for `<private>` handling). */
  transformUserText?: (text: string) => string
  /** Rewrites every rendered string, of any role, just before redaction (private text quoted back). */
  scrub?: (text: string) => string
  /** Tool calls whose result is memory's own text: each becomes one line naming the tool (own-output.ts). */
  ownTool?: OwnToolCall
}

export interface Evidence {
  /** The rendering, in order; joined they give the whole text. Empty when nothing could be kept. */
  chunks: string[]
  /** UTF-8 bytes of all chunks together. */
  bytes: number
  /** Estimated tokens of all chunks together (at most the budget). */
  tokens: number
  /** Rows kept and rows left out. */
  kept: number
  omitted: number
  /** Secrets replaced, by class (from redact()), counted before any cut. */
  redactions: Record<string, number>
}

export const EVIDENCE_LIMITS = Object.freeze({
  /** Codex's TOOL_OUTPUT_TOKENS: a tool's result is cut to this many tokens (estimated here). */
  TOOL_OUTPUT_TOKENS: 2_000,
  /** Codex's TRUNCATION_RESERVE_BYTES: room kept for the marker of a middle cut. */
  CUT_RESERVE_BYTES: 96,
  /** Codex's MAX_ROW_BYTES: no row, label and marker included, is longer. */
  MAX_ROW_BYTES: 10_000,
  /** Codex splits the evidence into messages of at most 8,900 bytes. */
  CHUNK_BYTES: 8_900,
  /** A row that does not fit whole is cut to the room left only when at least this much is left (Codex: 512 bytes). */
  MIN_CUT_ROW_TOKENS: 128,
})

/** Priority order of the selection. */
export const EVIDENCE_TIERS: readonly EvidenceTier[] = Object.freeze(["human", "final", "other_agent", "commentary", "context", "tool"])

const LABELS: Readonly<Record<Exclude<EvidenceTier, "tool">, string>> = {
  human: "[human user]",
  final: "[assistant final]",
  other_agent: "[other agent]",
  commentary: "[assistant commentary]",
  context: "[context]",
}

/** Between two units (rows or gap markers), each of which ends with a line break: one blank line. */
const SEPARATOR = "\n"
const LINE_BREAK_TOKENS = estimateTokens(SEPARATOR)
const SUBAGENT_TOOL = "task"
const QUESTION_TOOL = "question"

interface RawRow {
  tier: EvidenceTier
  /** The rendered piece; tool rows already open with their `[tool <name>]` label. */
  body: string
  /** A text of the assistant: the last of a turn becomes "final". */
  assistantText: boolean
}

export function selectEvidence(messages: readonly TranscriptMessage[], options: EvidenceOptions): Evidence {
  const { redact: tally, counts: redactions } = redactionTally(options.scrub)
  const rows = collectRows(messages, {
    // Tool results are cut below, by bytes, once redacted: nothing is cut by characters first.
    maxToolOutputChars: Number.POSITIVE_INFINITY,
    maxToolInputChars: TRANSCRIPT_DEFAULTS.MAX_TOOL_INPUT_CHARS,
    // No row keeps more than MAX_ROW_BYTES, so a text cut here is cut again well inside this margin,
    // and a secret split by this first cut is never shown.
    maxTextChars: EVIDENCE_LIMITS.MAX_ROW_BYTES + 16_384,
    injectedMarkers: options.injectedMarkers ?? [],
    transformUserText: options.transformUserText,
    redact: tally,
    ownTool: options.ownTool,
  }).map(renderRow)
  const budget = Math.max(0, Math.floor(options.budgetTokens))
  const chunkBytes = Math.max(4, Math.floor(options.chunkBytes ?? EVIDENCE_LIMITS.CHUNK_BYTES))
  const selected = select(rows, budget)
  const kept = selected.filter((row) => row !== undefined).length
  const units = renderUnits(selected)
  const pieces = units.map((unit, i) => (i < units.length - 1 ? unit + SEPARATOR : unit))
  const bytes = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece, "utf8"), 0)
  const tokens = estimateTokens(pieces.join(""))
  // Nothing kept is no evidence (a lone omission marker tells the extractor nothing), and the
  // result never exceeds the budget.
  if (kept === 0 || tokens > budget) return { chunks: [], bytes: 0, tokens: 0, kept: 0, omitted: rows.length, redactions }
  return { chunks: chunkPieces(pieces, chunkBytes), bytes, tokens, kept, omitted: rows.length - kept, redactions }
}

/** The marker line for `count` rows left out. */
export function omittedMarker(count: number): string {
  return `[... ${count} ${count === 1 ? "row" : "rows"} omitted ...]`
}

// ---- Rows ----

type BaseContext = Omit<PartContext, "role">

function collectRows(messages: readonly TranscriptMessage[], base: BaseContext): RawRow[] {
  const rows: RawRow[] = []
  // Index of the assistant's last text since the user last spoke.
  let lastAssistantText = -1
  const closeTurn = () => {
    if (lastAssistantText >= 0) rows[lastAssistantText]!.tier = "final"
    lastAssistantText = -1
  }
  const push = (row: RawRow) => {
    rows.push(row)
    if (row.assistantText) lastAssistantText = rows.length - 1
  }
  for (const message of messages) {
    const role = message?.info?.role
    if (role !== "user" && role !== "assistant") continue
    const parts = Array.isArray(message.parts) ? message.parts : []
    // A compaction summary is the assistant's digest of earlier turns, not an answer to the user.
    const summary = (message.info as { summary?: unknown }).summary === true
    const context: PartContext = { ...base, role }
    const texts: string[] = []
    let textTier: EvidenceTier = "human"
    const flush = () => {
      if (!texts.length) return
      // Only the user's own text ends a turn (not their answer to a question tool).
      if (textTier === "human") closeTurn()
      push({ tier: textTier, body: texts.join("\n\n"), assistantText: textTier === "commentary" })
      texts.length = 0
    }
    for (const part of parts) {
      if (typeof part !== "object" || part === null) continue
      if (part.type === "text") {
        if (part.ignored === true) continue
        const synthetic = part.synthetic === true
        const tier: EvidenceTier = synthetic || summary ? "context" : role === "user" ? "human" : "commentary"
        // partText drops synthetic text (V1 leaves it out); V2 keeps it, as context.
        const text = partText(synthetic ? { ...part, synthetic: false } : part, context)
        if (text === undefined) continue
        if (texts.length && tier !== textTier) flush()
        textTier = tier
        texts.push(text)
        continue
      }
      const media = mediaPlaceholder(part)
      if (media) {
        // An image or a recording stays inside its message's row as a placeholder, as in Codex:
        // what the user showed belongs to what they said, and its bytes are never copied.
        const tier: EvidenceTier = summary ? "context" : role === "user" ? "human" : "commentary"
        if (texts.length && tier !== textTier) flush()
        textTier = tier
        texts.push(media)
        continue
      }
      flush()
      const row = partRow(part, context)
      if (row) push(row)
    }
    flush()
    const error = role === "assistant" ? messageErrorEntry(message.info?.error, context) : undefined
    if (error) push({ tier: "context", body: error, assistantText: false })
  }
  closeTurn()
  return rows
}

/** Codex's placeholders for message media: an attached image or audio file, by its MIME type. */
function mediaPlaceholder(part: TranscriptPart): string | undefined {
  if (part.type !== "file" || typeof part.mime !== "string") return undefined
  const mime = part.mime.toLowerCase()
  if (mime.startsWith("image/")) return "[image omitted]"
  if (mime.startsWith("audio/")) return "[audio omitted]"
  return undefined
}

function partRow(part: TranscriptPart, context: PartContext): RawRow | undefined {
  const entry = partEntry(part, context)
  if (entry === undefined) return undefined
  if (part.type === "agent" || part.type === "subtask") return { tier: "other_agent", body: entry, assistantText: false }
  if (part.type !== "tool") return { tier: "context", body: entry, assistantText: false }
  // What a sub-agent returned is its own account: kept whole (up to the row cap), as another agent's.
  if (part.tool === SUBAGENT_TOOL) return { tier: "other_agent", body: entry, assistantText: false }
  const state = part.state as { status?: unknown } | undefined
  // The question tool's result is the user's answer, paired with the question asked.
  if (part.tool === QUESTION_TOOL && state?.status === "completed") return { tier: "human", body: entry, assistantText: false }
  return { tier: "tool", body: capToolResult(entry), assistantText: false }
}

/** The entry is `[tool <name>] <input>` on one line (compact JSON), then the result: only the result is capped. */
function capToolResult(entry: string): string {
  const newline = entry.indexOf("\n")
  if (newline < 0) return entry
  return `${entry.slice(0, newline + 1)}${truncateMiddle(entry.slice(newline + 1), EVIDENCE_LIMITS.TOOL_OUTPUT_TOKENS)}`
}

interface Row {
  tier: EvidenceTier
  text: string
  tokens: number
}

function renderRow(row: RawRow): Row {
  const labelled = row.tier === "tool" ? row.body : `${LABELS[row.tier]}\n${row.body}`
  const text = fitRow(`${labelled}\n`, EVIDENCE_LIMITS.MAX_ROW_BYTES)
  return { tier: row.tier, text, tokens: estimateTokens(text) }
}

/** A row of at most `maxTokens`, marker included, still ending with a line break. */
function fitRowTokens(text: string, maxTokens: number): string {
  return `${truncateMiddle(text, maxTokens - LINE_BREAK_TOKENS).trimEnd()}\n`
}

/** A row of at most `maxBytes`, marker included, still ending with a line break. */
function fitRow(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text
  return `${cutBytes(text, maxBytes - EVIDENCE_LIMITS.CUT_RESERVE_BYTES - 1).trimEnd()}\n`
}

/** Keeps `maxBytes` bytes of `text`, half from each end, on character boundaries, plus a marker of under 96 bytes. */
function cutBytes(text: string, maxBytes: number): string {
  return truncateMiddleCodex(text, Math.max(0, maxBytes) / READ_PATH.BYTES_PER_TOKEN)
}

// ---- Selection ----

/**
 * The rows taken, by index, each as it is shown. The running size is an upper bound of the
 * rendering: every unit counts its separator, and every gap its longest possible marker, so
 * choosing a row costs only a look at its two neighbours (a gap split in two, shortened, or
 * closed), however many rows there are.
 */
function select(rows: readonly Row[], budget: number): Array<string | undefined> {
  const n = rows.length
  const selected: Array<string | undefined> = new Array(n).fill(undefined)
  if (n === 0) return selected
  // Everything fits: the bound below would overcount by a marker, so this is checked exactly first.
  if (estimateTokens(rows.map((row) => row.text).join(SEPARATOR)) <= budget) return rows.map((row) => row.text)
  const gapCost = estimateTokens(omittedMarker(Math.max(2, n))) + 3 * LINE_BREAK_TOKENS
  const rowCost = (tokens: number) => tokens + LINE_BREAK_TOKENS
  let used = gapCost
  for (const tier of EVIDENCE_TIERS) {
    for (let i = n - 1; i >= 0; i--) {
      const row = rows[i]!
      if (row.tier !== tier) continue
      const left = i > 0 && selected[i - 1] === undefined
      const right = i < n - 1 && selected[i + 1] === undefined
      const gapDelta = left && right ? gapCost : left || right ? 0 : -gapCost
      const room = budget - used - gapDelta - LINE_BREAK_TOKENS
      if (row.tokens > room) {
        if (room < EVIDENCE_LIMITS.MIN_CUT_ROW_TOKENS) continue
        // A cut row takes all the room left, as a cut by bytes would: the estimate of the cut text
        // can come out a little under it, and that rest is no room for a second cut row.
        selected[i] = fitRowTokens(row.text, room)
        used = budget
        continue
      }
      selected[i] = row.text
      used += rowCost(row.tokens) + gapDelta
    }
  }
  return selected
}

/** Rows and gap markers in chronological order; each unit ends with a line break. */
function renderUnits(selected: ReadonlyArray<string | undefined>): string[] {
  const units: string[] = []
  let gap = 0
  for (const text of selected) {
    if (text === undefined) {
      gap++
      continue
    }
    if (gap) units.push(`${omittedMarker(gap)}\n`)
    gap = 0
    units.push(text)
  }
  if (gap) units.push(`${omittedMarker(gap)}\n`)
  return units
}

// ---- Chunks ----

/** Packs the pieces into chunks of at most `max` bytes; a piece larger than a chunk is split inside. */
function chunkPieces(pieces: readonly string[], max: number): string[] {
  const chunks: string[] = []
  let current: string[] = []
  let currentBytes = 0
  const flush = () => {
    if (current.length) chunks.push(current.join(""))
    current = []
    currentBytes = 0
  }
  for (const piece of pieces) {
    const bytes = Buffer.byteLength(piece, "utf8")
    if (currentBytes + bytes <= max) {
      current.push(piece)
      currentBytes += bytes
      continue
    }
    flush()
    if (bytes <= max) {
      current.push(piece)
      currentBytes = bytes
      continue
    }
    const split = splitBytes(piece, max)
    chunks.push(...split.slice(0, -1))
    const last = split[split.length - 1]!
    current.push(last)
    currentBytes = Buffer.byteLength(last, "utf8")
  }
  flush()
  return chunks
}

/** Pieces of at most `max` bytes, cut after a line break in the second half of a piece when there is one, never inside a character. */
function splitBytes(text: string, max: number): string[] {
  const buffer = Buffer.from(text, "utf8")
  const out: string[] = []
  for (let start = 0; start < buffer.length; ) {
    let end = Math.min(buffer.length, start + max)
    if (end < buffer.length) {
      while (end > start && (buffer[end]! & 0xc0) === 0x80) end--
      const newline = buffer.lastIndexOf(0x0a, end - 1)
      if (newline >= start + max / 2) end = newline + 1
    }
    out.push(buffer.toString("utf8", start, end))
    start = end
  }
  return out
}
