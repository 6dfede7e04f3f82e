// `<private>...</private>` spans: what the user marks as not for memory. They are cut from the
// user's text before extraction and replaced by PRIVATE_MARKER, so the extraction model knows
// something was withheld without seeing it. Tags match in any case and across lines; nested
// spans end with their outermost closing tag, and an unclosed `<private>` hides the rest of the
// text. OpenCode's own copy of the conversation is never touched: the model answering the user
// still sees everything.

export const PRIVATE_MARKER = "[private]"
/** The class under which the redaction audit counts the spans cut from a transcript. */
export const PRIVATE_SPAN_CLASS = "private-span"

// Used only through exec() after setting lastIndex: no state carries between calls.
const TAG = /<[ \t]*(\/?)[ \t]*private[ \t]*>/gi

export interface PrivateStrip {
  text: string
  /** The hidden contents, in order, without their tags. */
  spans: string[]
}

export function stripPrivate(text: string): PrivateStrip {
  if (!/private/i.test(text)) return { text, spans: [] }
  const out: string[] = []
  const spans: string[] = []
  let depth = 0
  let from = 0
  let spanStart = 0
  TAG.lastIndex = 0
  for (let tag = TAG.exec(text); tag; tag = TAG.exec(text)) {
    const closing = tag[1] === "/"
    if (!closing) {
      if (depth++ === 0) {
        out.push(text.slice(from, tag.index))
        spanStart = TAG.lastIndex
      }
    } else if (depth > 0) {
      if (--depth === 0) {
        spans.push(text.slice(spanStart, tag.index))
        out.push(PRIVATE_MARKER)
        from = TAG.lastIndex
      }
    } else {
      // A closing tag with nothing open: drop the tag, keep the text around it.
      out.push(text.slice(from, tag.index))
      from = TAG.lastIndex
    }
  }
  if (depth > 0) {
    spans.push(text.slice(spanStart))
    out.push(PRIVATE_MARKER)
  } else out.push(text.slice(from))
  return { text: out.join(""), spans }
}

/** Pieces of hidden text shorter than this are not searched for elsewhere: they would hit ordinary words. */
export const ECHO_MIN_CHARS = 4

/**
 * The pieces of hidden text to remove wherever else they appear (the assistant may quote them
 * back): each span, trimmed, and each long line of a multi-line span; longest first.
 */
export function echoPieces(spans: readonly string[]): string[] {
  const pieces = new Set<string>()
  for (const span of spans) {
    const whole = span.trim()
    if (whole.length >= ECHO_MIN_CHARS) pieces.add(whole)
    if (!whole.includes("\n")) continue
    for (const line of whole.split("\n")) {
      const piece = line.trim()
      if (piece.length >= 2 * ECHO_MIN_CHARS) pieces.add(piece)
    }
  }
  return [...pieces].sort((a, b) => b.length - a.length)
}

/** Replaces every occurrence of each piece with PRIVATE_MARKER. */
export function removeEchoes(text: string, pieces: readonly string[]): string {
  let out = text
  for (const piece of pieces) if (out.includes(piece)) out = out.split(piece).join(PRIVATE_MARKER)
  return out
}
