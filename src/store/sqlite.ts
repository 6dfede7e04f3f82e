// One small SQLite interface over three drivers, tried in the order the runtime makes sensible:
// `bun:sqlite` under Bun (OpenCode's CLI and TUI), `node:sqlite` where Node has it (22.5 and
// later, the desktop app's Electron included, where `bun:` imports are rejected), and
// `better-sqlite3` last, for Node 20, whose native addon is built for one Node ABI and is not
// installed by default. A driver is chosen when a database is opened, never at import, so loading
// the plugin cannot fail over it.
import { createRequire } from "node:module"

export type SqlValue = string | number | bigint | null | Uint8Array
export type SqlParams = Readonly<Record<string, SqlValue>> | readonly SqlValue[]

export interface SqlStatement {
  run(params?: SqlParams): { changes: number }
  get<T = Record<string, unknown>>(params?: SqlParams): T | undefined
  all<T = Record<string, unknown>>(params?: SqlParams): T[]
}

export const DRIVERS = ["bun:sqlite", "node:sqlite", "better-sqlite3"] as const
export type DriverName = (typeof DRIVERS)[number]

export interface SqlDatabase {
  readonly driver: DriverName
  /** Runs one or more statements without results. */
  exec(sql: string): void
  prepare(sql: string): SqlStatement
  close(): void
}

/** Names the one driver to use instead of trying them in order (troubleshooting, and tests of each driver). */
export const DRIVER_ENV = "OPENCODE_CODEX_MEMORY_SQLITE_DRIVER"

const require = createRequire(import.meta.url)

export const isBun = (): boolean => typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"

/** Thrown when no driver loads: each one's reason, and what would fix it. */
export class NoSqliteDriverError extends Error {
  override readonly name = "NoSqliteDriverError"
  constructor(readonly tried: ReadonlyArray<{ driver: DriverName; reason: string }>) {
    super(`no SQLite driver loads in this runtime (${tried.map((t) => `${t.driver}: ${t.reason}`).join("; ")}). ${installAdvice()}`)
  }
}

/** What a user of this runtime can do when no driver loads. */
export function installAdvice(): string {
  if (isBun()) return "Bun always has bun:sqlite: this install of OpenCode is damaged, reinstall it."
  return 'Use Node 22.13 or later, whose built-in node:sqlite needs nothing installed, or install better-sqlite3 beside this package ("npm install better-sqlite3@12"), which builds for the Node that installs it.'
}

/** The drivers this runtime tries, in order. */
export function driverOrder(env: Readonly<Record<string, string | undefined>> = process.env): readonly DriverName[] {
  const forced = env[DRIVER_ENV]
  if (forced) {
    if (!(DRIVERS as readonly string[]).includes(forced)) throw new Error(`${DRIVER_ENV}=${forced} names no driver (use ${DRIVERS.join(", ")})`)
    return [forced as DriverName]
  }
  return isBun() ? ["bun:sqlite"] : ["node:sqlite", "better-sqlite3"]
}

type Loader = (file: string) => SqlDatabase
const LOADERS: Record<DriverName, () => Loader> = {
  "bun:sqlite": loadBun,
  "node:sqlite": loadNode,
  "better-sqlite3": loadBetterSqlite,
}

/** The first driver in `order` whose module loads, or a NoSqliteDriverError naming why each failed. */
export function loadDriver(order: readonly DriverName[] = driverOrder()): { driver: DriverName; open: Loader } {
  const tried: Array<{ driver: DriverName; reason: string }> = []
  for (const driver of order) {
    try {
      return { driver, open: LOADERS[driver]() }
    } catch (error) {
      tried.push({ driver, reason: firstLine(error) })
    }
  }
  throw new NoSqliteDriverError(tried)
}

/** The drivers that load here (doctor, and the storage suite, which runs on each). */
export function availableDrivers(): DriverName[] {
  return DRIVERS.filter((driver) => {
    try {
      LOADERS[driver]()
      return true
    } catch {
      return false
    }
  })
}

/** Opens (creating if needed) the database at `file` with the first driver this runtime can load. */
export function openSqlite(file: string): SqlDatabase {
  return loadDriver().open(file)
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0]!
}

// Named parameters are written `$name` in SQL and passed as `{ name }`: every driver accepts that
// (bun:sqlite once opened with `strict: true`; node:sqlite binds bare names by default).
const args = (params: SqlParams | undefined): unknown[] => (params === undefined ? [] : [params])

interface RawStatement {
  run(...a: unknown[]): { changes: number | bigint }
  get(...a: unknown[]): unknown
  all(...a: unknown[]): unknown[]
}
interface RawDatabase {
  exec(sql: string): void
  prepare(sql: string): RawStatement
  close(): void
}

