import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { FileCache, transformText } from "../../src/backend/search-cache.js"
import { identityOf, stillValid } from "../../src/backend/search-identity.js"
import { lineText } from "../../src/backend/search-lines.js"
import { FolderCache } from "../../src/backend/search-walk.js"

let dir: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-search-cache-"))
})
afterEach(() => {
  vi.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

function write(name: string, content: string | Buffer): { relative: string; absolute: string; stat: fs.Stats } {
  const absolute = path.join(dir, name)
  fs.mkdirSync(path.dirname(absolute), { recursive: true })
  fs.writeFileSync(absolute, content)
  return { relative: name, absolute, stat: fs.lstatSync(absolute) }
}

/** A clock far enough ahead that every file counts as settled. */
const later = () => Date.now() + 60_000

describe("FileCache", () => {
  it("reuses a settled file while its identity holds, and re-reads it once it changes", () => {
    const cache = new FileCache({ now: later })
    const file = write("a.md", "one\n")
    const first = cache.load(file.relative, file.absolute, file.stat)
    expect(cache.load(file.relative, file.absolute, fs.lstatSync(file.absolute))).toBe(first)
    const changed = write("a.md", "one two\n")
    const second = cache.load(changed.relative, changed.absolute, changed.stat)
    expect(second).not.toBe(first)
    expect(second.original?.text).toBe("one two\n")
  })

  it("does not reuse a read taken while the file was still within the settle time", () => {
    const cache = new FileCache({ settleMs: 60_000 })
    const file = write("a.md", "one\n")
    const first = cache.load(file.relative, file.absolute, file.stat)
    expect(cache.load(file.relative, file.absolute, file.stat)).not.toBe(first)
  })

  it("keeps no text for a binary file, and does not read it again while unchanged", () => {
    const cache = new FileCache({ now: later })
    const file = write("blob.bin", Buffer.from([0x61, 0x00, 0x62]))
    const reads = vi.spyOn(fs, "readFileSync")
    expect(cache.load(file.relative, file.absolute, file.stat).original).toBeUndefined()
    cache.load(file.relative, file.absolute, file.stat)
    expect(reads).toHaveBeenCalledTimes(1)
  })

  it("builds a variant once, shares an unchanged lowercase text, and keeps at most two derived variants", () => {
    const cache = new FileCache({ now: later })
    const lower = write("lower.md", "already lower\n")
    const loaded = cache.load(lower.relative, lower.absolute, lower.stat)
    expect(cache.variant(loaded, "lower")).toBe(loaded.original)

    const mixed = write("mixed.md", "Mixed Case, here!\n")
    const file = cache.load(mixed.relative, mixed.absolute, mixed.stat)
    const lowered = cache.variant(file, "lower")
    expect(lowered?.text).toBe("mixed case, here!\n")
    expect(cache.variant(file, "lower")).toBe(lowered)
    cache.variant(file, "letters-lower")
    cache.variant(file, "letters")
    expect([...file.derived.keys()]).toEqual(["letters-lower", "letters"])
    expect(cache.size.chars).toBe(file.original!.text.length + "mixedcasehere\n".length + "MixedCasehere\n".length + lower.stat.size)
  })

  it("keeps line numbers when lowercasing changes a text's length", () => {
    const cache = new FileCache({ now: later })
    const file = write("turkish.md", "İİİ\nsecond\n")
    const loaded = cache.load(file.relative, file.absolute, file.stat)
    const lowered = cache.variant(loaded, "lower")!
    expect(lowered.text.length).toBeGreaterThan(loaded.original!.text.length)
    expect(lineText(lowered.text, lowered.starts, 1)).toBe("second")
  })

  it("does not keep files beyond its character budget, but still returns them", () => {
    const cache = new FileCache({ now: later, maxChars: 10 })
    const small = write("small.md", "12345\n")
    const big = write("big.md", "1234567890\n")
    expect(cache.load(small.relative, small.absolute, small.stat).kept).toBe(true)
    const loaded = cache.load(big.relative, big.absolute, big.stat)
    expect(loaded.kept).toBe(false)
    expect(loaded.original?.text).toBe("1234567890\n")
    expect(cache.size).toEqual({ files: 1, chars: 6 })
  })

  it("forgets files that are no longer present", () => {
    const cache = new FileCache({ now: later })
    for (const name of ["a.md", "b.md", "c.md"]) {
      const file = write(name, name)
      cache.load(file.relative, file.absolute, file.stat)
    }
    cache.retain(new Set(["b.md"]))
    expect(cache.size).toEqual({ files: 1, chars: 4 })
    cache.clear()
    expect(cache.size).toEqual({ files: 0, chars: 0 })
  })
})

describe("identity", () => {
  it("sees an edit that restores size and mtime, through the ctime it cannot restore", async () => {
    const file = write("a.md", "aaaa\n")
    fs.utimesSync(file.absolute, 1_000_000, 1_000_000)
    const before = fs.lstatSync(file.absolute)
    const identity = identityOf(before, Date.now() + 60_000, 2_000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    fs.writeFileSync(file.absolute, "bbbb\n")
    fs.utimesSync(file.absolute, 1_000_000, 1_000_000)
    const after = fs.lstatSync(file.absolute)
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino])
    expect(stillValid(identity, before)).toBe(true)
    expect(stillValid(identity, after)).toBe(false)
  })
})

describe("transformText", () => {
  it("keeps only letters, digits and line breaks in the normalized forms", () => {
    expect(transformText("Déjà-vu, v2.0!\nNext", "letters-lower")).toBe("déjàvuv20\nnext")
    expect(transformText("Déjà-vu, v2.0!\nNext", "letters")).toBe("Déjàvuv20\nNext")
    expect(transformText("日本語 テキスト", "letters-lower")).toBe("日本語テキスト")
  })
})

describe("FolderCache", () => {
  it("lists regular files recursively in byte order, skipping dot-entries and symlinks", () => {
    write("b.md", "")
    write("a-c.md", "")
    write("a/z.md", "")
    write(".git/HEAD", "")
    write("a/.hidden", "")
    fs.symlinkSync(path.join(dir, "a"), path.join(dir, "loop"))
    fs.symlinkSync(path.join(dir, "b.md"), path.join(dir, "link.md"))
    const folders = new FolderCache({ now: later })
    const { files } = folders.walk({ relative: "", absolute: dir }, fs.lstatSync(dir))
    expect(files.map((file) => file.relative)).toEqual(["a-c.md", "a/z.md", "b.md"])
  })

  it("reuses the last walk while no folder changed, and sees a file added deep down", () => {
    write("a/b/one.md", "")
    const folders = new FolderCache({ now: later })
    const scope = { relative: "", absolute: dir }
    const first = folders.walk(scope, fs.lstatSync(dir))
    const readdir = vi.spyOn(fs, "readdirSync")
    const second = folders.walk(scope, fs.lstatSync(dir))
    expect(second).toEqual({ files: first.files, fresh: false })
    expect(second.files).toBe(first.files)
    expect(readdir).not.toHaveBeenCalled()
    write("a/b/two.md", "")
    const third = folders.walk(scope, fs.lstatSync(dir))
    expect(third.fresh).toBe(true)
    expect(third.files.map((file) => file.relative)).toEqual(["a/b/one.md", "a/b/two.md"])
    expect(readdir).toHaveBeenCalledTimes(1)
  })
})
