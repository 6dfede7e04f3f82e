// Codex's V2 summary check, ported: `is_valid_v2_summary` and its test
// `v2_accepts_summary_only_and_checks_its_format_and_size` in codex-rs/memories/write/src/
// workspace.rs and workspace_tests.rs (zibuyu2015831/codex@67e69213, a downstream mirror: the
// V2 sources are not in openai/codex's index).
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { checkV2Summary, validateV2Artifacts } from "../../src/write/phase2/summary-v2.js"

// The summary of Codex's test, byte for byte.
const CODEX_VALID = "v1\n\n## User Profile\nProfile\n## User preferences\nPreferences\n## General Tips\nTips\n## What's in Memory\nIndex\n"

describe("the V2 summary check as Codex's workspace tests expect", () => {
  // workspace_tests.rs: v2_accepts_summary_only_and_checks_its_format_and_size.
  it("accepts Codex's summary with no MEMORY.md, and refuses a v2 first line and a 10,000-byte body", () => {
    expect(checkV2Summary(CODEX_VALID)).toEqual({ valid: true })
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conf-v2s-"))
    fs.writeFileSync(path.join(root, "memory_summary.md"), CODEX_VALID)
    // Only the summary is required: no MEMORY.md, as in Codex's V2 branch.
    expect(validateV2Artifacts(root)).toEqual({ valid: true })
    expect(checkV2Summary("v2\nsummary").valid).toBe(false)
    expect(checkV2Summary(`v1\n${"x".repeat(10_000)}`).valid).toBe(false)
  })

  // is_valid_v2_summary reads lines as Rust's str::lines does: `\r\n` ends a line like `\n`.
  it("reads CRLF line ends as Codex does, and the first line must be exactly v1", () => {
    expect(checkV2Summary(CODEX_VALID.replace(/\n/g, "\r\n"))).toEqual({ valid: true })
    for (const first of ["v1 ", " v1", "V1", "\uFEFFv1"]) expect(checkV2Summary(CODEX_VALID.replace(/^v1/, first)).valid).toBe(false)
  })

  // Rust's trim strips Unicode White_Space: NEL (U+0085) and the ideographic space go, a
  // byte-order mark (not White_Space) stays and so hides the heading.
  it("trims a heading line by Rust's whitespace, not JavaScript's", () => {
    expect(checkV2Summary(CODEX_VALID.replace("## User Profile", "\u0085## User Profile\u3000"))).toEqual({ valid: true })
    expect(checkV2Summary(CODEX_VALID.replace("## User Profile", "\uFEFF## User Profile"))).toEqual({
      valid: false,
      reason: 'it lacks the heading line "## User Profile"',
    })
  })

  // Codex's read_to_string fails on invalid UTF-8, so the check fails: the same here.
  it("refuses a summary that is not valid UTF-8", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conf-v2s-"))
    fs.writeFileSync(path.join(root, "memory_summary.md"), Buffer.concat([Buffer.from(CODEX_VALID), Buffer.from([0xff, 0xfe])]))
    expect(validateV2Artifacts(root)).toMatchObject({ valid: false, reason: expect.stringContaining("valid UTF-8") })
  })
})
