import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeEach, describe, expect, it } from "vitest"
import { resetBaseline, workspaceStatus } from "../../../src/write/phase2/git-baseline.js"
import {
  checkV2Summary,
  checkV2SummaryBytes,
  V2_SUMMARY_HEADINGS,
  V2_SUMMARY_LIMIT_BYTES,
  validateV2Artifacts,
} from "../../../src/write/phase2/summary-v2.js"
import { dropSnapshot, restoreSnapshot, takeSnapshot } from "../../../src/write/phase2/run-snapshot.js"
import { prepareWorkspace, syncInputs } from "../../../src/write/phase2/workspace.js"
import { rolloutSummaryStem, type WorkspaceInput } from "../../../src/write/phase2/workspace-files.js"

const VALID = [
  "v1",
  "## User Profile",
  "A backend developer working mostly in Go.",
  "## User preferences",
  "- tabs, not spaces",
  "## General Tips",
  "- run `make test` before pushing",
  "## What's in Memory",
  "### acme-api",
  "#### 2026-11-30",
  "- rollout_summaries/2026-11-30T08-09-10-AbCd-fix_deploy.md — fixed the deploy retry; session=ses_abc",
  "",
].join("\n")

/** VALID padded with a filler line to exactly `bytes` UTF-8 bytes. */
function sized(bytes: number): string {
  const pad = bytes - Buffer.byteLength(VALID) - 1
  const text = `${VALID}${"x".repeat(pad)}\n`
  expect(Buffer.byteLength(text)).toBe(bytes)
  return text
}

let root: string
const summary = () => path.join(root, "memory_summary.md")

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-v2s-")), "memories_v2")
  fs.mkdirSync(root)
})

describe("checkV2Summary", () => {
  it("accepts a summary with the v1 line and the four headings", () => {
    expect(V2_SUMMARY_HEADINGS).toEqual(["## User Profile", "## User preferences", "## General Tips", "## What's in Memory"])
    expect(checkV2Summary(VALID)).toEqual({ valid: true })
    expect(checkV2Summary(VALID.replace(/\n/g, "\r\n"))).toEqual({ valid: true })
  })

  it("judges a file's bytes strictly: invalid UTF-8 or a byte-order mark fails", () => {
    expect(checkV2SummaryBytes(Buffer.from(VALID))).toEqual({ valid: true })
    expect(checkV2SummaryBytes(Buffer.concat([Buffer.from(VALID), Buffer.from([0xff, 0x0a])]))).toEqual({ valid: false, reason: "it is not valid UTF-8" })
    expect(checkV2SummaryBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(VALID)])).valid).toBe(false)
  })

  it("requires the first line to be exactly v1", () => {
    for (const first of ["", "v2", "v1 ", " v1", "V1", "# v1"]) {
      const result = checkV2Summary(VALID.replace(/^v1/, first))
      expect(result).toEqual({ valid: false, reason: `its first line is ${JSON.stringify(first)}, not "v1"` })
    }
    expect(checkV2Summary(`\n${VALID}`).valid).toBe(false)
    expect(checkV2Summary("").valid).toBe(false)
  })

  it("accepts 9,999 bytes and refuses 10,000, counting UTF-8 bytes rather than characters", () => {
    expect(V2_SUMMARY_LIMIT_BYTES).toBe(10_000)
    expect(checkV2Summary(sized(9_999))).toEqual({ valid: true })
    expect(checkV2Summary(sized(10_000))).toEqual({ valid: false, reason: "it is 10000 bytes; it must be under 10000" })
    // 3,400 three-byte characters: short in characters, over the limit in bytes.
    const wide = `${VALID}${"€".repeat(3_400)}\n`
    expect(wide.length).toBeLessThan(10_000)
    expect(checkV2Summary(wide).valid).toBe(false)
  })

  it("names every missing heading", () => {
    const without = VALID.replace("## General Tips\n", "").replace("## What's in Memory\n", "")
    expect(checkV2Summary(without)).toEqual({ valid: false, reason: 'it lacks the heading lines "## General Tips", "## What\'s in Memory"' })
    expect(checkV2Summary(VALID.replace("## User Profile\n", ""))).toEqual({ valid: false, reason: 'it lacks the heading line "## User Profile"' })
  })

  it("matches headings as whole lines, not as substrings or with another level or case", () => {
    const variants = [
      VALID.replace("## User Profile", "### User Profile"),
      VALID.replace("## User Profile", "## User Profile and more"),
      VALID.replace("## User Profile", "- see ## User Profile"),
      VALID.replace("## User Profile", "## User profile"),
    ]
    for (const text of variants) expect(checkV2Summary(text)).toEqual({ valid: false, reason: 'it lacks the heading line "## User Profile"' })
    // Surrounding whitespace on the heading line is ignored, as in Codex's check.
    expect(checkV2Summary(VALID.replace("## User Profile", "  ## User Profile  "))).toEqual({ valid: true })
  })
})

