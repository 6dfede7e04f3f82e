// Memory folder files whose bytes are not UTF-8: the baseline, the status, the diff and the sync
// treat them as binary content and never throw.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { ensureBaseline, resetBaseline, scanWorkspace, workspaceDiff, workspaceStatus } from "../../../src/write/phase2/git-baseline.js"
import { syncInputs, validateArtifacts } from "../../../src/write/phase2/workspace.js"

const NOW = Date.UTC(2026, 10, 30, 12)
const now = () => NOW
/** No NUL byte, so only the UTF-8 check can tell that this is not text. */
const INVALID = Buffer.from([0x76, 0x31, 0x0a, 0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a, 0xed, 0xa0, 0x80, 0x0a])
let root: string

function write(relative: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-utf8-")), "memories")
  fs.mkdirSync(root)
  write("MEMORY.md", "# Memory\n\n- one\n")
})

describe("memory files that are not UTF-8", () => {
  it("are committed, and their changes listed and shown as binary, without throwing", async () => {
    write("skills/odd.md", INVALID)
    expect(await ensureBaseline(root, now)).toBe("created")
    expect(await workspaceStatus(root)).toEqual([])

    write("skills/odd.md", Buffer.concat([INVALID, Buffer.from([0xf8, 0x0a])]))
    write("MEMORY.md", INVALID)
    write("rollout_summaries/new.md", INVALID)
    const changes = await workspaceStatus(root)
    expect(changes).toEqual([
      { status: "M", path: "MEMORY.md" },
      { status: "A", path: "rollout_summaries/new.md" },
      { status: "M", path: "skills/odd.md" },
    ])
    const diff = await workspaceDiff(root, changes)
    expect(diff).toContain("Binary files a/MEMORY.md and b/MEMORY.md differ")
    expect(diff).toContain("Binary files /dev/null and b/rollout_summaries/new.md differ")
    expect(diff).toContain("Binary files a/skills/odd.md and b/skills/odd.md differ")
    expect(diff).not.toContain("\uFFFD")

    await resetBaseline(root, now)
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("are replaced or deleted by the input sync, and a summary of them fails validation with a reason", async () => {
    await ensureBaseline(root, now)
    write("rollout_summaries/stale.md", INVALID)
    write("raw_memories.md", INVALID)
    await syncInputs(root, [], { now })
    expect(fs.readdirSync(path.join(root, "rollout_summaries"))).toEqual([])
    expect(fs.readFileSync(path.join(root, "raw_memories.md"), "utf8")).not.toContain("\uFFFD")

    write("memory_summary.md", Buffer.concat([Buffer.from([0xff]), INVALID]))
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: 'the first line of memory_summary.md is "\uFFFDv1", not "v1"' })
    write("memory_summary.md", INVALID)
    expect(validateArtifacts(root)).toEqual({ valid: true })
  })
})

describe("file names that are not UTF-8", () => {
  it("are skipped by the workspace scan instead of breaking every consolidation", async () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-badname-")), "memories")
    fs.mkdirSync(root)
    fs.writeFileSync(path.join(root, "MEMORY.md"), "# ok\n")
    fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff]), Buffer.from(".md")]), "x")
    const scan = scanWorkspace(root)
    expect(scan.files).toEqual(["MEMORY.md"])
    expect(scan.skipped).toHaveLength(1)
    expect(await ensureBaseline(root, now)).toBe("created")
  })
})
