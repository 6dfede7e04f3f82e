// Codex's rollout-summary and raw-memories tests, with their inputs and expected outputs.
//   codex-rs/memories/write/src/storage_tests.rs and storage.rs, read at zomem/codex 0f962f9c
//     (the same four tests in lotuseater/codex 4158f63f, beside that fork's own additions)
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { syncInputs } from "../../src/write/phase2/workspace.js"
import { renderRawMemories, renderRolloutSummary, rolloutSummaryStem, type WorkspaceInput } from "../../src/write/phase2/workspace-files.js"

// stage1_output_with_slug: updated at 123 s, raw "raw memory", summary "summary", cwd /tmp/workspace.
const output = (slug: string | null, overrides: Partial<WorkspaceInput> = {}): WorkspaceInput => ({
  sessionId: "ses_0194f5a689ab",
  sourceUpdatedAt: 123_000,
  rawMemory: "raw memory",
  rolloutSummary: "summary",
  slug,
  cwd: "/tmp/workspace",
  ...overrides,
})

/** `<time>-<hash>`: Codex's FIXED_PREFIX has this shape ("2025-02-11T15-35-19-jqmb"). */
const PREFIX = /^1970-01-01T00-02-03-[0-9A-Za-z]{4}$/

describe("rollout_summary_file_stem", () => {
  it("is the time and the hash alone when there is no slug", () => {
    // rollout_summary_file_stem_uses_uuid_timestamp_and_hash_when_slug_missing. Codex takes the
    // time from a UUID thread id (2025-02-11T15-35-19 there); an OpenCode id is no UUID, so the
    // time is the update time, as Codex's own fallback for an id that is not a UUID does.
    expect(rolloutSummaryStem(output(null))).toMatch(PREFIX)
  })

  it("lowercases the slug, makes every other character _, keeps 60 and trims trailing _", () => {
    // rollout_summary_file_stem_sanitizes_and_truncates_slug
    const stem = rolloutSummaryStem(output("Unsafe Slug/With Spaces & Symbols + EXTRA_LONG_12345_67890_ABCDE_fghij_klmno"))
    const prefix = rolloutSummaryStem(output(null))
    expect(stem.startsWith(`${prefix}-`)).toBe(true)
    const slug = stem.slice(prefix.length + 1)
    expect(slug).toHaveLength(60)
    expect(slug).toBe("unsafe_slug_with_spaces___symbols___extra_long_12345_67890_a")
  })

  it("is the time and the hash alone when the slug is empty", () => {
    // rollout_summary_file_stem_uses_uuid_timestamp_and_hash_when_slug_is_empty
    expect(rolloutSummaryStem(output(""))).toBe(rolloutSummaryStem(output(null)))
  })

  it("makes each character one _ and lowercases only ASCII letters", () => {
    // Codex's loop runs over chars and tests is_ascii_alphanumeric: an emoji is one `_` (not
    // one per UTF-16 unit) and the Kelvin sign, whose lowercase is an ASCII k, is still `_`.
    const slug = (text: string) => rolloutSummaryStem(output(text)).slice(rolloutSummaryStem(output(null)).length + 1)
    expect(slug("fix 🙂 bug")).toBe("fix___bug")
    expect(slug("\u212Aelvin")).toBe("_elvin")
    expect(slug(`${"🙂".repeat(59)}x`)).toBe(`${"_".repeat(59)}x`)
  })
})

describe("sync_rollout_summaries_and_raw_memories_file_keeps_latest_memories_only", () => {
  it("deletes summaries named by an id alone or by a session not selected, and points raw_memories.md at the one it wrote", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conf-rollout-"))
    const summaries = path.join(root, "rollout_summaries")
    fs.mkdirSync(summaries)
    const keep = output(null, { sessionId: "ses_keep01", sourceUpdatedAt: 100_000, rolloutSummary: "short summary" })
    fs.writeFileSync(path.join(summaries, "ses_keep01.md"), "keep")
    fs.writeFileSync(path.join(summaries, "ses_drop01.md"), "drop")

    await syncInputs(root, [keep], { now: () => 200_000 })

    const files = fs.readdirSync(summaries).sort()
    expect(files).toEqual([`${rolloutSummaryStem(keep)}.md`])
    const raw = fs.readFileSync(path.join(root, "raw_memories.md"), "utf8")
    expect(raw).toContain("raw memory")
    expect(raw).toContain("ses_keep01")
    expect(raw).toContain("cwd: /tmp/workspace")
    expect(raw).toContain(`rollout_summary_file: ${files[0]}`)
    // Codex also writes `rollout_path:`; an OpenCode session has no rollout file (see the note).
    expect(raw).not.toContain("rollout_path:")
  })
})

describe("the files' contents (storage.rs)", () => {
  it("heads a rollout summary with the session, its time and folder, then a blank line and the summary", () => {
    // write_rollout_summary_for_thread: thread_id, updated_at, rollout_path, cwd, an optional
    // git_branch, a blank line, the summary. Ours: session_id, no rollout_path (see the note).
    expect(renderRolloutSummary(output(null))).toBe("session_id: ses_0194f5a689ab\nupdated_at: 1970-01-01T00:02:03.000Z\ncwd: /tmp/workspace\n\nsummary\n")
    expect(renderRolloutSummary({ ...output(null), gitBranch: "main" })).toBe(
      "session_id: ses_0194f5a689ab\nupdated_at: 1970-01-01T00:02:03.000Z\ncwd: /tmp/workspace\ngit_branch: main\n\nsummary\n",
    )
  })

  it("writes Codex's empty raw_memories.md byte for byte", () => {
    // rebuild_raw_memories_file with nothing retained
    expect(renderRawMemories([])).toBe("# Raw Memories\n\nNo raw memories yet.\n")
  })
})