function loadBun(): Loader {
  const { Database } = require("bun:sqlite") as { Database: new (f: string, o: object) => RawDatabase }
  return (file) => {
    const db = new Database(file, { create: true, readwrite: true, strict: true })
    return wrap("bun:sqlite", db, (statement) => ({
      run: (params) => ({ changes: Number(statement.run(...args(params)).changes) }),
      // bun:sqlite answers null for "no row"; the interface says undefined, like the others.
      get: (params) => (statement.get(...args(params)) ?? undefined) as never,
      all: (params) => statement.all(...args(params)) as never,
    }))
  }
}

function loadNode(): Loader {
  // Node prints an ExperimentalWarning the first time node:sqlite loads (22.x): that one warning is
  // dropped, every other warning still reaches the process's listeners.
  const { DatabaseSync } = withoutSqliteWarning(() => require("node:sqlite") as { DatabaseSync: new (f: string) => RawDatabase })
  return (file) => {
    const db = sqliteCodes(() => new DatabaseSync(file))
    // node:sqlite takes positional values as separate arguments, and a named-values object first.
    const bind = (params: SqlParams | undefined): unknown[] => (params === undefined ? [] : Array.isArray(params) ? [...params] : [params])
    // Its rows have no prototype; the other drivers' are plain objects, and callers compare them.
    const plain = (row: unknown) => (row ? { ...(row as object) } : undefined)
    return {
      driver: "node:sqlite",
      exec: (sql) => sqliteCodes(() => db.exec(sql)),
      prepare(sql) {
        const statement = sqliteCodes(() => db.prepare(sql))
        return {
          run: (params) => sqliteCodes(() => ({ changes: Number(statement.run(...bind(params)).changes) })),
          get: (params) => sqliteCodes(() => plain(statement.get(...bind(params)))) as never,
          all: (params) => sqliteCodes(() => statement.all(...bind(params)).map(plain)) as never,
        }
      },
      close: () => db.close(),
    }
  }
}

// SQLite's primary result codes, by number: node:sqlite reports `errcode` (extended, so the low
// byte is the primary code) and a generic `code`; the rest of the store reads `SQLITE_*` codes, as
// better-sqlite3 and bun:sqlite give them.
const PRIMARY_CODES = [
  "OK", "ERROR", "INTERNAL", "PERM", "ABORT", "BUSY", "LOCKED", "NOMEM", "READONLY", "INTERRUPT", "IOERR", "CORRUPT", "NOTFOUND", "FULL",
  "CANTOPEN", "PROTOCOL", "EMPTY", "SCHEMA", "TOOBIG", "CONSTRAINT", "MISMATCH", "MISUSE", "NOLFS", "AUTH", "FORMAT", "RANGE", "NOTADB",
]

function sqliteCodes<T>(run: () => T): T {
  try {
    return run()
  } catch (error) {
    const errcode = (error as { errcode?: unknown })?.errcode
    const name = typeof errcode === "number" ? PRIMARY_CODES[errcode & 0xff] : undefined
    if (name) Object.assign(error as object, { code: `SQLITE_${name}` })
    throw error
  }
}

function loadBetterSqlite(): Loader {
  let Database: typeof import("better-sqlite3")
  try {
    Database = require("better-sqlite3") as typeof import("better-sqlite3")
  } catch (error) {
    const code = (error as { code?: string }).code
    throw new Error(code === "MODULE_NOT_FOUND" ? "not installed" : firstLine(error))
  }
  // The native addon loads with the first database: one in memory shows now whether it was built
  // for this Node (an addon of another ABI fails here, not halfway through start-up).
  new Database(":memory:").close()
  return (file) => {
    const db = new Database(file)
    return {
      driver: "better-sqlite3",
      exec: (sql) => void db.exec(sql),
      prepare(sql) {
        const statement = db.prepare(sql)
        const returnsRows = statement.reader
        return {
          run: (params) => ({ changes: statement.run(...args(params)).changes }),
          get: (params) => (returnsRows ? statement.get(...args(params)) : undefined) as never,
          all: (params) => (returnsRows ? statement.all(...args(params)) : []) as never,
        }
      },
      close: () => db.close(),
    }
  }
}

function wrap(driver: DriverName, db: RawDatabase, statement: (raw: RawStatement) => SqlStatement): SqlDatabase {
  return {
    driver,
    exec: (sql) => db.exec(sql),
    prepare: (sql) => statement(db.prepare(sql)),
    close: () => db.close(),
  }
}

function withoutSqliteWarning<T>(load: () => T): T {
  const emit = process.emitWarning
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === "string" ? warning : warning?.message
    if (typeof text === "string" && /SQLite is an experimental feature/.test(text)) return
    return (emit as (...a: unknown[]) => void).call(this, warning, ...rest)
  } as typeof process.emitWarning
  try {
    return load()
  } finally {
    process.emitWarning = emit
  }
}
