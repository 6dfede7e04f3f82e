import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { log } from "isomorphic-git"
import { beforeEach, describe, expect, it } from "vitest"
import { resetBaseline, workspaceStatus } from "../../../src/write/phase2/git-baseline.js"
import { hasExtensionInputs, prepareWorkspace, syncInputs, validateArtifacts } from "../../../src/write/phase2/workspace.js"
import { renderRawMemories, renderRolloutSummary, rolloutSummaryStem, type WorkspaceInput } from "../../../src/write/phase2/workspace-files.js"

const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
const DAY = 24 * 60 * 60 * 1000
const NOW = Date.UTC(2026, 10, 30, 12)
const now = () => NOW
let root: string

const input = (sessionId: string, overrides: Partial<WorkspaceInput> = {}): WorkspaceInput => ({
  sessionId,
  sourceUpdatedAt: NOW - DAY,
  rawMemory: `- raw memory of ${sessionId}\n`,
  rolloutSummary: `what happened in ${sessionId}\n`,
  slug: `topic ${sessionId}`,
  cwd: "/home/dev/acme",
  ...overrides,
})

const read = (relative: string) => fs.readFileSync(path.join(root, relative), "utf8")
const summaries = () => fs.readdirSync(path.join(root, "rollout_summaries")).sort()

function write(relative: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-ws-")), "memories")
})

describe("prepareWorkspace", () => {
  it("creates the folder, seeds the ad-hoc instructions and commits a baseline", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    expect(read("extensions/ad_hoc/instructions.md")).toBe(fs.readFileSync(path.join(templatesDir, "extensions/ad_hoc/instructions.md"), "utf8"))
    expect(await log({ fs, dir: root })).toHaveLength(1)
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("seeds the instructions once: a user's edit survives the next run", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    fs.writeFileSync(path.join(root, "extensions/ad_hoc/instructions.md"), "my own rules\n")
    await prepareWorkspace(root, { templatesDir, now })
    expect(read("extensions/ad_hoc/instructions.md")).toBe("my own rules\n")
    expect(await workspaceStatus(root)).toEqual([{ status: "M", path: "extensions/ad_hoc/instructions.md" }])
  })

  it("deletes a stale phase2_workspace_diff.md and keeps a usable baseline", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    write("MEMORY.md", "edited\n")
    write("phase2_workspace_diff.md", "stale")
    await prepareWorkspace(root, { templatesDir, now })
    expect(fs.existsSync(path.join(root, "phase2_workspace_diff.md"))).toBe(false)
    expect(await workspaceStatus(root)).toEqual([{ status: "A", path: "MEMORY.md" }])
  })

  it("refuses a symlinked root", async () => {
    const real = `${root}-real`
    fs.mkdirSync(real)
    fs.symlinkSync(real, root)
    await expect(prepareWorkspace(root, { templatesDir, now })).rejects.toThrow(/symlink/)
    expect(fs.readdirSync(real)).toEqual([])
  })

  it("refuses a symlinked top-level artifact without touching its target", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.mkdirSync(root)
    fs.symlinkSync(outside, path.join(root, "extensions"))
    await expect(prepareWorkspace(root, { templatesDir, now })).rejects.toThrow(/extensions in the memory folder is a symlink/)
    expect(fs.readdirSync(outside)).toEqual([])
  })

  it("deletes nested symlinks before the baseline, never their targets, and names them", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "secret.md"), "outside")
    fs.mkdirSync(path.join(root, "skills/deploy"), { recursive: true })
    fs.symlinkSync(outside, path.join(root, "skills/deploy/docs"))
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "skills/notes.md"))
    const { removedSymlinks } = await prepareWorkspace(root, { templatesDir, now })
    expect(removedSymlinks).toEqual(["skills/deploy/docs", "skills/notes.md"])
    expect(fs.existsSync(path.join(root, "skills/deploy/docs"))).toBe(false)
    expect(fs.readFileSync(path.join(outside, "secret.md"), "utf8")).toBe("outside")
    expect(await workspaceStatus(root)).toEqual([])
  })
})

