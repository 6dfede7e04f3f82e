// The storage suite on every driver this Node loads: node:sqlite (Node 22.13 and later, and the
// desktop app's Electron) and better-sqlite3 (Node 20, or where it was built for this Node). Each
// run is pinned to one driver through OPENCODE_CODEX_MEMORY_SQLITE_DRIVER, which the suite's
// worker processes inherit. bun:sqlite runs in storage-bun.test.ts.
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { availableDrivers, DRIVER_ENV, driverOrder, openSqlite, type DriverName } from "../../src/store/sqlite.js"
import { runConcurrently } from "./run-processes.js"
import { storageCases } from "./storage-suite.js"

// The compiled worker: Node 20 cannot run TypeScript itself. `npm test` builds first.
const worker = fileURLToPath(new URL("../../dist/test/store/open-worker.js", import.meta.url))
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13)

describe("the drivers this Node offers", () => {
  it("node:sqlite wherever Node has it unflagged, better-sqlite3 on Node 20", () => {
    const drivers = availableDrivers()
    expect(drivers.includes("node:sqlite")).toBe(hasNodeSqlite)
    if (!hasNodeSqlite) expect(drivers).toContain("better-sqlite3")
    expect(drivers).not.toContain("bun:sqlite")
  })

  it("picks node:sqlite first, and better-sqlite3 only as the last fallback", () => {
    expect(driverOrder({})).toEqual(["node:sqlite", "better-sqlite3"])
    const db = openSqlite(":memory:")
    try {
      expect(db.driver).toBe(hasNodeSqlite ? "node:sqlite" : "better-sqlite3")
    } finally {
      db.close()
    }
  })

  it("a forced driver is the only one tried, and a misspelt one is refused", () => {
    expect(driverOrder({ [DRIVER_ENV]: "better-sqlite3" })).toEqual(["better-sqlite3"])
    expect(() => driverOrder({ [DRIVER_ENV]: "sqlite3" })).toThrow(/names no driver \(use bun:sqlite, node:sqlite, better-sqlite3\)/)
  })
})

for (const driver of availableDrivers() as DriverName[]) {
  describe(`storage on ${driver}`, () => {
    const before = process.env[DRIVER_ENV]
    beforeAll(() => {
      process.env[DRIVER_ENV] = driver
    })
    afterAll(() => {
      if (before === undefined) delete process.env[DRIVER_ENV]
      else process.env[DRIVER_ENV] = before
    })

    for (const testCase of storageCases) {
      it(testCase.name, () =>
        testCase.run({
          driver,
          openInProcesses(file, count) {
            if (!fs.existsSync(worker)) throw new Error(`${worker} is missing: run "npm run build" first`)
            return runConcurrently(process.execPath, (startAt) => [worker, file, String(startAt)], count)
          },
        }),
      )
    }
  })
}
