// Writing a file of the memory folder on a disk that fills halfway: the old bytes or none, never
// a file cut short, and no temporary file left beside it.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createFile, linkFile, replaceFile } from "../../src/util/regular-file.js"
import { FullDisk } from "../fakes/full-disk.js"

let dir: string
let disk: FullDisk
const names = () => fs.readdirSync(dir).sort()

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-file-"))
  disk = new FullDisk().install()
})
afterEach(() => disk.restore())

describe("replaceFile", () => {
  it("keeps the old bytes when the disk fills halfway through the new ones", () => {
    const file = path.join(dir, "memory_summary.md")
    replaceFile(file, "v1\nthe old summary\n")
    disk.full = true
    expect(() => replaceFile(file, "v1\na much longer new summary that does not fit\n")).toThrow(/ENOSPC/)
    expect(fs.readFileSync(file, "utf8")).toBe("v1\nthe old summary\n")
    expect(names()).toEqual(["memory_summary.md"])
  })

  it("replaces a symlink in the way rather than writing through it", () => {
    const outside = path.join(dir, "outside.md")
    fs.writeFileSync(outside, "not memory")
    fs.symlinkSync(outside, path.join(dir, "MEMORY.md"))
    replaceFile(path.join(dir, "MEMORY.md"), "# memory\n")
    expect(fs.lstatSync(path.join(dir, "MEMORY.md")).isFile()).toBe(true)
    expect(fs.readFileSync(outside, "utf8")).toBe("not memory")
  })
})

describe("createFile", () => {
  it("leaves no file at all when the disk fills halfway", () => {
    disk.full = true
    expect(() => createFile(path.join(dir, "note.md"), "# A note\n\nwith a body\n")).toThrow(/ENOSPC/)
    expect(names()).toEqual([])
  })

  it("refuses a name already taken, by a file or a symlink, and leaves it alone", () => {
    fs.writeFileSync(path.join(dir, "note.md"), "first")
    fs.symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "link.md"))
    expect(() => createFile(path.join(dir, "note.md"), "second")).toThrow(expect.objectContaining({ code: "EEXIST" }))
    expect(() => createFile(path.join(dir, "link.md"), "second")).toThrow(expect.objectContaining({ code: "EEXIST" }))
    expect(fs.readFileSync(path.join(dir, "note.md"), "utf8")).toBe("first")
    expect(fs.existsSync(path.join(dir, "elsewhere"))).toBe(false)
    expect(names()).toEqual(["link.md", "note.md"])
  })
})

describe("linkFile", () => {
  it("puts a copy in place on a disk too full to write one", () => {
    const kept = path.join(dir, "kept.md")
    fs.writeFileSync(kept, "v1\nas it was\n")
    const file = path.join(dir, "memory_summary.md")
    fs.writeFileSync(file, "v1\nhalf-wri")
    disk.full = true
    linkFile(kept, file)
    expect(fs.readFileSync(file, "utf8")).toBe("v1\nas it was\n")
    expect(names()).toEqual(["kept.md", "memory_summary.md"])
  })
})
