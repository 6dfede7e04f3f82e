import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LIST_MAX_RESULTS } from "../../src/backend/list.js"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import type { ListEntry } from "../../src/backend/requests.js"

let dir: string
let root: string
let backend: LocalMemoryBackend

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-list-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(root)
  backend = new LocalMemoryBackend({ root })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function write(relative: string, content = ""): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

describe("memory_list", () => {
  it("lists one folder shallowly, in byte order, with file sizes", async () => {
    write("b.md", "bb")
    write("MEMORY.md", "memory")
    write("a-c.md")
    write("rollout_summaries/x.md", "deep")
    write("é.md", "e")
    const result = await backend.list({})
    expect(result).toEqual({
      path: "",
      total: 5,
      entries: [
        { path: "MEMORY.md", type: "file", size: 6 },
        { path: "a-c.md", type: "file", size: 0 },
        { path: "b.md", type: "file", size: 2 },
        { path: "rollout_summaries", type: "directory" },
        { path: "é.md", type: "file", size: 1 },
      ],
    })
  })

  it("names entries of a subfolder by their path from the memory root", async () => {
    write("rollout_summaries/2026-01-02T00-00-00-b.md")
    write("rollout_summaries/2026-01-01T00-00-00-a.md")
    const result = await backend.list({ path: "rollout_summaries/" })
    expect(result.path).toBe("rollout_summaries")
    expect(result.entries.map((entry) => entry.path)).toEqual([
      "rollout_summaries/2026-01-01T00-00-00-a.md",
      "rollout_summaries/2026-01-02T00-00-00-b.md",
    ])
  })

  it("leaves out dot-entries and symlinks, and never follows a symlinked folder", async () => {
    write(".env", "SECRET=1")
    write(".git/config")
    write("kept.md")
    fs.mkdirSync(path.join(dir, "outside"))
    fs.writeFileSync(path.join(dir, "outside", "secret.md"), "secret")
    fs.symlinkSync(path.join(dir, "outside"), path.join(root, "linked-folder"))
    fs.symlinkSync(path.join(dir, "outside", "secret.md"), path.join(root, "linked-file.md"))
    const result = await backend.list({ path: "" })
    expect(result.entries).toEqual([{ path: "kept.md", type: "file", size: 0 }])
    expect(result.total).toBe(1)
    await expect(backend.list({ path: "linked-folder" })).rejects.toMatchObject({ kind: "invalid_path" })
    await expect(backend.list({ path: ".git" })).rejects.toMatchObject({ kind: "not_found" })
  })

  it("pages with an opaque cursor that ends on the last page", async () => {
    for (let i = 0; i < 7; i++) write(`f${i}.md`)
    const seen: ListEntry[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await backend.list({ max_results: 3, ...(cursor ? { cursor } : {}) })
      expect(page.total).toBe(7)
      seen.push(...page.entries)
      cursor = page.next_cursor
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen.map((entry) => entry.path)).toEqual(["f0.md", "f1.md", "f2.md", "f3.md", "f4.md", "f5.md", "f6.md"])
  })

  it("continues after the last returned entry even when entries were added or removed between pages", async () => {
    for (const name of ["a", "c", "e", "g"]) write(`${name}.md`)
    const first = await backend.list({ max_results: 2 })
    expect(first.entries.map((entry) => entry.path)).toEqual(["a.md", "c.md"])
    fs.rmSync(path.join(root, "a.md"))
    write("b.md")
    write("d.md")
    const second = await backend.list({ max_results: 2, cursor: first.next_cursor! })
    expect(second.entries.map((entry) => entry.path)).toEqual(["d.md", "e.md"])
  })

  it("has no next_cursor when everything fits", async () => {
    write("a.md")
    expect((await backend.list({ max_results: 1 })).next_cursor).toBeUndefined()
  })

  it("refuses a cursor from another folder or one it never returned", async () => {
    write("a.md")
    write("b.md")
    write("sub/c.md")
    write("sub/d.md")
    const { next_cursor } = await backend.list({ max_results: 1 })
    await expect(backend.list({ path: "sub", cursor: next_cursor! })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/different path/) })
    await expect(backend.list({ cursor: "not-a-cursor" })).rejects.toMatchObject({ kind: "invalid_argument" })
  })

  it("lowers max_results above the maximum to it, and refuses one below 1", async () => {
    for (let i = 0; i < 3; i++) write(`f${i}.md`)
    expect((await backend.list({ max_results: LIST_MAX_RESULTS * 10 })).entries).toHaveLength(3)
    await expect(backend.list({ max_results: 0 })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/max_results/) })
  })

  it("returns at most the maximum by default", async () => {
    for (let i = 0; i < LIST_MAX_RESULTS + 5; i++) fs.closeSync(fs.openSync(path.join(root, `f${String(i).padStart(5, "0")}.md`), "w"))
    const page = await backend.list({})
    expect(page.entries).toHaveLength(LIST_MAX_RESULTS)
    expect(page.total).toBe(LIST_MAX_RESULTS + 5)
    expect((await backend.list({ cursor: page.next_cursor! })).entries).toHaveLength(5)
  })

  it("refuses to list a file, pointing to memory_read", async () => {
    write("MEMORY.md")
    await expect(backend.list({ path: "MEMORY.md" })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/memory_read/) })
  })

  it("reports a missing folder as not found", async () => {
    await expect(backend.list({ path: "nope" })).rejects.toMatchObject({ kind: "not_found" })
  })
})
