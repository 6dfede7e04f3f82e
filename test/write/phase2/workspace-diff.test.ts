import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { renderWorkspaceDiff, writeWorkspaceDiff, WORKSPACE_DIFF_MAX_BYTES } from "../../../src/write/phase2/workspace-diff.js"
import { expectGolden } from "../../golden/golden.js"

const DIFF = [
  "diff --git a/MEMORY.md b/MEMORY.md",
  "--- a/MEMORY.md",
  "+++ b/MEMORY.md",
  "@@ -1,3 +1,3 @@",
  " # Memory",
  "-- uses npm",
  "+- uses pnpm",
  " - CI runs in UTC",
  "diff --git a/rollout_summaries/2026-11-30T08-09-10-ssyM.md b/rollout_summaries/2026-11-30T08-09-10-ssyM.md",
  "deleted file mode 100644",
  "--- a/rollout_summaries/2026-11-30T08-09-10-ssyM.md",
  "+++ /dev/null",
  "@@ -1,1 +0,0 @@",
  "-forgotten session",
  "",
].join("\n")

const bytes = (text: string) => Buffer.byteLength(text)

describe("renderWorkspaceDiff", () => {
  it("renders a title, a do-not-edit line, the status list and the diff in a fenced block", () => {
    const text = renderWorkspaceDiff(
      [
        { status: "M", path: "MEMORY.md" },
        { status: "D", path: "rollout_summaries/2026-11-30T08-09-10-ssyM.md" },
      ],
      DIFF,
    )
    expectGolden("workspace_diff.md", text)
    expect(text).toBe(renderWorkspaceDiff([{ status: "M", path: "MEMORY.md" }, { status: "D", path: "rollout_summaries/2026-11-30T08-09-10-ssyM.md" }], DIFF))
  })

  it("says none when nothing changed, with no diff section", () => {
    expectGolden("workspace_diff.none.md", renderWorkspaceDiff([], ""))
  })

  it("uses a fence longer than any backtick run in the diff", () => {
    const text = renderWorkspaceDiff([{ status: "A", path: "skills/x/SKILL.md" }], "+````bash\n+ls\n+````\n")
    expect(text).toContain("\n`````diff\n+````bash\n+ls\n+````\n`````\n")
  })

  it("keeps a path with a newline on one status line", () => {
    expect(renderWorkspaceDiff([{ status: "A", path: "a\nb.md" }], "")).toContain('- A "a\\nb.md"\n')
  })

  it("redacts secrets a hand-edited file brings into the diff", () => {
    const text = renderWorkspaceDiff([{ status: "M", path: "MEMORY.md" }], "+- deploy key ghp_0123456789abcdefghijABCDEFGHIJ0123456789\n")
    expect(text).toContain("+- deploy key [REDACTED:github-token]\n")
  })

  it("caps the file at 4 MiB with a marker line, cutting at a line end", () => {
    const line = "+- a remembered fact, with a multi-byte ünïcödé character or two\n"
    const text = renderWorkspaceDiff([{ status: "M", path: "MEMORY.md" }], line.repeat(Math.ceil((6 * 1024 * 1024) / bytes(line))))
    expect(bytes(text)).toBeLessThanOrEqual(WORKSPACE_DIFF_MAX_BYTES)
    expect(bytes(text)).toBeGreaterThan(WORKSPACE_DIFF_MAX_BYTES - 2 * bytes(line))
    expect(text).toMatch(/\n\+- a remembered fact[^\n]*\n\[workspace diff truncated at 4194304 bytes: the whole diff is \d+ bytes and the rest is not shown\]\n```\n$/)
    expect(text).not.toContain("\ufffd")
  })

  it("holds the cap for a single line longer than the cap, keeping what fits of it without splitting a character", () => {
    const text = renderWorkspaceDiff([{ status: "A", path: "big.md" }], `+${"é".repeat(3 * 1024 * 1024)}`)
    expect(bytes(text)).toBeLessThanOrEqual(WORKSPACE_DIFF_MAX_BYTES)
    expect(bytes(text)).toBeGreaterThan(WORKSPACE_DIFF_MAX_BYTES - 512)
    expect(text).not.toContain("\ufffd")
    expect(text).toContain("\n[workspace diff truncated at 4194304 bytes:")
  })

  it("holds the cap even when the status list alone is longer than the cap", () => {
    const changes = Array.from({ length: 80_000 }, (_, i) => ({ status: "A", path: `rollout_summaries/${String(i).padStart(8, "0")}-a-long-file-name-for-the-status.md` }))
    const text = renderWorkspaceDiff(changes, "+x\n")
    expect(bytes(text)).toBeLessThanOrEqual(WORKSPACE_DIFF_MAX_BYTES)
    expect(text).not.toContain("## Diff")
    expect(text.endsWith("the rest is not shown]\n")).toBe(true)
  })
})

describe("writeWorkspaceDiff", () => {
  it("replaces the file and never writes through a symlink in its place", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-wd-"))
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-")), "target.md")
    fs.writeFileSync(outside, "outside")
    fs.symlinkSync(outside, path.join(root, "phase2_workspace_diff.md"))
    await writeWorkspaceDiff(root, "first\n")
    await writeWorkspaceDiff(root, "second\n")
    expect(fs.readFileSync(outside, "utf8")).toBe("outside")
    expect(fs.lstatSync(path.join(root, "phase2_workspace_diff.md")).isFile()).toBe(true)
    expect(fs.readFileSync(path.join(root, "phase2_workspace_diff.md"), "utf8")).toBe("second\n")
  })
})
