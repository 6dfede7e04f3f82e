// fitBlocks' result (transcript-cut.ts), computed as the blocks arrive, so that rendering holds about
// one budget of text instead of the whole session: the whole-block head, a rolling whole-block
// tail, and the blocks covering the two ends the character-level cut needs (middle-cut.ts).
import { READ_PATH } from "../../constants.js"
import { cutMiddleOfEnds, endBytesNeeded } from "../../util/middle-cut.js"
import { BLOCK_SEPARATOR, type Fitted } from "./transcript-cut.js"

const MARKER_RESERVE = 96
const SEP = Buffer.from(BLOCK_SEPARATOR)

export class BlockFitter {
  private readonly budget: number
  private readonly room: number
  private readonly need: { head: number; tail: number }
  /** Every block, while the whole still fits the budget. */
  private all: string[] | undefined = []
  private count = 0
  private total = 0
  private readonly head: string[] = []
  private headBytes = 0
  private headOpen = true
  private readonly tail: Array<{ block: string; size: number }> = []
  private tailBytes = 0
  /** The first blocks until they cover the head the character-level cut needs. */
  private readonly first: string[] = []
  private firstBytes = 0
  /** The last blocks covering the tail the character-level cut needs. */
  private readonly last: Array<{ block: string; size: number }> = []
  private lastBytes = 0

  constructor(maxTokens: number) {
    this.budget = Math.max(0, Math.floor(maxTokens)) * READ_PATH.BYTES_PER_TOKEN
    this.room = Math.max(0, this.budget - MARKER_RESERVE)
    this.need = endBytesNeeded(this.room / READ_PATH.BYTES_PER_TOKEN)
  }

  get started(): boolean {
    return this.count > 0
  }

  add(block: string): void {
    const size = Buffer.byteLength(block, "utf8")
    const separator = this.count > 0 ? SEP.length : 0
    this.total += size + separator
    this.count++
    if (this.all) {
      this.all.push(block)
      if (this.total > this.budget) this.all = undefined
    }
    // The joined text's ends, as whole blocks, for the character-level cut.
    if (this.firstBytes < this.need.head) {
      this.first.push(block)
      this.firstBytes += size + separator
    }
    this.last.push({ block, size })
    this.lastBytes += size + SEP.length
    // Covered while the blocks after the first one still hold need.tail bytes with their joins.
    while (this.last.length > 1 && this.lastBytes - this.last[0]!.size - 2 * SEP.length >= this.need.tail) this.lastBytes -= this.last.shift()!.size + SEP.length
    // Whole blocks: the head prefix, then a rolling suffix.
    if (this.headOpen && this.headBytes + size + SEP.length <= this.room / 2) {
      this.head.push(block)
      this.headBytes += size + SEP.length
      return
    }
    this.headOpen = false
    this.tail.push({ block, size })
    this.tailBytes += size + SEP.length
    while (this.tail.length && this.tailBytes > this.room - this.headBytes) this.tailBytes -= this.tail.shift()!.size + SEP.length
  }

  finish(): Fitted {
    if (this.all) return { text: this.all.join(BLOCK_SEPARATOR), truncated: false }
    // fitBlocks' rule: whole blocks unless they would leave out the first or the last block, or fill under half the room.
    if (this.head.length > 0 && this.tail.length > 0 && this.headBytes + this.tailBytes >= this.room / 2) {
      const removedEntries = this.count - this.head.length - this.tail.length
      const removed = Math.ceil((this.total - this.headBytes - this.tailBytes) / READ_PATH.BYTES_PER_TOKEN)
      const entries = removedEntries === 1 ? "1 entry" : `${removedEntries} entries`
      const marker = `[... ${entries} (${removed} tokens) truncated ...]`
      return { text: [...this.head, marker, ...this.tail.map((t) => t.block)].join(BLOCK_SEPARATOR), truncated: true }
    }
    // Only the covered ends are encoded; a block larger than the budget is sliced first.
    const start = Buffer.from(this.first.map((block) => block.slice(0, this.need.head + 1)).join(BLOCK_SEPARATOR).slice(0, this.need.head + 1), "utf8")
    const end = Buffer.from(lastChars(this.last.map((t) => lastChars(t.block, this.need.tail + 1)).join(BLOCK_SEPARATOR), this.need.tail + 1), "utf8")
    return { text: cutMiddleOfEnds(start, end, this.total, this.room / READ_PATH.BYTES_PER_TOKEN), truncated: true }
  }
}

/** The last `n` characters, not starting inside a surrogate pair. */
function lastChars(text: string, n: number): string {
  let from = Math.max(0, text.length - n)
  const code = text.charCodeAt(from)
  if (from > 0 && code >= 0xdc00 && code <= 0xdfff) from--
  return text.slice(from)
}
