// At most one run at a time: a second caller is told the work is already under way instead of
// starting it twice. Both phases use it for their passes within one plugin instance.
export class SingleFlight<T> {
  private current: Promise<T> | undefined
  private again: (() => Promise<T>) | undefined

  /** Starts `work` unless a run is in flight; undefined means one is. */
  run(work: () => Promise<T>): Promise<T> | undefined {
    if (this.current) return undefined
    const run = work().finally(() => {
      this.current = undefined
      const next = this.again
      this.again = undefined
      if (next) void this.run(next)?.catch(() => undefined)
    })
    this.current = run
    return run
  }

  /**
   * Starts `work`, or, when a run is in flight, runs it once more right after that run: the run
   * under way may have looked before what asked for this one happened, and a request dropped
   * then would wait for the next unrelated event. Requests made meanwhile share that one rerun.
   * The rerun's own failure is for `work` to report; it is not rethrown.
   */
  request(work: () => Promise<T>): Promise<T> | undefined {
    const started = this.run(work)
    if (!started) this.again = work
    return started
  }

  /** Resolves once the run in flight now, if any, has settled; a rerun it queued is not waited for. */
  async runInFlight(): Promise<void> {
    await this.current?.catch(() => undefined)
  }

  /** Resolves once the run in flight, if any, has settled (its failure is not rethrown). */
  async settled(): Promise<void> {
    while (this.current) await this.current.catch(() => undefined)
  }
}
