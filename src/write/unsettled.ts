// Job outcomes that could not be written (a full disk: SQLITE_FULL), kept by the process that owns
// the job, which settles them itself at its next pass instead of leaving the job `running` under a
// lease that ends only an hour later. Each pass first tries again to record what happened (the
// extracted record is not lost to one failed write); when that fails it gives the job back,
// claimable at once with no retry spent; when even that fails (the disk is still full) the entry
// waits for the pass after.
// Bounded: at most MAX_ENTRIES are kept, the oldest dropped (its lease still ends it).
import { errorMessage } from "../diagnostics.js"

const MAX_ENTRIES = 64

interface Entry {
  /** Records the outcome; false or a throw when the job is no longer ours. */
  record: () => unknown
  /** Gives the job back. */
  giveBack: () => unknown
}

export class UnsettledOutcomes {
  private readonly entries = new Map<string, Entry>()

  /** Keeps an outcome to settle later; a newer one for the same job replaces it. */
  add(key: string, record: () => unknown, giveBack: () => unknown): void {
    this.entries.delete(key)
    this.entries.set(key, { record, giveBack })
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
  }

  get size(): number {
    return this.entries.size
  }

  /** One attempt at every kept outcome; `report` hears what could not be settled yet. Never throws. */
  settle(report: (message: string) => void): { recorded: number; givenBack: number } {
    const result = { recorded: 0, givenBack: 0 }
    for (const [key, entry] of [...this.entries]) {
      try {
        entry.record()
        this.entries.delete(key)
        result.recorded++
        continue
      } catch (error) {
        report(`could not record the outcome of ${key} again (${errorMessage(error)}); giving the job back`)
      }
      try {
        entry.giveBack()
        this.entries.delete(key)
        result.givenBack++
      } catch (error) {
        report(`could not give ${key} back yet (${errorMessage(error)}); trying again at the next pass`)
      }
    }
    return result
  }
}
