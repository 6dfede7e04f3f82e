// The marker a secret becomes, and the edit list every pass builds its output with. A pass finds
// its secrets left to right and never overlaps itself, so the output is assembled once, in pieces.

export const MARKER_PREFIX = "[REDACTED:"

export function marker(name: string): string {
  return `${MARKER_PREFIX}${name}]`
}

/** True when `value` already holds a marker: a later pass, or a second run, leaves it alone. */
export function holdsMarker(value: string): boolean {
  return value.includes(MARKER_PREFIX)
}

/** True when `at` lies inside a marker (a key word in `[REDACTED:github-token]`); looks back a few characters only. */
export function insideMarker(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0 && i >= at - 48; i--) {
    const c = text[i]
    if (c === "]") return false
    if (c === "[") return text.startsWith(MARKER_PREFIX, i)
  }
  return false
}

export class Edits {
  private readonly parts: string[] = []
  private from = 0

  constructor(
    readonly text: string,
    private readonly counts: Record<string, number>,
    /** Each removed span leaves its line breaks behind it, so every line stays on its number. */
    private readonly keepLines = false,
  ) {}

  /** Replaces text[start, end) with the marker of `name`; calls come in increasing, disjoint order. */
  replace(start: number, end: number, name: string): void {
    this.parts.push(this.text.slice(this.from, start), marker(name) + this.breaks(start, end))
    this.from = end
    this.counts[name] = (this.counts[name] ?? 0) + 1
  }

  /** Removes text[start, end) with no marker of its own (the rest of a secret a marker already stands for). */
  drop(start: number, end: number): void {
    this.parts.push(this.text.slice(this.from, start), this.breaks(start, end))
    this.from = end
  }

  /** Where the next replacement may start. */
  get position(): number {
    return this.from
  }

  private breaks(start: number, end: number): string {
    if (!this.keepLines) return ""
    let breaks = ""
    for (let at = this.text.indexOf("\n", start); at !== -1 && at < end; at = this.text.indexOf("\n", at + 1)) breaks += "\n"
    return breaks
  }

  finish(): string {
    if (!this.parts.length) return this.text
    this.parts.push(this.text.slice(this.from))
    return this.parts.join("")
  }
}