describe("validateV2Artifacts", () => {
  it("accepts a plain folder with a valid summary, MEMORY.md not required", () => {
    fs.writeFileSync(summary(), VALID)
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
  })

  it("refuses a missing, symlinked or non-folder root", () => {
    expect(validateV2Artifacts(path.join(root, "nope"))).toEqual({ valid: false, reason: "the memory folder is missing or not a plain folder" })
    const link = `${root}-link`
    fs.symlinkSync(root, link)
    fs.writeFileSync(summary(), VALID)
    expect(validateV2Artifacts(link).valid).toBe(false)
    expect(fs.existsSync(summary())).toBe(true)
  })

  it("refuses a missing summary, a folder in its place and an invalid one, saying why", () => {
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: "memory_summary.md is missing" })
    fs.mkdirSync(summary())
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: "memory_summary.md is not a regular file" })
    fs.rmdirSync(summary())
    fs.writeFileSync(summary(), VALID.replace("## General Tips\n", ""))
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: 'memory_summary.md: it lacks the heading line "## General Tips"' })
    fs.writeFileSync(summary(), sized(10_000))
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: "memory_summary.md: it is 10000 bytes; it must be under 10000" })
    fs.writeFileSync(summary(), sized(9_999))
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
  })

  it("refuses invalid UTF-8 and a byte-order mark before v1", () => {
    fs.writeFileSync(summary(), Buffer.concat([Buffer.from(VALID), Buffer.from([0xff, 0xfe, 0x0a])]))
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: "memory_summary.md is not a regular file of valid UTF-8" })
    fs.writeFileSync(summary(), `\uFEFF${VALID}`)
    expect(validateV2Artifacts(root).valid).toBe(false)
  })

  it("deletes every symlink outside .git, names them, and fails", () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "secret.md"), "outside")
    fs.writeFileSync(summary(), VALID)
    fs.mkdirSync(path.join(root, "rollout_summaries"))
    fs.mkdirSync(path.join(root, "extensions/ad_hoc/notes"), { recursive: true })
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "rollout_summaries/linked.md"))
    fs.symlinkSync(outside, path.join(root, "extensions/ad_hoc/notes/dir-link"))
    fs.mkdirSync(path.join(root, ".git"))
    fs.symlinkSync(outside, path.join(root, ".git/kept-link"))

    expect(validateV2Artifacts(root)).toEqual({
      valid: false,
      reason: "removed 2 symlinks from the memory folder: extensions/ad_hoc/notes/dir-link, rollout_summaries/linked.md",
    })
    expect(fs.readdirSync(path.join(root, "rollout_summaries"))).toEqual([])
    expect(fs.readdirSync(path.join(root, "extensions/ad_hoc/notes"))).toEqual([])
    // Targets are untouched, .git is not walked, and with the links gone the folder is valid.
    expect(fs.readFileSync(path.join(outside, "secret.md"), "utf8")).toBe("outside")
    expect(fs.lstatSync(path.join(root, ".git/kept-link")).isSymbolicLink()).toBe(true)
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
  })

  it("deletes a symlinked summary instead of reading through it", () => {
    const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-")), "summary.md")
    fs.writeFileSync(target, VALID)
    fs.symlinkSync(target, summary())
    expect(validateV2Artifacts(root)).toEqual({ valid: false, reason: "removed 1 symlink from the memory folder: memory_summary.md" })
    expect(fs.existsSync(summary())).toBe(false)
    expect(fs.readFileSync(target, "utf8")).toBe(VALID)
  })
})

// The order phase 2 is meant to use these pieces in for V2, with a stand-in for the consolidator.
describe("a V2 consolidation, step by step", () => {
  const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
  const now = () => Date.UTC(2026, 10, 30, 12)
  const input: WorkspaceInput = {
    sessionId: "ses_a",
    sourceUpdatedAt: now() - 60_000,
    rawMemory: "",
    rolloutSummary: "Fixed the deploy retry loop.\n",
    slug: "fix deploy",
    cwd: "/home/dev/acme",
  }

  it("keeps the last valid summary through a failed run, and finds nothing to do once it is consolidated", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    await syncInputs(root, [input], { now, layout: "v2" })
    expect((await workspaceStatus(root)).map((c) => c.path)).toContain(`rollout_summaries/${rolloutSummaryStem(input)}.md`)
    expect(validateV2Artifacts(root).valid).toBe(false)

    // A first run whose summary fails: nothing valid existed, so nothing is left behind.
    takeSnapshot(root)
    fs.writeFileSync(summary(), "v1\n## User Profile\n")
    expect(validateV2Artifacts(root).valid).toBe(false)
    expect(restoreSnapshot(root)).toBe(true)
    expect(fs.existsSync(summary())).toBe(false)

    // The retry succeeds: the baseline is reset only now.
    takeSnapshot(root)
    fs.writeFileSync(summary(), VALID)
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
    dropSnapshot(root)
    await resetBaseline(root, now)

    // A later run whose summary fails puts the valid bytes back: the workspace matches the baseline.
    await prepareWorkspace(root, { templatesDir, now })
    await syncInputs(root, [input], { now, layout: "v2" })
    takeSnapshot(root)
    fs.writeFileSync(summary(), `${VALID}${"x".repeat(V2_SUMMARY_LIMIT_BYTES)}\n`)
    expect(validateV2Artifacts(root).valid).toBe(false)
    expect(restoreSnapshot(root)).toBe(true)
    expect(fs.readFileSync(summary(), "utf8")).toBe(VALID)
    expect(await workspaceStatus(root)).toEqual([])
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
    expect(fs.existsSync(path.join(root, "raw_memories.md"))).toBe(false)
  })
})
