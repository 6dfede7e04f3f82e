import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { SummaryFile } from "../../src/read/summary-file.js"

let dir: string
let root: string
let file: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-summary-"))
  root = path.join(dir, "memories")
  file = path.join(root, "memory_summary.md")
  fs.mkdirSync(root)
})
afterEach(() => {
  vi.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("SummaryFile", () => {
  it("reads the trimmed summary, and reports a missing or blank one as absent", () => {
    const summary = new SummaryFile(root, file, () => undefined)
    expect(summary.read()).toEqual({ kind: "absent" })
    fs.writeFileSync(file, "  \n\t\n")
    expect(summary.read()).toEqual({ kind: "absent" })
    fs.writeFileSync(file, "\nv1\nfacts\n\n")
    expect(summary.read()).toEqual({ kind: "present", text: "v1\nfacts" })
  })

  it("stats once per call and reads the file only when its identity changes", () => {
    fs.writeFileSync(file, "v1\nfirst")
    const summary = new SummaryFile(root, file, () => undefined)
    const lstat = vi.spyOn(fs, "lstatSync")
    const read = vi.spyOn(fs, "readFileSync")
    const first = summary.read()
    const second = summary.read()
    expect(second).toBe(first)
    expect(read).toHaveBeenCalledTimes(1)
    expect(lstat.mock.calls.filter(([p]) => p === file)).toHaveLength(2)
    // A rewrite with a new size is noticed without any invalidation.
    fs.writeFileSync(file, "v1\nsecond, longer")
    expect(summary.read()).toEqual({ kind: "present", text: "v1\nsecond, longer" })
    expect(read).toHaveBeenCalledTimes(2)
  })

  it("re-reads an edit that keeps size and mtime once invalidated", () => {
    fs.writeFileSync(file, "v1\naaaa")
    fs.utimesSync(file, 1_000_000, 1_000_000)
    const summary = new SummaryFile(root, file, () => undefined)
    summary.read()
    // Same inode (rewritten in place), same size, same whole-second mtime: invisible to the stat.
    fs.writeFileSync(file, "v1\nbbbb")
    fs.utimesSync(file, 1_000_000, 1_000_000)
    expect(summary.read()).toEqual({ kind: "present", text: "v1\naaaa" })
    summary.invalidate()
    expect(summary.read()).toEqual({ kind: "present", text: "v1\nbbbb" })
  })

  it("refuses a symlinked summary, warning once", () => {
    const elsewhere = path.join(dir, "elsewhere.md")
    fs.writeFileSync(elsewhere, "v1\nsecret plans")
    fs.symlinkSync(elsewhere, file)
    const refusals: string[] = []
    const summary = new SummaryFile(root, file, (reason) => refusals.push(reason))
    expect(summary.read().kind).toBe("refused")
    expect(summary.read().kind).toBe("refused")
    expect(refusals).toHaveLength(1)
    expect(refusals[0]).toMatch(/symlink/)
  })

  it("refuses a symlinked memory folder", () => {
    const real = path.join(dir, "real")
    fs.mkdirSync(real)
    fs.writeFileSync(path.join(real, "memory_summary.md"), "v1\nfacts")
    fs.rmSync(root, { recursive: true })
    fs.symlinkSync(real, root)
    const refusals: string[] = []
    expect(new SummaryFile(root, file, (reason) => refusals.push(reason)).read().kind).toBe("refused")
    expect(refusals[0]).toMatch(/memory folder .* is a symlink/)
  })

  it("refuses a summary that is not a regular file", () => {
    fs.mkdirSync(file)
    expect(new SummaryFile(root, file, () => undefined).read().kind).toBe("refused")
  })

  it("does not cache a failed read", () => {
    fs.writeFileSync(file, "v1\nok")
    const summary = new SummaryFile(root, file, () => undefined)
    const open = vi.spyOn(fs, "openSync").mockImplementationOnce(() => {
      throw new Error("EIO")
    })
    expect(() => summary.read()).toThrow("EIO")
    open.mockRestore()
    expect(summary.read()).toEqual({ kind: "present", text: "v1\nok" })
  })
})
