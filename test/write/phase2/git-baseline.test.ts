import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import zlib from "node:zlib"
import { readCommit, resolveRef, log } from "isomorphic-git"
import { beforeEach, describe, expect, it } from "vitest"
import { ensureBaseline, resetBaseline, scanWorkspace, workspaceDiff, workspaceStatus, type SkippedEntry } from "../../../src/write/phase2/git-baseline.js"

let root: string
const now = () => Date.UTC(2026, 10, 30, 12)

function write(relative: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

/** Every byte under .git, loose objects inflated, so a string can be searched for wherever git keeps it. */
function gitBytes(): Buffer {
  const chunks: Buffer[] = []
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else {
        const bytes = fs.readFileSync(full)
        chunks.push(bytes)
        try {
          chunks.push(zlib.inflateSync(bytes))
        } catch {
          // not a loose object
        }
      }
    }
  }
  walk(path.join(root, ".git"))
  return Buffer.concat(chunks)
}

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-git-")), "memories")
  fs.mkdirSync(root)
  write("MEMORY.md", "# Memory\n\n- one\n- two\n- three\n")
  write("memory_summary.md", "v1\nsummary\n")
  write("rollout_summaries/2026-11-30T08-09-10-abcd.md", "session_id: ses_a\n\nold summary\n")
})

describe("ensureBaseline", () => {
  it("creates a one-commit baseline of the folder, then keeps it", async () => {
    expect(await ensureBaseline(root, now)).toBe("created")
    expect(await workspaceStatus(root)).toEqual([])
    const commits = await log({ fs, dir: root })
    expect(commits).toHaveLength(1)
    expect(commits[0]!.commit.author).toMatchObject({ name: "opencode-codex-memory", timestamp: now() / 1000, timezoneOffset: 0 })
    write("MEMORY.md", "changed\n")
    expect(await ensureBaseline(root, now)).toBe("kept")
    expect(await workspaceStatus(root)).toEqual([{ status: "M", path: "MEMORY.md" }])
  })

  it("re-initialises a corrupt .git (garbage HEAD) with the current tree", async () => {
    await ensureBaseline(root, now)
    write("MEMORY.md", "edited since\n")
    fs.writeFileSync(path.join(root, ".git", "HEAD"), "garbage\n")
    expect(await ensureBaseline(root, now)).toBe("reinitialised")
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("re-initialises a baseline whose blob objects are missing", async () => {
    await ensureBaseline(root, now)
    const objects = path.join(root, ".git", "objects")
    const head = await resolveRef({ fs, dir: root, ref: "HEAD" })
    const tree = (await readCommit({ fs, dir: root, oid: head })).commit.tree
    // Keep the commit and the trees, lose every blob.
    for (const dir of fs.readdirSync(objects)) {
      for (const file of fs.readdirSync(path.join(objects, dir))) {
        const oid = dir + file
        if (oid !== head && oid !== tree && !zlib.inflateSync(fs.readFileSync(path.join(objects, dir, file))).subarray(0, 4).equals(Buffer.from("tree"))) {
          fs.rmSync(path.join(objects, dir, file))
        }
      }
    }
    expect(await ensureBaseline(root, now)).toBe("reinitialised")
    expect(await workspaceDiff(root, [{ status: "D", path: "MEMORY.md" }])).toContain("-- one")
  })

  it("replaces a .git that is a symlink without touching what it points to", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "keep.txt"), "mine")
    fs.symlinkSync(outside, path.join(root, ".git"))
    expect(await ensureBaseline(root, now)).toBe("reinitialised")
    expect(fs.lstatSync(path.join(root, ".git")).isDirectory()).toBe(true)
    expect(fs.readdirSync(outside)).toEqual(["keep.txt"])
  })
})

describe("workspaceStatus", () => {
  it("labels added, modified and deleted files, sorted by path, and ignores empty folders", async () => {
    await ensureBaseline(root, now)
    write("skills/deploy/SKILL.md", "---\nname: deploy\n---\n")
    write("MEMORY.md", "# Memory\n\n- one\n- 2\n- three\n")
    fs.rmSync(path.join(root, "rollout_summaries/2026-11-30T08-09-10-abcd.md"))
    fs.mkdirSync(path.join(root, "extensions/empty"), { recursive: true })
    expect(await workspaceStatus(root)).toEqual([
      { status: "M", path: "MEMORY.md" },
      { status: "D", path: "rollout_summaries/2026-11-30T08-09-10-abcd.md" },
      { status: "A", path: "skills/deploy/SKILL.md" },
    ])
  })

  it("ignores .git, dot-entries, .gitignore rules and the diff file", async () => {
    await ensureBaseline(root, now)
    write(".gitignore", "*.md\n")
    write(".cache/x.md", "hidden")
    write("phase2_workspace_diff.md", "transient")
    write("skills/new.md", "visible")
    expect(await workspaceStatus(root)).toEqual([{ status: "A", path: "skills/new.md" }])
  })

  it("skips and reports symlinks instead of reading through them", async () => {
    await ensureBaseline(root, now)
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "secret.md"), "outside secret")
    fs.symlinkSync(outside, path.join(root, "skills-link"))
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "rollout_summaries", "link.md"))
    const skipped: SkippedEntry[] = []
    expect(await workspaceStatus(root, { onSkipped: (entry) => skipped.push(entry) })).toEqual([])
    expect(skipped.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "rollout_summaries/link.md", kind: "symlink" },
      { path: "skills-link", kind: "symlink" },
    ])
  })

  it("shows a committed file replaced by a symlink as deleted, and never commits the link", async () => {
    await ensureBaseline(root, now)
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "MEMORY.md"), "outside")
    fs.rmSync(path.join(root, "MEMORY.md"))
    fs.symlinkSync(path.join(outside, "MEMORY.md"), path.join(root, "MEMORY.md"))
    expect(await workspaceStatus(root)).toEqual([{ status: "D", path: "MEMORY.md" }])
    await resetBaseline(root, now)
    expect(gitBytes().includes("outside")).toBe(false)
    expect(scanWorkspace(root).files).toEqual(["memory_summary.md", "rollout_summaries/2026-11-30T08-09-10-abcd.md"])
  })

  it("refuses a symlinked memory folder", async () => {
    await ensureBaseline(root, now)
    const link = `${root}-link`
    fs.symlinkSync(root, link)
    await expect(workspaceStatus(link)).rejects.toThrow(/not a plain folder/)
  })
})

