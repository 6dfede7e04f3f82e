// Summaries too large to read whole, and bytes that are not UTF-8.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { READ_PATH } from "../../src/constants.js"
import { loadReadPathTemplates, renderMemoryBlock } from "../../src/read/render.js"
import { SummaryFile, type SummaryRead } from "../../src/read/summary-file.js"
import { truncateMiddle } from "../../src/util/tokens.js"

const MiB = 1024 * 1024
const templates = loadReadPathTemplates(fileURLToPath(new URL("../../templates", import.meta.url)))
let dir: string
let root: string
let file: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-summary-large-"))
  root = path.join(dir, "memories")
  file = path.join(root, "memory_summary.md")
  fs.mkdirSync(root)
})
afterEach(() => {
  vi.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Writes `head`, then `middle` repeated up to about `bytes`, then `tail`; returns the whole text. */
function writeLarge(head: string, middle: string, bytes: number, tail: string): string {
  const chunk = middle.repeat(Math.ceil(MiB / Buffer.byteLength(middle)))
  const times = Math.ceil(bytes / Buffer.byteLength(chunk))
  const fd = fs.openSync(file, "w")
  try {
    fs.writeSync(fd, head)
    for (let i = 0; i < times; i++) fs.writeSync(fd, chunk)
    fs.writeSync(fd, tail)
  } finally {
    fs.closeSync(fd)
  }
  return head + chunk.repeat(times) + tail
}

const present = (read: SummaryRead) => {
  expect(read.kind).toBe("present")
  return read as Extract<SummaryRead, { kind: "present" }>
}

const block = (read: Extract<SummaryRead, { kind: "present" }>) =>
  renderMemoryBlock(templates, { memoryRoot: "/m", summary: read.text, summaryCut: read.cut, dedicatedTools: true })

describe("SummaryFile with a summary over 1 MiB", () => {
  it("reads a 50 MB summary by its ends and renders exactly the block the whole text would", () => {
    const head = `\n\n  v1\n# HEAD-MARK\n${"head line with ascii only\n".repeat(400)}`
    const tail = `${"tail line with ascii only\n".repeat(400)}TAIL-MARK\n\n`
    // The middle is valid UTF-8 of 1 to 4 bytes a character; only the ends are ASCII.
    const whole = writeLarge(head, "middle é ß € 中 🙂 text\n", 50 * MiB, tail)
    const readSync = vi.spyOn(fs, "readSync")
    const readFileSync = vi.spyOn(fs, "readFileSync")
    const summary = new SummaryFile(root, file, () => undefined)
    const read = present(summary.read())

    expect(read.cut).toBe(true)
    expect(read.text).toBe(truncateMiddle(whole.trim(), READ_PATH.SUMMARY_TOKEN_LIMIT))
    expect(block(read)).toBe(renderMemoryBlock(templates, { memoryRoot: "/m", summary: whole.trim(), dedicatedTools: true }))
    expect(readFileSync).not.toHaveBeenCalled()
    const bytesRead = readSync.mock.calls.reduce((sum, call) => sum + Number(call[3]), 0)
    expect(bytesRead).toBeLessThan(64 * 1024)
  })

  it("widens its windows past whitespace padding at both ends", () => {
    const pad = " \n\t".repeat(100_000)
    const whole = writeLarge(`${pad}\u3000v1\nHEAD é`, "x".repeat(99) + "\n", 2 * MiB, `🙂 TAIL\u00a0${pad}`)
    const read = present(new SummaryFile(root, file, () => undefined).read())
    expect(read.text).toBe(truncateMiddle(whole.trim(), READ_PATH.SUMMARY_TOKEN_LIMIT))
    expect(read.text.startsWith("v1\nHEAD é")).toBe(true)
    expect(read.text.endsWith("🙂 TAIL")).toBe(true)
  })

  it("reads a large file of whitespace as absent, and one with a little text in it whole", () => {
    writeLarge("", " \n", 2 * MiB, "")
    const summary = new SummaryFile(root, file, () => undefined)
    expect(summary.read()).toEqual({ kind: "absent" })
    writeLarge("", "\n", 2 * MiB, "v1\nonly this\n")
    expect(summary.read()).toEqual({ kind: "present", text: "v1\nonly this" })
  })

  it("reports the cap once per version of the file, not once per turn", () => {
    writeLarge("v1\n", "filler line\n", 2 * MiB, "end\n")
    const notices: string[] = []
    const refusals: string[] = []
    const summary = new SummaryFile(root, file, (reason) => refusals.push(reason), (notice) => notices.push(notice))
    summary.read()
    summary.read()
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/memory_summary\.md is \d+ bytes; only its first and last bytes were read/)
    writeLarge("v1\n", "other filler\n", 3 * MiB, "end\n")
    summary.read()
    expect(notices).toHaveLength(2)
    expect(refusals).toEqual([])
  })

  it("reads a summary of up to 1 MiB whole, as before", () => {
    const text = `v1\n${"a".repeat(MiB - 4)}\n`
    fs.writeFileSync(file, text)
    expect(Buffer.byteLength(text)).toBe(MiB)
    const notices: string[] = []
    const read = present(new SummaryFile(root, file, () => undefined, (notice) => notices.push(notice)).read())
    expect(read).toEqual({ kind: "present", text: text.trim() })
    expect(notices).toEqual([])
  })
})

describe("SummaryFile with bytes that are not UTF-8", () => {
  const invalid = Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xed, 0xa0, 0x80])

  it("replaces invalid bytes in a small summary instead of throwing", () => {
    fs.writeFileSync(file, Buffer.concat([Buffer.from("v1\nbefore "), invalid, Buffer.from(" after\n")]))
    const read = present(new SummaryFile(root, file, () => undefined).read())
    expect(read.text.startsWith("v1\nbefore ")).toBe(true)
    expect(read.text.endsWith(" after")).toBe(true)
    expect(read.text).toContain("\uFFFD")
    expect(block(read)).toContain("\uFFFD")
  })

  it("replaces invalid bytes at the ends of a large summary instead of throwing", () => {
    const fd = fs.openSync(file, "w")
    fs.writeSync(fd, Buffer.concat([Buffer.from("v1\n"), invalid]))
    fs.writeSync(fd, Buffer.alloc(2 * MiB, "m"))
    fs.writeSync(fd, Buffer.concat([invalid, Buffer.from("\nend")]))
    fs.closeSync(fd)
    const read = present(new SummaryFile(root, file, () => undefined).read())
    expect(read.cut).toBe(true)
    expect(read.text.startsWith("v1\n\uFFFD")).toBe(true)
    expect(read.text.endsWith("\uFFFD\nend")).toBe(true)
    expect(read.text).toMatch(/\[\.\.\. \d+ tokens truncated \.\.\.\]/)
  })
})
