// The drift check against a synthetic Codex-like repository, built with the git binary: aligned,
// a content change, a rename, a deletion, a watch-path-only change, an unowned change, the setup
// errors, JSON output, and recording a review with --update-ref.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { checkDrift, parseNameStatus, setEntryRef, type DriftReport } from "../../scripts/check-codex-drift.js"
import { parseCodexMap } from "../../scripts/codex-map.js"

let dir: string
let repo: string
let mapFile: string
let base: string

const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true })
  fs.writeFileSync(path.join(repo, file), text)
}
const commit = (message: string) => {
  git("add", "-A")
  git("commit", "-q", "-m", message)
  return git("rev-parse", "HEAD")
}

function mapText(ref: string): string {
  return `codex_repo: openai/codex
codex_ref: "${ref}"
codex_ref_date: 2026-07-30
watch_paths:
  - codex-rs/memories/
files:
  src/write/phase2/phase2.ts:
    codex:
      - codex-rs/memories/write/src/phase2.rs
  src/util/paths.ts:
    codex:
      - codex-rs/memories/write/src/lib.rs
  src/store/phase2-jobs.ts:
    codex:
      - codex-rs/state/src/runtime/memories.rs
  src/write/phase2/consolidate-prompt.ts:
    codex:
      - codex-rs/memories/write/templates/memories/consolidation.md
    watch_paths:
      - codex-rs/memories/write/templates/**
  src/v1/: { host_only: true, note: "OpenCode 1 adapter." }
`
}

const run = (extra: Partial<Parameters<typeof checkDrift>[0]> = {}) => checkDrift({ repo, mapFile, ...extra })
const report = () => JSON.parse(run({ json: true }).stdout) as DriftReport

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-drift-"))
  repo = path.join(dir, "codex")
  fs.mkdirSync(repo)
  git("init", "-q")
  git("config", "user.email", "test@example.com")
  git("config", "user.name", "Test")
  write("codex-rs/memories/write/src/phase2.rs", "fn consolidate() {\n    claim();\n}\n")
  write("codex-rs/memories/write/src/lib.rs", Array.from({ length: 30 }, (_, i) => `pub const C${i}: u32 = ${i};`).join("\n") + "\n")
  write("codex-rs/state/src/runtime/memories.rs", "pub fn jobs() {}\n")
  write("codex-rs/memories/write/templates/memories/consolidation.md", "# Consolidation\n")
  write("README.md", "codex\n")
  base = commit("base")
  mapFile = path.join(dir, "codex-map.yaml")
  fs.writeFileSync(mapFile, mapText(base.slice(0, 9)))
})

