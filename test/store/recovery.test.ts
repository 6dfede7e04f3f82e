import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { QuickCheckFailed, corruptionReason, fileIdentity, moveAside } from "../../src/store/recovery.js"

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const STAMPED = "memory.db.corrupt-20261130T120000Z"
let dir: string
let file: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-recovery-"))
  file = path.join(dir, "memory.db")
  fs.writeFileSync(file, "damaged")
})

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code })

describe("corruptionReason", () => {
  it("recognises SQLite's corrupt and not-a-database errors and a failed quick_check", () => {
    expect(corruptionReason(sqliteError("SQLITE_NOTADB", "file is not a database"))).toBe("file is not a database")
    expect(corruptionReason(sqliteError("SQLITE_CORRUPT", "database disk image is malformed"))).toBe("database disk image is malformed")
    expect(corruptionReason(sqliteError("SQLITE_CORRUPT_INDEX", "index corrupt"))).toBe("index corrupt")
    // A driver that reports only the message.
    expect(corruptionReason(new Error("database disk image is malformed"))).toBe("database disk image is malformed")
    expect(corruptionReason(new QuickCheckFailed("*** in database main ***\nPage 5: bad"))).toBe("quick_check failed: *** in database main *** Page 5: bad")
  })

  it("leaves busy, locked, I/O, permission and other errors alone", () => {
    for (const error of [
      sqliteError("SQLITE_BUSY", "database is locked"),
      sqliteError("SQLITE_LOCKED", "database table is locked"),
      sqliteError("SQLITE_IOERR_READ", "disk I/O error"),
      sqliteError("SQLITE_CANTOPEN", "unable to open database file"),
      sqliteError("SQLITE_READONLY", "attempt to write a readonly database"),
      new Error("memory.db has schema version 9, newer than this plugin knows (5); update the plugin"),
      undefined,
      "not an error",
    ]) {
      expect(corruptionReason(error)).toBeUndefined()
    }
  })
})

describe("moveAside", () => {
  it("moves the diagnosed file and its sidecars to one time-stamped name", () => {
    fs.writeFileSync(`${file}-wal`, "wal")
    fs.writeFileSync(`${file}-shm`, "shm")
    const movedTo = moveAside(file, fileIdentity(file), NOW)
    expect(movedTo).toBe(path.join(dir, STAMPED))
    expect(fs.readdirSync(dir).sort()).toEqual([STAMPED, `${STAMPED}-shm`, `${STAMPED}-wal`])
    expect(fs.readFileSync(movedTo!, "utf8")).toBe("damaged")
  })

  it("never replaces an earlier moved-aside file", () => {
    fs.writeFileSync(path.join(dir, STAMPED), "first")
    fs.writeFileSync(path.join(dir, `${STAMPED}-2-wal`), "second's wal")
    expect(moveAside(file, fileIdentity(file), NOW)).toBe(path.join(dir, `${STAMPED}-3`))
    expect(fs.readFileSync(path.join(dir, STAMPED), "utf8")).toBe("first")
    expect(fs.readFileSync(path.join(dir, `${STAMPED}-3`), "utf8")).toBe("damaged")
  })

  it("moves nothing when the file is no longer the one diagnosed", () => {
    const diagnosed = fileIdentity(file)
    // Another process moved it aside and a fresh database took its place.
    fs.renameSync(file, path.join(dir, "elsewhere"))
    fs.writeFileSync(file, "fresh")
    expect(moveAside(file, diagnosed, NOW)).toBeUndefined()
    expect(moveAside(path.join(dir, "missing.db"), diagnosed, NOW)).toBeUndefined()
    expect(moveAside(file, undefined, NOW)).toBeUndefined()
    expect(fs.readFileSync(file, "utf8")).toBe("fresh")
    expect(fs.existsSync(`${file}.recovering`)).toBe(false)
  })

  it("waits for another process's recovery and then leaves the replaced file alone", async () => {
    const diagnosed = fileIdentity(file)
    const lock = `${file}.recovering`
    fs.writeFileSync(lock, "other")
    // The other recoverer: moves the file, puts a fresh one in its place, then drops its lock.
    const other = spawn("sh", ["-c", 'sleep 0.3; mv "$1" "$1.corrupt-other"; printf fresh > "$1"; rm "$1.recovering"', "sh", file])
    const exited = new Promise((resolve) => other.on("exit", resolve))
    expect(moveAside(file, diagnosed, NOW)).toBeUndefined()
    expect(await exited).toBe(0)
    expect(fs.readFileSync(file, "utf8")).toBe("fresh")
    expect(fs.readdirSync(dir).sort()).toEqual(["memory.db", "memory.db.corrupt-other"])
  })

  it("takes over a lock left by a recovery that died", () => {
    const lock = `${file}.recovering`
    fs.writeFileSync(lock, "dead")
    const old = (Date.now() - 10 * 60_000) / 1000
    fs.utimesSync(lock, old, old)
    expect(moveAside(file, fileIdentity(file), NOW)).toBe(path.join(dir, STAMPED))
    expect(fs.existsSync(lock)).toBe(false)
  })
})