describe("workspaceDiff", () => {
  it("shows removed and added lines of modified, added and deleted files", async () => {
    await ensureBaseline(root, now)
    write("MEMORY.md", "# Memory\n\n- one\n- 2\n- three\n")
    write("skills/deploy/SKILL.md", "step one\n")
    fs.rmSync(path.join(root, "rollout_summaries/2026-11-30T08-09-10-abcd.md"))
    const diff = await workspaceDiff(root, await workspaceStatus(root))
    expect(diff).toContain("diff --git a/MEMORY.md b/MEMORY.md\n--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ -1,5 +1,5 @@\n # Memory\n \n - one\n-- two\n+- 2\n - three\n")
    expect(diff).toContain("deleted file mode 100644\n--- a/rollout_summaries/2026-11-30T08-09-10-abcd.md\n+++ /dev/null\n")
    expect(diff).toContain("-old summary\n")
    expect(diff).toContain("new file mode 100644\n--- /dev/null\n+++ b/skills/deploy/SKILL.md\n@@ -0,0 +1,1 @@\n+step one\n")
  })

  it("marks binary files as changed without a textual diff", async () => {
    await ensureBaseline(root, now)
    write("skills/tool.bin", Buffer.from([0x7f, 0x45, 0x00, 0x01, 0x02]))
    write("skills/latin1.md", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    const diff = await workspaceDiff(root, await workspaceStatus(root))
    expect(diff).toContain("Binary files /dev/null and b/skills/tool.bin differ\n")
    expect(diff).toContain("Binary files /dev/null and b/skills/latin1.md differ\n")
    expect(diff).not.toContain("\u0000")
  })

  it("gives a file over 1 MiB a one-line note instead of its content", async () => {
    await ensureBaseline(root, now)
    write("MEMORY.md", "huge line\n".repeat(120_000))
    const diff = await workspaceDiff(root, await workspaceStatus(root))
    expect(diff).toContain("(large file: 30 bytes before, 1200000 bytes after;")
    expect(diff).not.toContain("huge line")
    expect(diff.length).toBeLessThan(500)
  })

  it("shows a rewrite too different to diff line by line as one replacement hunk", async () => {
    write("MEMORY.md", Array.from({ length: 3_000 }, (_, i) => `old ${i}`).join("\n"))
    await ensureBaseline(root, now)
    write("MEMORY.md", Array.from({ length: 2_000 }, (_, i) => `new ${i}`).join("\n") + "\n")
    const diff = await workspaceDiff(root, [{ status: "M", path: "MEMORY.md" }])
    expect(diff).toContain("@@ -1,3000 +1,2000 @@\n-old 0\n")
    expect(diff).toContain("-old 2999\n\\ No newline at end of file\n+new 0\n")
    expect(diff.endsWith("+new 1999\n")).toBe(true)
  })
})

describe("resetBaseline", () => {
  it("leaves exactly one commit, a clean status and no trace of deleted text in .git", async () => {
    write("rollout_summaries/forget-me.md", "UNIQUE-FORGOTTEN-7f3a9c\n")
    await ensureBaseline(root, now)
    write("MEMORY.md", "second state\n")
    await resetBaseline(root, now)
    expect(gitBytes().includes("UNIQUE-FORGOTTEN-7f3a9c")).toBe(true)
    fs.rmSync(path.join(root, "rollout_summaries/forget-me.md"))
    write("phase2_workspace_diff.md", "UNIQUE-FORGOTTEN-7f3a9c in the diff\n")
    expect(await workspaceStatus(root)).toEqual([{ status: "D", path: "rollout_summaries/forget-me.md" }])
    await resetBaseline(root, () => now() + 60_000)
    expect(await log({ fs, dir: root })).toHaveLength(1)
    expect(await workspaceStatus(root)).toEqual([])
    expect(fs.existsSync(path.join(root, "phase2_workspace_diff.md"))).toBe(false)
    expect(gitBytes().includes("UNIQUE-FORGOTTEN-7f3a9c")).toBe(false)
    expect(fs.readdirSync(root).filter((name) => name.startsWith(".git"))).toEqual([".git"])
  })

  it("commits an empty folder as an empty tree", async () => {
    const empty = path.join(path.dirname(root), "empty")
    fs.mkdirSync(empty)
    await resetBaseline(empty, now)
    expect(await workspaceStatus(empty)).toEqual([])
    fs.writeFileSync(path.join(empty, "MEMORY.md"), "x")
    expect(await workspaceStatus(empty)).toEqual([{ status: "A", path: "MEMORY.md" }])
  })
})
