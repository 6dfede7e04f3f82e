import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import { READ_MAX_BYTES, selectLines } from "../../src/backend/read.js"

let dir: string
let root: string
let backend: LocalMemoryBackend

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-read-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(path.join(root, "notes"), { recursive: true })
  backend = new LocalMemoryBackend({ root })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function write(relative: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`)

describe("memory_read", () => {
  it("reads a whole file with its line numbers", async () => {
    write("MEMORY.md", "one\ntwo\nthree\n")
    expect(await backend.read({ path: "MEMORY.md" })).toEqual({
      path: "MEMORY.md",
      start_line: 1,
      end_line: 3,
      total_lines: 3,
      content: "one\ntwo\nthree",
      truncated: false,
    })
  })

  it("starts at line_offset and stops after max_lines", async () => {
    write("notes/a.md", numbered(10).join("\n"))
    const result = await backend.read({ path: "notes/a.md", line_offset: 4, max_lines: 3 })
    expect(result).toMatchObject({ path: "notes/a.md", start_line: 4, end_line: 6, total_lines: 10, content: "line 4\nline 5\nline 6", truncated: false })
    expect(result.note).toBeUndefined()
    expect((await backend.read({ path: "notes/a.md", line_offset: 9, max_lines: 5 })).content).toBe("line 9\nline 10")
    expect((await backend.read({ path: "notes/a.md", line_offset: 10 })).content).toBe("line 10")
  })

  it("counts lines like the search does: no empty last line after a final newline, and no carriage returns", async () => {
    write("crlf.md", "a\r\nb\r\n")
    expect(await backend.read({ path: "crlf.md" })).toMatchObject({ total_lines: 2, content: "a\nb" })
    write("blank-end.md", "a\n\n")
    expect(await backend.read({ path: "blank-end.md" })).toMatchObject({ total_lines: 2, content: "a\n" })
  })

  it("reads an empty file as zero lines", async () => {
    write("empty.md", "")
    expect(await backend.read({ path: "empty.md" })).toMatchObject({ start_line: 1, end_line: 0, total_lines: 0, content: "", truncated: false })
  })

  it("refuses a line_offset past the end, saying how many lines the file has", async () => {
    write("MEMORY.md", "one\ntwo\n")
    await expect(backend.read({ path: "MEMORY.md", line_offset: 3 })).rejects.toMatchObject({
      kind: "invalid_argument",
      message: expect.stringMatching(/has 2 lines.*from 1 to 2/),
    })
  })

  it("refuses line_offset and max_lines that are not whole numbers of at least 1", async () => {
    write("MEMORY.md", "one\n")
    for (const bad of [{ line_offset: 0 }, { line_offset: 1.5 }, { max_lines: 0 }, { max_lines: -2 }]) {
      await expect(backend.read({ path: "MEMORY.md", ...bad })).rejects.toMatchObject({ kind: "invalid_argument" })
    }
  })

  it("refuses a folder, pointing to memory_list", async () => {
    await expect(backend.read({ path: "notes" })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/memory_list/) })
    await expect(backend.read({ path: "" })).rejects.toMatchObject({ kind: "invalid_argument" })
  })

  it("treats hidden paths as absent", async () => {
    write(".env", "SECRET=1\n")
    write("notes/.draft.md", "x\n")
    await expect(backend.read({ path: ".env" })).rejects.toMatchObject({ kind: "not_found" })
    await expect(backend.read({ path: "notes/.draft.md" })).rejects.toMatchObject({ kind: "not_found" })
  })

  it("refuses a symlinked file without reading what it points to", async () => {
    fs.writeFileSync(path.join(dir, "secret.txt"), "secret\n")
    fs.symlinkSync(path.join(dir, "secret.txt"), path.join(root, "notes", "link.md"))
    await expect(backend.read({ path: "notes/link.md" })).rejects.toMatchObject({ kind: "invalid_path" })
  })

  it("decodes invalid UTF-8 and binary bytes with replacement characters instead of failing", async () => {
    write("bin.dat", Buffer.from([0x61, 0xff, 0xfe, 0x0a, 0x00, 0xc3, 0x0a, 0x62]))
    const result = await backend.read({ path: "bin.dat" })
    expect(result.total_lines).toBe(3)
    expect(result.content).toBe("a\uFFFD\uFFFD\n\u0000\uFFFD\nb")
  })

  it("cuts the output at 256 KiB on a line boundary, and says where to continue", async () => {
    const line = "x".repeat(1023)
    write("big.md", Array.from({ length: 600 }, () => line).join("\n"))
    const first = await backend.read({ path: "big.md" })
    expect(first.truncated).toBe(true)
    expect(first.start_line).toBe(1)
    expect(first.end_line).toBe(256)
    expect(Buffer.byteLength(first.content)).toBeLessThanOrEqual(READ_MAX_BYTES)
    expect(first.content.split("\n")).toHaveLength(256)
    expect(first.note).toMatch(/256 KiB/)
    expect(first.note).toMatch(/lines 1 to 256 of 600/)
    expect(first.note).toMatch(/line_offset 257/)
    const next = await backend.read({ path: "big.md", line_offset: 257 })
    expect(next).toMatchObject({ start_line: 257, end_line: 512, truncated: true })
    const last = await backend.read({ path: "big.md", line_offset: 513 })
    expect(last).toMatchObject({ start_line: 513, end_line: 600, truncated: false })
  })

  it("cuts a single over-long line on a character boundary, never inside a multi-byte character", async () => {
    write("long.md", `short\n${"é".repeat(200_000)}\nafter\n`)
    const result = await backend.read({ path: "long.md", line_offset: 2 })
    expect(result).toMatchObject({ start_line: 2, end_line: 2, total_lines: 3, truncated: true })
    expect(result.content).toBe("é".repeat(READ_MAX_BYTES / 2))
    expect(result.note).toMatch(/Line 2 alone is longer/)
    expect(result.note).toMatch(/line_offset 3/)
  })
})

describe("selectLines", () => {
  it("fits as many whole lines as the byte budget allows, counting the newlines between them", () => {
    const text = "aaaa\nbbbb\ncccc"
    expect(selectLines(text, 1, Infinity, 9)).toMatchObject({ end_line: 2, content: "aaaa\nbbbb", truncated: true })
    expect(selectLines(text, 1, Infinity, 8)).toMatchObject({ end_line: 1, content: "aaaa", truncated: true })
    expect(selectLines(text, 1, Infinity, 14)).toMatchObject({ end_line: 3, truncated: false })
  })

  it("never splits a surrogate pair when cutting inside a line", () => {
    const cut = selectLines("🙂🙂🙂", 1, Infinity, 7)
    expect(cut.content).toBe("🙂")
    expect(cut.truncated).toBe(true)
  })
})
