// Codex's workspace and git-baseline tests, with their inputs and expected outputs.
//   codex-rs/memories/write/src/workspace_tests.rs, read at zibuyu2015831/codex 67e69213 (the V1
//     cases; zomem/codex 0f962f9c has the same first four)
//   codex-rs/git-utils/src/baseline.rs (tests module), read at zijian2/codex ceee8037 (seven
//     tests; openai/codex 87222e16 has five of them)
// Codex's tests read the repository with the git binary and gix; these read it with git and
// isomorphic-git. Our code itself never runs git.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { init, log, readCommit, resolveRef } from "isomorphic-git"
import { beforeEach, describe, expect, it } from "vitest"
import { ensureBaseline, resetBaseline, workspaceDiff, workspaceStatus } from "../../src/write/phase2/git-baseline.js"
import { prepareWorkspace, validateArtifacts } from "../../src/write/phase2/workspace.js"
import { renderWorkspaceDiff, WORKSPACE_DIFF_FILE, WORKSPACE_DIFF_MAX_BYTES, writeWorkspaceDiff } from "../../src/write/phase2/workspace-diff.js"

const templatesDir = fileURLToPath(new URL("../../templates", import.meta.url))
const now = () => Date.UTC(2026, 10, 30, 12)
const posix = process.platform !== "win32"
let root: string

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conf-ws-")), "memories")
  fs.mkdirSync(root)
})

function write(relative: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

/** What `git` itself says of the folder, as Codex's git_stdout helper asks it. */
function git(...args: string[]): string {
  return execFileSync("git", args, { cwd: root, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: root } })
}

/** Status and diff together, as Codex's diff_since_latest_init returns them. */
async function diffSinceBaseline() {
  const changes = await workspaceStatus(root)
  return { changes, unified: await workspaceDiff(root, changes) }
}

