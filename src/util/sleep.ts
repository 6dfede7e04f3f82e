// A blocking sleep, for the few waits made inside synchronous SQLite code paths.

/** Blocks the thread for `ms`: only for short waits while opening the database, never on a turn. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}