describe("check-codex-drift", () => {
  it("exits 0 when nothing mapped changed since the audited commit, even if other files did", () => {
    write("README.md", "codex, updated\n")
    commit("docs")
    const outcome = run()
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toContain("aligned: nothing mapped changed")
  })

  it("reports a content change with a diffstat and the command for the whole diff, and exits 1", () => {
    write("codex-rs/memories/write/src/phase2.rs", "fn consolidate() {\n    claim();\n    validate();\n}\n")
    const head = commit("validate")
    const outcome = run()
    expect(outcome.code).toBe(1)
    expect(outcome.stdout).toContain("src/write/phase2/phase2.ts  (audited at")
    expect(outcome.stdout).toContain("changed  codex-rs/memories/write/src/phase2.rs  +1 -0")
    expect(outcome.stdout).toContain(`diff:    git -C ${repo} diff -M ${base.slice(0, 9)} ${head.slice(0, 12)} -- codex-rs/memories/write/src/phase2.rs`)
    expect(report().files.map((f) => f.file)).toEqual(["src/write/phase2/phase2.ts"])
  })

  it("reports a rename as a move with its new path", () => {
    git("mv", "codex-rs/memories/write/src/lib.rs", "codex-rs/memories/write/src/paths.rs")
    commit("rename")
    expect(run().code).toBe(1)
    expect(report().files).toEqual([expect.objectContaining({ file: "src/util/paths.ts", moved: [{ from: "codex-rs/memories/write/src/lib.rs", to: "codex-rs/memories/write/src/paths.rs" }] })])
    expect(run().stdout).toContain("moved    codex-rs/memories/write/src/lib.rs -> codex-rs/memories/write/src/paths.rs")
  })

  it("reports a deletion", () => {
    git("rm", "-q", "codex-rs/state/src/runtime/memories.rs")
    commit("delete")
    expect(run().code).toBe(1)
    expect(report().files).toEqual([expect.objectContaining({ file: "src/store/phase2-jobs.ts", deleted: ["codex-rs/state/src/runtime/memories.rs"] })])
  })

  it("reports a change under a file's watch paths alone", () => {
    write("codex-rs/memories/write/templates/memories/consolidation_v2.md", "# V2\n")
    commit("v2 template")
    expect(run().code).toBe(1)
    expect(report().files).toEqual([expect.objectContaining({ file: "src/write/phase2/consolidate-prompt.ts", changed: [], watched: ["A codex-rs/memories/write/templates/memories/consolidation_v2.md"] })])
    expect(report().unowned).toEqual([])
  })

  it("lists a change under the map's watch paths that no file owns", () => {
    write("codex-rs/memories/read/src/usage.rs", "pub fn usage() {}\n")
    commit("read crate")
    expect(run().code).toBe(1)
    expect(report()).toMatchObject({ files: [], unowned: ["A codex-rs/memories/read/src/usage.rs"] })
  })

  it("exits 2 when CODEX_REPO is unset or not a repository, or lacks the audited commit", () => {
    expect(run({ repo: undefined })).toMatchObject({ code: 2, stderr: expect.stringContaining("CODEX_REPO is not set") })
    expect(run({ repo: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining("is not a git repository") })
    fs.writeFileSync(mapFile, mapText("deadbeef1"))
    expect(run()).toMatchObject({ code: 2, stderr: expect.stringContaining(`does not have the audited commit deadbeef1. Fetch it first, e.g. git -C ${repo} fetch origin`) })
  })

  it("exits 2 on an invalid map, naming what is wrong", () => {
    fs.writeFileSync(mapFile, mapText(base).replace("    codex:\n      - codex-rs/state/src/runtime/memories.rs", "    sources: []"))
    const outcome = run()
    expect(outcome.code).toBe(2)
    expect(outcome.stderr).toContain("does not match its schema")
    expect(outcome.stderr).toContain("files.src/store/phase2-jobs.ts")
  })

  it("reports a mapped source that does not exist at the audited commit", () => {
    fs.writeFileSync(mapFile, mapText(base).replace("codex-rs/state/src/runtime/memories.rs", "codex-rs/state/src/runtime/nowhere.rs"))
    expect(run().code).toBe(1)
    expect(run().stdout).toContain("missing  codex-rs/state/src/runtime/nowhere.rs")
  })

  it("--update-ref records HEAD as the audited commit of the files named, and only those", () => {
    write("codex-rs/memories/write/src/phase2.rs", "fn consolidate() {}\n")
    git("rm", "-q", "codex-rs/state/src/runtime/memories.rs")
    const head = commit("two changes")
    expect(run({ updateRef: ["src/write/phase2/phase2.ts", "src/v1/"] })).toMatchObject({ code: 0, stdout: expect.stringContaining("recorded") })
    const parsed = parseCodexMap(fs.readFileSync(mapFile, "utf8"))
    if (!parsed.ok) throw new Error(parsed.problems.join("\n"))
    expect(parsed.map.files["src/write/phase2/phase2.ts"]?.codex_ref).toBe(head)
    expect(parsed.map.files["src/v1/"]).toEqual({ codex_ref: head, host_only: true, note: "OpenCode 1 adapter." })
    expect(parsed.map.files["src/store/phase2-jobs.ts"]?.codex_ref).toBeUndefined()
    expect(report().files.map((f) => f.file)).toEqual(["src/store/phase2-jobs.ts"])
    expect(run({ updateRef: [] })).toMatchObject({ code: 2 })
    expect(run({ updateRef: ["src/unknown.ts"] })).toMatchObject({ code: 2, stderr: expect.stringContaining("not in the map") })
  })
})

describe("the drift check's parts", () => {
  it("reads git's NUL-separated name-status output, renames and copies included", () => {
    expect(parseNameStatus("M\0a.rs\0R087\0old.rs\0new.rs\0D\0gone.rs\0A\0added.rs\0C100\0src.rs\0copy.rs\0")).toEqual([
      { status: "M", path: "a.rs" },
      { status: "R", path: "new.rs", from: "old.rs" },
      { status: "D", path: "gone.rs" },
      { status: "A", path: "added.rs" },
      { status: "A", path: "copy.rs" },
    ])
  })

  it("sets an entry's codex_ref in a block entry and in a one-line entry, replacing an old one", () => {
    const text = "files:\n  a.ts:\n    codex:\n      - x\n  b/: { host_only: true }\n  c.ts:\n    codex_ref: 1111111\n    codex: [y]\n"
    const once = setEntryRef(setEntryRef(setEntryRef(text, "a.ts", "abcdef1"), "b/", "abcdef1"), "c.ts", "abcdef1")
    expect(once).toBe("files:\n  a.ts:\n    codex_ref: abcdef1\n    codex:\n      - x\n  b/: { codex_ref: abcdef1, host_only: true }\n  c.ts:\n    codex_ref: abcdef1\n    codex: [y]\n")
    expect(setEntryRef(once, "b/", "2222222")).toContain('  b/: { codex_ref: "2222222", host_only: true }')
    // A ref YAML would read as a number is quoted, and a quoted one is replaced in turn.
    expect(setEntryRef(setEntryRef(once, "b/", "1234e567"), "b/", "abcdef2")).toContain("  b/: { codex_ref: abcdef2, host_only: true }")
  })
})
