// fitBlocks' result (transcript-cut.ts), computed as the blocks arrive, so that rendering holds about
// one budget of text instead of the whole session: the whole-block head, a rolling whole-block
// tail, and the blocks covering the two ends the character-level cut needs (middle-cut.ts). Sizes
// are estimated tokens; a block's estimate plus the separator's bounds what it adds to the joined
// text (the estimate is subadditive), so sums of them never undercount the result.
import { cutMiddleOfTextEnds, endTokensNeeded } from "../../util/middle-cut.js"
import { estimateTokens, headWithin, tailWithin } from "../../util/token-estimate.js"

export const BLOCK_SEPARATOR = "\n\n"

export interface Fitted {
  text: string
  truncated: boolean
}

const SEP_TOKENS = estimateTokens(BLOCK_SEPARATOR)

export class BlockFitter {
  private readonly budget: number
  private readonly room: number
  /** Every block, while the whole still fits the budget. */
  private all: string[] | undefined = []
  private count = 0
  private total = 0
  private bytes = 0
  private readonly head: string[] = []
  private headTokens = 0
  private headOpen = true
  private readonly tail: Array<{ block: string; size: number }> = []
  private tailTokens = 0
  /** The first blocks until they cover the head the character-level cut needs (each cut to what it can give). */
  private readonly first: string[] = []
  private firstTokens = 0
  /** The last blocks covering the tail the character-level cut needs. */
  private readonly last: Array<{ block: string; size: number }> = []
  private lastTokens = 0

  constructor(maxTokens: number) {
    this.budget = Math.max(0, Math.floor(maxTokens))
    this.room = Math.max(0, this.budget - MARKER_RESERVE_TOKENS)
  }

  get started(): boolean {
    return this.count > 0
  }

  add(block: string): void {
    const size = estimateTokens(block)
    const separator = this.count > 0 ? SEP_TOKENS : 0
    this.total += size + separator
    this.bytes += Buffer.byteLength(block, "utf8") + (this.count > 0 ? BLOCK_SEPARATOR.length : 0)
    this.count++
    if (this.all) {
      this.all.push(block)
      if (this.total > this.budget) this.all = undefined
    }
    // The joined text's ends, as whole blocks (a huge one sliced), for the character-level cut; the
    // shortest marker (a text of one byte) leaves the most room, so its need covers every length.
    const need = endTokensNeeded(this.budget, 1)
    if (this.firstTokens < need.head) {
      const piece = block.slice(0, Math.min(block.length, headWithin(block, need.head) + 8))
      this.first.push(piece)
      this.firstTokens += estimateTokens(piece) + separator
    }
    const end = block.slice(Math.max(0, tailWithin(block, need.tail) - 8))
    const endSize = end.length === block.length ? size : estimateTokens(end)
    this.last.push({ block: end, size: endSize })
    this.lastTokens += endSize + SEP_TOKENS
    // Covered while the blocks after the first one still hold need.tail tokens with their joins.
    while (this.last.length > 1 && this.lastTokens - this.last[0]!.size - 2 * SEP_TOKENS >= need.tail) this.lastTokens -= this.last.shift()!.size + SEP_TOKENS
    // Whole blocks: the head prefix, then a rolling suffix.
    if (this.headOpen && this.headTokens + size + SEP_TOKENS <= this.room / 2) {
      this.head.push(block)
      this.headTokens += size + SEP_TOKENS
      return
    }
    this.headOpen = false
    this.tail.push({ block, size })
    this.tailTokens += size + SEP_TOKENS
    while (this.tail.length && this.tailTokens > this.room - this.headTokens) this.tailTokens -= this.tail.shift()!.size + SEP_TOKENS
  }

  finish(): Fitted {
    if (this.all) return { text: this.all.join(BLOCK_SEPARATOR), truncated: false }
    // fitBlocks' rule: whole blocks unless they would leave out the first or the last block, or fill under half the room.
    if (this.head.length > 0 && this.tail.length > 0 && this.headTokens + this.tailTokens >= this.room / 2) {
      const removedEntries = this.count - this.head.length - this.tail.length
      return { text: [...this.head, entriesMarker(removedEntries, this.total - this.headTokens - this.tailTokens), ...this.tail.map((t) => t.block)].join(BLOCK_SEPARATOR), truncated: true }
    }
    // The character-level cut holds its own marker within the budget.
    const start = this.first.join(BLOCK_SEPARATOR)
    const end = this.last.map((t) => t.block).join(BLOCK_SEPARATOR)
    return { text: cutMiddleOfTextEnds(start, end, this.bytes, this.budget), truncated: true }
  }
}

/** The marker standing for whole entries left out, with the tokens they held. */
function entriesMarker(entries: number, tokens: number): string {
  return `[... ${entries === 1 ? "1 entry" : `${entries} entries`} (${Math.max(0, tokens)} tokens) truncated ...]`
}

/** Room kept for the budget marker and its separators, so that the result stays within budget. */
const MARKER_RESERVE_TOKENS = estimateTokens(`${BLOCK_SEPARATOR}${entriesMarker(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)}${BLOCK_SEPARATOR}`)