describe("syncInputs", () => {
  it("writes one rollout summary per input and raw_memories.md, returning the stems", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const inputs = [input("ses_b"), input("ses_a")]
    const result = await syncInputs(root, inputs, { now })
    expect(result.stems).toEqual(inputs.map(rolloutSummaryStem))
    expect(summaries()).toEqual(inputs.map((i) => `${rolloutSummaryStem(i)}.md`).sort())
    expect(read(`rollout_summaries/${result.stems[0]}.md`)).toContain("what happened in ses_b")
    expect(read("raw_memories.md")).toBe(renderRawMemories(inputs))
  })

  it("deletes unselected summaries, leaves unchanged files untouched and rewrites changed ones", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const a = input("ses_a")
    const b = input("ses_b")
    await syncInputs(root, [a, b], { now })
    const fileA = path.join(root, "rollout_summaries", `${rolloutSummaryStem(a)}.md`)
    const fileB = path.join(root, "rollout_summaries", `${rolloutSummaryStem(b)}.md`)
    const past = new Date(NOW - 10 * DAY)
    fs.utimesSync(fileA, past, past)
    fs.utimesSync(fileB, past, past)
    write("rollout_summaries/notes.txt", "not a summary")
    const c = input("ses_c")
    await syncInputs(root, [a, { ...b, rolloutSummary: "a newer account of ses_b\n" }, c], { now })
    expect(fs.statSync(fileA).mtimeMs).toBe(past.getTime())
    expect(fs.statSync(fileB).mtimeMs).not.toBe(past.getTime())
    expect(fs.readFileSync(fileB, "utf8")).toContain("a newer account of ses_b")

    await syncInputs(root, [c], { now })
    expect(summaries()).toEqual([`${rolloutSummaryStem(c)}.md`, "notes.txt"])
    expect(read("raw_memories.md")).not.toContain("ses_a")
  })

  it("changes nothing the baseline can see when the selection is unchanged", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const inputs = [input("ses_a"), input("ses_b")]
    await syncInputs(root, inputs, { now })
    await resetBaseline(root, now)
    await prepareWorkspace(root, { templatesDir, now })
    await syncInputs(root, inputs, { now })
    expect(await workspaceStatus(root)).toEqual([])
  })

  it("redacts secrets in the inputs, file names included, and counts them", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    const result = await syncInputs(root, [input("ses_a", { rawMemory: `token ${token}`, rolloutSummary: `used ${token}`, slug: token })], { now })
    const everything = summaries().join("\n") + summaries().map((name) => read(`rollout_summaries/${name}`)).join("") + read("raw_memories.md")
    expect(everything).not.toMatch(/0123456789abcdefghij/i)
    expect(read("raw_memories.md")).toContain("[REDACTED:github-token]")
    expect(result.redactions["github-token"]).toBe(2)
  })

  it("replaces a symlinked summary file instead of writing through it", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const a = input("ses_a")
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-")), "target.md")
    fs.writeFileSync(outside, "outside")
    fs.mkdirSync(path.join(root, "rollout_summaries"))
    fs.symlinkSync(outside, path.join(root, "rollout_summaries", `${rolloutSummaryStem(a)}.md`))
    fs.symlinkSync(outside, path.join(root, "raw_memories.md"))
    await syncInputs(root, [a], { now })
    expect(fs.readFileSync(outside, "utf8")).toBe("outside")
    expect(fs.lstatSync(path.join(root, "raw_memories.md")).isFile()).toBe(true)
    expect(read(`rollout_summaries/${rolloutSummaryStem(a)}.md`)).toContain("what happened in ses_a")
  })

  it("refuses a symlinked root", async () => {
    const real = `${root}-real`
    fs.mkdirSync(real)
    fs.symlinkSync(real, root)
    await expect(syncInputs(root, [input("ses_a")], { now })).rejects.toThrow(/symlink/)
    expect(fs.readdirSync(real)).toEqual([])
  })

  it("refuses a symlinked rollout_summaries folder", async () => {
    fs.mkdirSync(root)
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.symlinkSync(outside, path.join(root, "rollout_summaries"))
    await expect(syncInputs(root, [input("ses_a")], { now })).rejects.toThrow(/symlink/)
    expect(fs.readdirSync(outside)).toEqual([])
  })
})

