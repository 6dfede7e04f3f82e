// At most one run at a time: a second caller is told the work is already under way instead of
// starting it twice. Both phases use it for their passes within one plugin instance.
export class SingleFlight<T> {
  private current: Promise<T> | undefined

  /** Starts `work` unless a run is in flight; undefined means one is. */
  run(work: () => Promise<T>): Promise<T> | undefined {
    if (this.current) return undefined
    const run = work().finally(() => {
      this.current = undefined
    })
    this.current = run
    return run
  }

  /** Resolves once the run in flight, if any, has settled (its failure is not rethrown). */
  async settled(): Promise<void> {
    await this.current?.catch(() => undefined)
  }
}
