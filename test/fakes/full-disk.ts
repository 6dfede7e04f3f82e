// A disk that fills up, for fault injection: database writes fail with SQLITE_FULL the way SQLite
// fails them (the open transaction already rolled back), file writes fail with ENOSPC after
// writing part of their bytes. Either fills at once (`full = true`) or at the nth write from now
// (`fillAt(n)`), so a test can sweep the fault over every write of a cycle.
import fs from "node:fs"
import { vi } from "vitest"
import { openSqlite, type SqlDatabase, type SqlParams } from "../../src/store/sqlite.js"

/** Statements that need free pages: data changes, schema changes and pragmas that set a value. */
const WRITES = /^\s*(?:insert|update|delete|replace|create|alter|drop)\b|^\s*pragma\s+\w+\s*=|^\s*with\b[\s\S]*\b(?:insert|update|delete)\b/i

export class FullDisk {
  full = false
  /** Every write seen so far, the failed ones included. */
  writes = 0
  /** Writes that failed for lack of space. */
  failures = 0
  /** Where each write came from (the plugin's innermost frame), in order: a sweep fills once at each. */
  readonly sites: string[] = []
  private fillsAt: number | undefined
  private readonly restores: Array<() => void> = []

  /** The disk fills at the nth write from now (1: the very next one), and stays full. */
  fillAt(n: number): void {
    this.fillsAt = this.writes + n
  }

  free(): void {
    this.full = false
    this.fillsAt = undefined
  }

  /** Counts a write; true when it must fail. */
  private refuses(): boolean {
    this.writes++
    this.sites.push(callerSite())
    if (this.fillsAt !== undefined && this.writes >= this.fillsAt) this.full = true
    if (this.full) this.failures++
    return this.full
  }

  /** Opens a database whose writes fail while the disk is full (MemoryDeps.connect). */
  readonly connect = (file: string): SqlDatabase => {
    const db = openSqlite(file)
    const refuse = (sql: string) => {
      if (!WRITES.test(sql) || !this.refuses()) return
      // What SQLite does on SQLITE_FULL: the statement fails and the transaction is rolled back.
      try {
        db.exec("ROLLBACK")
      } catch {
        // No transaction was open.
      }
      throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })
    }
    return {
      driver: db.driver,
      exec: (sql) => {
        refuse(sql)
        db.exec(sql)
      },
      prepare: (sql) => {
        const statement = db.prepare(sql)
        return {
          run: (params?: SqlParams) => (refuse(sql), statement.run(params)),
          get: <T>(params?: SqlParams) => (refuse(sql), statement.get<T>(params)),
          all: <T>(params?: SqlParams) => (refuse(sql), statement.all<T>(params)),
        }
      },
      close: () => db.close(),
    }
  }

  /**
   * Makes file writes fail with ENOSPC while the disk is full, after writing half their bytes (a
   * real full disk cuts a write short). Undone by restore().
   */
  install(): this {
    const enospc = (file: unknown) => Object.assign(new Error(`ENOSPC: no space left on device, write '${String(file)}'`), { code: "ENOSPC", errno: -28 })
    const half = (data: unknown): unknown =>
      typeof data === "string" ? data.slice(0, data.length >> 1) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength >> 1) : data
    const writeFileSync = fs.writeFileSync
    this.spy(
      vi.spyOn(fs, "writeFileSync").mockImplementation((file, data, options) => {
        if (!this.refuses()) return writeFileSync(file, data, options)
        writeFileSync(file, half(data) as string, options)
        throw enospc(file)
      }),
    )
    const appendFileSync = fs.appendFileSync
    this.spy(
      vi.spyOn(fs, "appendFileSync").mockImplementation((file, data, options) => {
        if (this.refuses()) throw enospc(file)
        return appendFileSync(file, data, options)
      }),
    )
    const writeFile = fs.promises.writeFile
    this.spy(
      vi.spyOn(fs.promises, "writeFile").mockImplementation(async (file, data, options) => {
        if (!this.refuses()) return writeFile(file, data, options)
        await writeFile(file, half(data) as string, options)
        throw enospc(file)
      }),
    )
    const mkdirSync = fs.mkdirSync
    this.spy(
      vi.spyOn(fs, "mkdirSync").mockImplementation(((dir: fs.PathLike, options?: fs.MakeDirectoryOptions) => {
        // Only a directory that is not there yet takes space.
        if (!fs.existsSync(dir) && this.full) throw enospc(dir)
        return mkdirSync(dir, options)
      }) as typeof fs.mkdirSync),
    )
    return this
  }

  restore(): void {
    for (const restore of this.restores.splice(0)) restore()
  }

  /** The write number (1-based, from a fresh disk) of the first write at each site. */
  firstAtEachSite(): Map<string, number> {
    const first = new Map<string, number>()
    this.sites.forEach((site, index) => {
      if (!first.has(site)) first.set(site, index + 1)
    })
    return first
  }

  private spy(spy: { mockRestore(): void }): void {
    this.restores.push(() => spy.mockRestore())
  }
}

/**
 * The two innermost frames of the plugin's own code (src/), as `file:function`: the helper that
 * writes (replaceFile, a transaction) and the code that asked for the write.
 */
function callerSite(): string {
  const frames = (new Error().stack ?? "").split("\n").slice(1)
  const own: string[] = []
  for (const frame of frames) {
    if (frame.includes("/test/") || frame.includes("/node_modules/")) continue
    const match = /at (?:async )?(?:(\S+) \()?.*?\/src\/([^:)]+)/.exec(frame)
    if (match) own.push(`${match[2]}:${match[1] ?? `line ${/:(\d+):\d+\)?$/.exec(frame)?.[1] ?? "?"}`}`)
    if (own.length === 2) break
  }
  return own.join(" < ") || "(outside the plugin)"
}
