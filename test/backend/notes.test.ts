import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { MemoryError } from "../../src/backend/errors.js"
import { addNote, slugify } from "../../src/backend/notes.js"
import { redact } from "../../src/redact/redact.js"

let root: string
const at = new Date("2026-11-30T08:09:10.123Z")
const deps = () => ({ root, now: () => at, redact })

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-notes-")), "memories")
  fs.mkdirSync(root)
})

describe("addNote", () => {
  it("writes a new time-stamped file under extensions/ad_hoc/notes", () => {
    const written = addNote(deps(), { title: "Prefer pnpm!", note: "Use pnpm, not npm, in acme-web.", sessionId: "ses_1" })
    expect(written.path).toBe("extensions/ad_hoc/notes/2026-11-30T08-09-10-prefer-pnpm.md")
    expect(fs.readFileSync(path.join(root, written.path), "utf8")).toBe(
      "# Prefer pnpm!\n\nNoted 2026-11-30T08:09:10.123Z in session ses_1, at the user's request.\n\nUse pnpm, not npm, in acme-web.\n",
    )
  })

  it("never overwrites: a second note in the same second gets its own file", () => {
    const first = addNote(deps(), { title: "same", note: "one" })
    const second = addNote(deps(), { title: "same", note: "two" })
    expect(second.path).not.toBe(first.path)
    expect(fs.readFileSync(path.join(root, first.path), "utf8")).toContain("one")
  })

  it("redacts secrets before the note reaches the disk", () => {
    const written = addNote(deps(), { title: "deploy key", note: "the token is ghp_0123456789abcdefghijABCDEFGHIJ0123456789" })
    const text = fs.readFileSync(path.join(root, written.path), "utf8")
    expect(text).not.toContain("ghp_0123")
    expect(text).toContain("[REDACTED:github-token]")
    expect(written.redactions).toEqual({ "github-token": 1 })
  })

  it("refuses empty or oversized notes with a clear error", () => {
    expect(() => addNote(deps(), { title: " ", note: "x" })).toThrow(MemoryError)
    expect(() => addNote(deps(), { title: "t", note: "x".repeat(4_001) })).toThrow(/4001 characters; the limit is 4000/)
  })

  it("refuses to write through a symlinked folder", () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.mkdirSync(path.join(root, "extensions"))
    fs.symlinkSync(outside, path.join(root, "extensions", "ad_hoc"))
    expect(() => addNote(deps(), { title: "t", note: "n" })).toThrow(/symlink/)
    expect(fs.readdirSync(outside)).toEqual([])
  })

  it("makes file-name slugs of at most 80 lowercase letters, digits and dashes", () => {
    expect(slugify("Ünïcödé & Spaces -- here")).toBe("unicode-spaces-here")
    expect(slugify("!!!")).toBe("note")
    expect(slugify("a".repeat(200))).toHaveLength(80)
  })
})