describe("the workspace diff file (workspace_tests.rs)", () => {
  it("bounds a huge diff, says where it was cut and closes its fence", () => {
    // render_workspace_diff_file_bounds_large_diff
    const rendered = renderWorkspaceDiff([{ status: "M", path: "MEMORY.md" }], "a".repeat(WORKSPACE_DIFF_MAX_BYTES + 128))
    expect(rendered).toContain("- M MEMORY.md")
    expect(rendered).toContain("[workspace diff truncated at 4194304 bytes")
    expect(rendered.endsWith("```\n")).toBe(true)
    // Ours bounds the whole file, Codex the diff inside it.
    expect(Buffer.byteLength(rendered)).toBeLessThanOrEqual(WORKSPACE_DIFF_MAX_BYTES)
  })

  it("cuts a long line on a character boundary, never inside a multi-byte character", () => {
    // previous_char_boundary_handles_multibyte_text: "aé" cut at 2 bytes keeps "a". The cut
    // here falls at every offset of "aé" in turn, so one of them lands inside the é.
    for (const pad of ["", "a", "aé", "aéa"]) {
      const rendered = renderWorkspaceDiff([{ status: "A", path: "big.md" }], `+${pad}${"aé".repeat(WORKSPACE_DIFF_MAX_BYTES / 2)}`)
      expect(rendered).not.toContain("\ufffd")
      expect(rendered).toMatch(/[aé]\n\[workspace diff truncated/)
    }
  })

  it("removes the diff file when the baseline is reset, leaving nothing changed", async () => {
    // reset_memory_workspace_baseline_removes_generated_diff
    await prepareWorkspace(root, { templatesDir, now })
    write("MEMORY.md", "memory")
    await writeWorkspaceDiff(root, renderWorkspaceDiff([{ status: "A", path: "MEMORY.md" }], "+memory\n"))
    await resetBaseline(root, now)
    expect(fs.existsSync(path.join(root, WORKSPACE_DIFF_FILE))).toBe(false)
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("replaces an unusable .git with a baseline of what is in the folder", async () => {
    // prepare_memory_workspace_recovers_unusable_git_dir
    fs.mkdirSync(path.join(root, ".git"))
    write("MEMORY.md", "memory")
    await prepareWorkspace(root, { templatesDir, now })
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("refuses a summary whose first line is not v1", () => {
    // validate_consolidation_artifacts_rejects_invalid_summary: "does not start with v1"
    write("MEMORY.md", "memory")
    write("memory_summary.md", "outdated\n")
    const result = validateArtifacts(root)
    expect(result.valid).toBe(false)
    expect(result.valid ? "" : result.reason).toContain('not "v1"')
  })
})

describe("the git baseline (baseline.rs)", () => {
  it("creates a fresh baseline that git itself sees as clean", async () => {
    // reset_creates_fresh_baseline
    write("MEMORY.md", "baseline")
    await resetBaseline(root, now)
    expect(fs.statSync(path.join(root, ".git")).isDirectory()).toBe(true)
    expect(fs.statSync(path.join(root, ".git", "index")).isFile()).toBe(true)
    expect(await diffSinceBaseline()).toEqual({ changes: [], unified: "" })
    expect(git("status", "--porcelain")).toBe("")
    expect(git("ls-files")).toBe("MEMORY.md\n")
  })

  it("recovers from a repository with no commit", async () => {
    // ensure_recovers_from_unborn_repository
    write("MEMORY.md", "memory")
    await init({ fs, dir: root, defaultBranch: "main" })
    expect(await ensureBaseline(root, now)).toBe("reinitialised")
    expect(await workspaceStatus(root)).toEqual([])
    expect(git("status", "--porcelain")).toBe("")
    expect(git("ls-files")).toBe("MEMORY.md\n")
  })

  it("runs no hook of the repository it replaces", async () => {
    // write_index_ignores_configured_hooks_path: Codex's index write must not run a configured
    // hooks path. Nothing here runs git, and the reset builds a new repository beside the old.
    write("MEMORY.md", "baseline")
    await resetBaseline(root, now)
    const hooks = path.join(root, ".git", "hooks-path-test")
    const marker = path.join(root, "hook-ran")
    fs.mkdirSync(hooks)
    for (const hook of ["post-index-change", "post-commit", "pre-commit"]) {
      fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\nprintf ran > "${marker}"\n`, { mode: 0o755 })
    }
    git("config", "core.hooksPath", hooks)
    write("MEMORY.md", "changed")
    await ensureBaseline(root, now)
    await resetBaseline(root, now)
    expect(fs.existsSync(marker)).toBe(false)
  })

  it("reports added, modified and deleted files with their lines", async () => {
    // diff_reports_added_modified_and_deleted_files
    write("MEMORY.md", "old")
    write("rollout_summaries/deleted.md", "thread_id: 00000000-0000-4000-8000-000000000001\nimportant stale evidence\n")
    await resetBaseline(root, now)
    write("MEMORY.md", "new")
    write("memory_summary.md", "summary")
    fs.rmSync(path.join(root, "rollout_summaries/deleted.md"))

    const { changes, unified } = await diffSinceBaseline()
    expect(changes).toEqual([
      { status: "M", path: "MEMORY.md" },
      { status: "A", path: "memory_summary.md" },
      { status: "D", path: "rollout_summaries/deleted.md" },
    ])
    for (const expected of [
      "diff --git a/MEMORY.md b/MEMORY.md",
      "-old",
      "+new",
      "diff --git a/memory_summary.md b/memory_summary.md",
      "+summary",
      "diff --git a/rollout_summaries/deleted.md b/rollout_summaries/deleted.md",
      "deleted file mode 100644",
      "-thread_id: 00000000-0000-4000-8000-000000000001",
      "-important stale evidence",
    ]) {
      expect(unified).toContain(expected)
    }
  })

  it("leaves one commit with no parent after a second reset", async () => {
    // reset_drops_previous_history
    write("MEMORY.md", "old")
    await resetBaseline(root, now)
    write("MEMORY.md", "new")
    await resetBaseline(root, now)
    const head = await resolveRef({ fs, dir: root, ref: "HEAD" })
    expect((await readCommit({ fs, dir: root, oid: head })).commit.parent).toEqual([])
    expect(await log({ fs, dir: root })).toHaveLength(1)
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("hashes a new file without writing its blob into .git", async () => {
    // status_scan_does_not_write_added_file_blobs
    await resetBaseline(root, now)
    const content = "new uncommitted memory"
    write("MEMORY.md", content)
    const { changes } = await diffSinceBaseline()
    expect(changes).toEqual([{ status: "A", path: "MEMORY.md" }])
    const oid = git("hash-object", "MEMORY.md").trim()
    expect(() => git("cat-file", "-e", oid)).toThrow()
  })

  it.runIf(posix)("reports a file made executable as modified, with its old and new mode", async () => {
    // reports_executable_bit_changes_as_modified
    write("MEMORY.md", "same content")
    await resetBaseline(root, now)
    fs.chmodSync(path.join(root, "MEMORY.md"), fs.statSync(path.join(root, "MEMORY.md")).mode | 0o111)
    const { changes, unified } = await diffSinceBaseline()
    expect(changes).toEqual([{ status: "M", path: "MEMORY.md" }])
    expect(unified).toContain("old mode 100644")
    expect(unified).toContain("new mode 100755")
    // Same bytes: no hunk, and no file names for one, as git prints a mode change.
    expect(unified).toBe("diff --git a/MEMORY.md b/MEMORY.md\nold mode 100644\nnew mode 100755\n")
  })

  it.runIf(posix)("gives an added or deleted executable its own mode, and commits it as git does", async () => {
    // Not a Codex case: the mode of an added or deleted file comes from the file, as in Codex's
    // render_change_diff, rather than being 100644 always.
    write("skills/x/scripts/run.sh", "#!/bin/sh\n")
    fs.chmodSync(path.join(root, "skills/x/scripts/run.sh"), 0o755)
    await resetBaseline(root, now)
    expect(git("ls-files", "--stage")).toMatch(/^100755 [0-9a-f]{40} 0\tskills\/x\/scripts\/run.sh\n$/)
    expect(await workspaceStatus(root)).toEqual([])
    write("skills/y/run.sh", "#!/bin/sh\n")
    fs.chmodSync(path.join(root, "skills/y/run.sh"), 0o755)
    fs.rmSync(path.join(root, "skills/x"), { recursive: true })
    const { unified } = await diffSinceBaseline()
    expect(unified).toContain("diff --git a/skills/x/scripts/run.sh b/skills/x/scripts/run.sh\ndeleted file mode 100755\n")
    expect(unified).toContain("diff --git a/skills/y/run.sh b/skills/y/run.sh\nnew file mode 100755\n")
  })
})
