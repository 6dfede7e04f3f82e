// One small SQLite interface over two drivers: `bun:sqlite` inside OpenCode (Bun cannot load
// better-sqlite3's native addon), `better-sqlite3` under Node (tests, CLI). The driver is chosen
// when a database is opened, never at import, so loading the plugin cannot fail over it.
import { createRequire } from "node:module"

export type SqlValue = string | number | bigint | null | Uint8Array
export type SqlParams = Readonly<Record<string, SqlValue>> | readonly SqlValue[]

export interface SqlStatement {
  run(params?: SqlParams): { changes: number }
  get<T = Record<string, unknown>>(params?: SqlParams): T | undefined
  all<T = Record<string, unknown>>(params?: SqlParams): T[]
}

export interface SqlDatabase {
  readonly driver: "bun:sqlite" | "better-sqlite3"
  /** Runs one or more statements without results. */
  exec(sql: string): void
  prepare(sql: string): SqlStatement
  close(): void
}

const require = createRequire(import.meta.url)

export const isBun = (): boolean => typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"

/** Opens (creating if needed) the database at `file` with the driver this runtime can load. */
export function openSqlite(file: string): SqlDatabase {
  return isBun() ? openBun(file) : openBetterSqlite(file)
}

// Named parameters are written `$name` in SQL and passed as `{ name }`: both drivers accept that
// (bun:sqlite once opened with `strict: true`).
const args = (params: SqlParams | undefined): unknown[] => (params === undefined ? [] : [params])

interface BunStatement {
  run(...a: unknown[]): { changes: number }
  get(...a: unknown[]): unknown
  all(...a: unknown[]): unknown[]
}
interface BunDatabase {
  exec(sql: string): void
  prepare(sql: string): BunStatement
  close(): void
}

function openBun(file: string): SqlDatabase {
  const { Database } = require("bun:sqlite") as { Database: new (f: string, o: object) => BunDatabase }
  const db = new Database(file, { create: true, readwrite: true, strict: true })
  return {
    driver: "bun:sqlite",
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const statement = db.prepare(sql)
      return {
        run: (params) => ({ changes: Number(statement.run(...args(params)).changes) }),
        // bun:sqlite answers null for "no row"; the interface says undefined, like better-sqlite3.
        get: (params) => (statement.get(...args(params)) ?? undefined) as never,
        all: (params) => statement.all(...args(params)) as never,
      }
    },
    close: () => db.close(),
  }
}

function openBetterSqlite(file: string): SqlDatabase {
  let Database: typeof import("better-sqlite3")
  try {
    Database = require("better-sqlite3") as typeof import("better-sqlite3")
  } catch (error) {
    throw new Error(
      `better-sqlite3 could not be loaded under Node (${(error as Error).message}); it is an optional dependency: reinstall it with "npm install better-sqlite3@12"`,
    )
  }
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
