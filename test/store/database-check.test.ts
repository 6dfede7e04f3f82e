// What opening a database checks: every page by default (the plugin's memory.db, once per start),
// or the header and schema only (the search index, the command-line tool), which still refuses a
// file that is not a database but leaves damage past the schema to be met, and reported, in use.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { corruptionReason } from "../../src/store/recovery.js"
import { runCliIn } from "../cli/run-cli.js"
import { populated } from "./storage-suite.js"

let dir: string
let file: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-check-"))
  file = path.join(dir, "memory.db")
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/**
 * A memory.db of 2,000 sessions with the pages holding the middle session scribbled over (its
 * table's and its index's): found by content, so new tables elsewhere in the file do not move it.
 */
function damagedInTheMiddle(): void {
  populated(file)
  const bytes = fs.readFileSync(file)
  const pageSize = bytes.readUInt16BE(16)
  const pages = new Set<number>()
  for (let at = bytes.indexOf("ses_01000_"); at >= 0; at = bytes.indexOf("ses_01000_", at + 1)) pages.add(Math.floor(at / pageSize))
  expect(pages.size).toBeGreaterThan(0)
  expect(pages.has(0)).toBe(false)
  for (const page of pages) bytes.fill(0xa5, page * pageSize, (page + 1) * pageSize)
  fs.writeFileSync(file, bytes)
}

const movedAside = () => fs.readdirSync(dir).filter((name) => name.includes(".corrupt-"))

describe("opening with check: header", () => {
  it("opens a database damaged past its schema without reading that far; the damage is met in use, and nothing is moved", () => {
    damagedInTheMiddle()
    const { db, recovered } = openDatabase(file, { check: "header" })
    try {
      expect(recovered).toBeUndefined()
      let failure: unknown
      try {
        db.prepare("SELECT COUNT(*) AS n, MAX(length(session_id)) AS m FROM session_meta").get()
      } catch (error) {
        failure = error
      }
      expect(corruptionReason(failure)).toBeDefined()
    } finally {
      db.close()
    }
    expect(movedAside()).toEqual([])
    // The default check still finds it at open, and moves it aside.
    const full = openDatabase(file)
    full.db.close()
    expect(full.recovered?.reason).toMatch(/quick_check|malformed/)
  })

  it("still refuses a file that is not a database, moving it aside", () => {
    fs.writeFileSync(file, "this is not a database at all ".repeat(300))
    const { db, recovered } = openDatabase(file, { check: "header" })
    db.close()
    expect(recovered?.reason).toMatch(/not a database/)
    expect(movedAside()).toHaveLength(1)
  })

  it("the command-line tool reports damage met during a command as a damaged database (exit 3) and leaves the file where it is", async () => {
    damagedInTheMiddle()
    // Every page but the first (the header and the schema): whatever the command reads is damaged.
    const bytes = fs.readFileSync(file)
    bytes.fill(0xa5, bytes.readUInt16BE(16))
    fs.writeFileSync(file, bytes)
    const before = fs.readFileSync(file)
    const ran = await runCliIn(dir, ["modes", "--home", dir], Date.UTC(2026, 11, 1))
    expect(ran).toMatchObject({ code: 3, json: { error: { code: "corrupt_database" } } })
    expect(fs.readFileSync(file).equals(before)).toBe(true)
    expect(movedAside()).toEqual([])
  })
})