describe("syncInputs, V2 layout", () => {
  const v2 = { now, layout: "v2" as const }

  it("writes only the rollout summaries, redacted and with the V2 header, and no raw_memories.md", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    const inputs = [input("ses_b", { rawMemory: "" }), input("ses_a", { rawMemory: "", rolloutSummary: `used ${token}` })]
    const result = await syncInputs(root, inputs, v2)
    expect(result.stems).toEqual(inputs.map(rolloutSummaryStem))
    expect(summaries()).toEqual(inputs.map((i) => `${rolloutSummaryStem(i)}.md`).sort())
    expect(read(`rollout_summaries/${result.stems[0]}.md`)).toBe(renderRolloutSummary(inputs[0]!, "v2"))
    expect(read(`rollout_summaries/${result.stems[1]}.md`)).toContain("used [REDACTED:github-token]")
    expect(result.redactions["github-token"]).toBe(1)
    expect(fs.existsSync(path.join(root, "raw_memories.md"))).toBe(false)
  })

  it("removes a raw_memories.md left in the folder, a symlinked one without touching its target", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    write("raw_memories.md", "# Raw Memories\nstale\n")
    await syncInputs(root, [input("ses_a")], v2)
    expect(fs.existsSync(path.join(root, "raw_memories.md"))).toBe(false)

    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-")), "raw.md")
    fs.writeFileSync(outside, "outside")
    fs.symlinkSync(outside, path.join(root, "raw_memories.md"))
    await syncInputs(root, [input("ses_a")], v2)
    expect(fs.lstatSync(path.join(root, "raw_memories.md"), { throwIfNoEntry: false })).toBeUndefined()
    expect(fs.readFileSync(outside, "utf8")).toBe("outside")
  })

  it("deletes unselected summaries and changes nothing the baseline can see for an unchanged selection", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const a = input("ses_a", { rawMemory: "" })
    const b = input("ses_b", { rawMemory: "" })
    await syncInputs(root, [a, b], v2)
    await resetBaseline(root, now)
    await prepareWorkspace(root, { templatesDir, now })
    await syncInputs(root, [a, b], v2)
    expect(await workspaceStatus(root)).toEqual([])
    await syncInputs(root, [b], v2)
    expect(await workspaceStatus(root)).toEqual([{ status: "D", path: `rollout_summaries/${rolloutSummaryStem(a)}.md` }])
  })
})

describe("extension resource pruning", () => {
  const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace(/:/g, "-")
  const old = stamp(NOW - 8 * DAY)
  const fresh = stamp(NOW - 6 * DAY)

  it("prunes old time-stamped resources and keeps new, nested, untimestamped ones and notes", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    write("extensions/chronicle/instructions.md", "read the resources")
    write(`extensions/chronicle/resources/${old}-screen.md`, "old")
    write(`extensions/chronicle/resources/${fresh}-screen.md`, "new")
    write(`extensions/chronicle/resources/project/${old}-nested.md`, "nested")
    write("extensions/chronicle/resources/overview.md", "untimestamped")
    write(`extensions/chronicle/resources/${old}-data.json`, "not markdown")
    write(`extensions/ad_hoc/notes/${old}-prefer-pnpm.md`, "a note")
    write(`extensions/ad_hoc/resources/${old}-x.md`, "ad hoc resource")
    write(`extensions/no_instructions/resources/${old}-kept.md`, "no instructions.md, not an extension")
    const { prunedResources } = await syncInputs(root, [], { now })
    expect(prunedResources).toBe(2)
    expect(fs.readdirSync(path.join(root, "extensions/chronicle/resources")).sort()).toEqual(
      [`${fresh}-screen.md`, `${old}-data.json`, "overview.md", "project"].sort(),
    )
    expect(fs.existsSync(path.join(root, `extensions/chronicle/resources/project/${old}-nested.md`))).toBe(true)
    expect(fs.existsSync(path.join(root, `extensions/ad_hoc/notes/${old}-prefer-pnpm.md`))).toBe(true)
    expect(fs.existsSync(path.join(root, `extensions/ad_hoc/resources/${old}-x.md`))).toBe(false)
    expect(fs.existsSync(path.join(root, `extensions/no_instructions/resources/${old}-kept.md`))).toBe(true)
  })

  it("never follows a symlinked resources folder", async () => {
    await prepareWorkspace(root, { templatesDir, now })
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, `${old}-theirs.md`), "not ours")
    write("extensions/chronicle/instructions.md", "x")
    fs.symlinkSync(outside, path.join(root, "extensions/chronicle/resources"))
    expect((await syncInputs(root, [], { now })).prunedResources).toBe(0)
    expect(fs.readdirSync(outside)).toEqual([`${old}-theirs.md`])
  })
})

