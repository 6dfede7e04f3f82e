// When a database could not be opened (a full disk fails `PRAGMA journal_mode = WAL`, a lock held
// past the busy timeout), later passes open it again, so learning resumes in the same process once
// the cause is gone instead of waiting for OpenCode to restart. Bounded: a try is due only after a
// pause that doubles from 30 s to 10 min, so a disk that stays full costs one open every ten
// minutes, never a loop.
import { STORE } from "../constants.js"

export class ReopenSchedule {
  private nextTryAt = 0
  private delay: number = STORE.REOPEN_FIRST_DELAY_MS
  private tries = 0

  constructor(private readonly now: () => number) {}

  /** Whether a try may be made now. */
  due(): boolean {
    return this.now() >= this.nextTryAt
  }

  /** When the next try is due. */
  get nextAt(): number {
    return this.nextTryAt
  }

  /** How many tries have failed since the last success (memory_inspect says so). */
  get failures(): number {
    return this.tries
  }

  /** A try failed (the first open included): the next one waits, longer each time. */
  failed(): void {
    this.tries++
    this.nextTryAt = this.now() + this.delay
    this.delay = Math.min(STORE.REOPEN_MAX_DELAY_MS, this.delay * 2)
  }

  succeeded(): void {
    this.tries = 0
    this.nextTryAt = 0
    this.delay = STORE.REOPEN_FIRST_DELAY_MS
  }
}
