import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { MemoryError, type MemoryErrorKind } from "../../src/backend/errors.js"
import { compareCodePoints, resolveMemoryEntry, resolveMemoryPath, sortByCodePoints } from "../../src/backend/safe-path.js"

let dir: string
let root: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-safe-path-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(path.join(root, "rollout_summaries"), { recursive: true })
  fs.writeFileSync(path.join(root, "MEMORY.md"), "facts\n")
  fs.writeFileSync(path.join(root, "rollout_summaries", "a.md"), "a\n")
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function failure(relative: string): { kind: MemoryErrorKind; message: string } {
  try {
    resolveMemoryPath(root, relative)
  } catch (error) {
    if (error instanceof MemoryError) return { kind: error.kind, message: error.message }
    throw error
  }
  throw new Error(`"${relative}" resolved`)
}

describe("resolveMemoryPath", () => {
  it("resolves the root from an empty path or a dot", () => {
    expect(resolveMemoryPath(root, "")).toEqual({ absolute: root, relative: "" })
    expect(resolveMemoryPath(root, ".")).toEqual({ absolute: root, relative: "" })
  })

  it("normalizes a relative path, tolerating empty components, dots and a trailing slash", () => {
    const expected = { absolute: path.join(root, "rollout_summaries", "a.md"), relative: "rollout_summaries/a.md" }
    expect(resolveMemoryPath(root, "rollout_summaries/a.md")).toEqual(expected)
    expect(resolveMemoryPath(root, "rollout_summaries//a.md")).toEqual(expected)
    expect(resolveMemoryPath(root, "./rollout_summaries/./a.md")).toEqual(expected)
    expect(resolveMemoryPath(root, "rollout_summaries/").relative).toBe("rollout_summaries")
  })

  it("refuses absolute paths, drive letters, UNC paths and backslashes as invalid paths", () => {
    for (const bad of [path.join(root, "MEMORY.md"), "/MEMORY.md", "C:/memories/MEMORY.md", "c:MEMORY.md", "\\\\server\\share", "rollout_summaries\\a.md"]) {
      expect(failure(bad).kind, bad).toBe("invalid_path")
    }
    expect(failure("/MEMORY.md").message).toMatch(/relative to the memory folder/)
    expect(failure("a\\b").message).toMatch(/separate folders with "\/"/)
  })

  it("refuses any .. component, even one that would stay inside the folder", () => {
    expect(failure("..").kind).toBe("invalid_path")
    expect(failure("rollout_summaries/../MEMORY.md").kind).toBe("invalid_path")
    expect(failure("../memories/MEMORY.md").message).toMatch(/inside the memory folder/)
  })

  it("reports dot-components exactly like missing paths", () => {
    fs.mkdirSync(path.join(root, ".git"))
    fs.writeFileSync(path.join(root, ".env"), "SECRET=1\n")
    fs.writeFileSync(path.join(root, "rollout_summaries", ".hidden.md"), "x\n")
    for (const hidden of [".env", ".git", ".git/config", "rollout_summaries/.hidden.md", ".missing"]) {
      expect(failure(hidden).kind, hidden).toBe("not_found")
    }
    expect(failure(".env").message).toBe(failure(".missing").message.replace(".missing", ".env"))
  })

  it("reports a missing file, a missing folder and a path through a file as not found", () => {
    expect(failure("nope.md").kind).toBe("not_found")
    expect(failure("nope/a.md").kind).toBe("not_found")
    expect(failure("MEMORY.md/a.md").kind).toBe("not_found")
    expect(failure("nope.md").message).toMatch(/memory_list/)
  })

  it("reports a memory folder that does not exist yet as not found", () => {
    fs.rmSync(root, { recursive: true })
    expect(failure("").kind).toBe("not_found")
    expect(failure("MEMORY.md").message).toMatch(/does not exist yet/)
  })

  it("refuses a symlinked file", () => {
    fs.writeFileSync(path.join(dir, "outside.md"), "secret\n")
    fs.symlinkSync(path.join(dir, "outside.md"), path.join(root, "link.md"))
    expect(failure("link.md")).toEqual({ kind: "invalid_path", message: expect.stringMatching(/Symlinks are not followed/) })
  })

  it("refuses a path through a symlinked folder in the middle, even to a file that exists behind it", () => {
    fs.mkdirSync(path.join(dir, "elsewhere", "deep"), { recursive: true })
    fs.writeFileSync(path.join(dir, "elsewhere", "deep", "x.md"), "x\n")
    fs.symlinkSync(path.join(dir, "elsewhere"), path.join(root, "rollout_summaries", "linked"))
    expect(failure("rollout_summaries/linked/deep/x.md").kind).toBe("invalid_path")
    expect(failure("rollout_summaries/linked/deep/x.md").message).toMatch(/"rollout_summaries\/linked" is one/)
    // A symlink to a folder inside the memory folder is refused just the same.
    fs.symlinkSync(path.join(root, "rollout_summaries"), path.join(root, "alias"))
    expect(failure("alias/a.md").kind).toBe("invalid_path")
  })

  it("refuses everything under a symlinked memory folder, the root included", () => {
    const real = path.join(dir, "real")
    fs.renameSync(root, real)
    fs.symlinkSync(real, root)
    expect(failure("").kind).toBe("invalid_path")
    expect(failure("MEMORY.md").message).toMatch(/the memory folder itself is one/)
  })

  it("returns the lstat of the final component", () => {
    expect(resolveMemoryEntry(root, "MEMORY.md").stat.isFile()).toBe(true)
    expect(resolveMemoryEntry(root, "rollout_summaries").stat.isDirectory()).toBe(true)
  })
})

describe("byte order", () => {
  it("orders by code point, where UTF-16 order would put an astral character before U+FFFD", () => {
    expect("\u{1F600}" < "\uFFFD").toBe(true)
    expect(compareCodePoints("\u{1F600}", "\uFFFD")).toBeGreaterThan(0)
    expect(Buffer.compare(Buffer.from("\u{1F600}"), Buffer.from("\uFFFD"))).toBeGreaterThan(0)
  })

  it("sorts like a byte-wise sort of the UTF-8 encodings", () => {
    const names = ["b", "a/b", "a-c", "\uFFFD", "\u{1F600}", "é", "Z", "a"]
    const bytewise = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect(sortByCodePoints([...names], (name) => name)).toEqual(bytewise)
    expect(sortByCodePoints(["b", "a-c", "a/b"], (name) => name)).toEqual(["a-c", "a/b", "b"])
  })
})