describe("validateArtifacts", () => {
  beforeEach(() => fs.mkdirSync(root))

  it("accepts MEMORY.md and a summary whose first line is v1", () => {
    write("MEMORY.md", "# Memory\n")
    write("memory_summary.md", "v1\n## User profile\n")
    expect(validateArtifacts(root)).toEqual({ valid: true })
    write("memory_summary.md", "v1\r\nwindows line ends\r\n")
    expect(validateArtifacts(root)).toEqual({ valid: true })
  })

  it("rejects a missing MEMORY.md", () => {
    write("memory_summary.md", "v1\n")
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: "MEMORY.md is missing" })
  })

  it("rejects a summary without v1 as its first line", () => {
    write("MEMORY.md", "# Memory\n")
    write("memory_summary.md", "v2\nv1\n")
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: 'the first line of memory_summary.md is "v2", not "v1"' })
    write("memory_summary.md", " v1\n")
    expect(validateArtifacts(root).valid).toBe(false)
    write("memory_summary.md", "")
    expect(validateArtifacts(root).valid).toBe(false)
  })

  it("rejects a symlinked summary even when its target is valid, and deletes the link, not its target", () => {
    write("MEMORY.md", "# Memory\n")
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-")), "summary.md")
    fs.writeFileSync(outside, "v1\n")
    fs.symlinkSync(outside, path.join(root, "memory_summary.md"))
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: "removed 1 symlink from the memory folder: memory_summary.md" })
    expect(fs.existsSync(path.join(root, "memory_summary.md"))).toBe(false)
    expect(fs.readFileSync(outside, "utf8")).toBe("v1\n")
  })

  it("deletes every symlink a run left anywhere outside .git, names them, and fails the run", () => {
    write("MEMORY.md", "# Memory\n")
    write("memory_summary.md", "v1\n")
    fs.mkdirSync(path.join(root, "skills", "deploy"), { recursive: true })
    fs.symlinkSync("/etc/passwd", path.join(root, "skills", "deploy", "SKILL.md"))
    fs.mkdirSync(path.join(root, ".git"))
    fs.symlinkSync("/etc", path.join(root, ".git", "kept"))
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: "removed 1 symlink from the memory folder: skills/deploy/SKILL.md" })
    expect(fs.lstatSync(path.join(root, ".git", "kept")).isSymbolicLink()).toBe(true)
    expect(validateArtifacts(root)).toEqual({ valid: true })
  })

  it("rejects a MEMORY.md that is a folder", () => {
    fs.mkdirSync(path.join(root, "MEMORY.md"))
    write("memory_summary.md", "v1\n")
    expect(validateArtifacts(root)).toEqual({ valid: false, reason: "MEMORY.md is not a regular file" })
  })
})

describe("hasExtensionInputs", () => {
  it("sees a note or a resource, not an extension's instructions, a dot-file or a symlink", async () => {
    expect(hasExtensionInputs(root)).toBe(false)
    await prepareWorkspace(root, { templatesDir, now })
    expect(hasExtensionInputs(root)).toBe(false)
    const notes = path.join(root, "extensions", "ad_hoc", "notes")
    fs.mkdirSync(notes, { recursive: true })
    fs.writeFileSync(path.join(notes, ".draft.md"), "hidden")
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-outside-"))
    fs.writeFileSync(path.join(outside, "x.md"), "outside")
    fs.symlinkSync(path.join(outside, "x.md"), path.join(notes, "link.md"))
    expect(hasExtensionInputs(root)).toBe(false)
    fs.writeFileSync(path.join(notes, "2026-11-30T12-00-00-tabs.md"), "# Tabs\n")
    expect(hasExtensionInputs(root)).toBe(true)
  })
})
