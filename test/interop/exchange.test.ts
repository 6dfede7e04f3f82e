// The exchanges with Codex and Claude Code, step by step, on real folders.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { claudeImport, discoverClaudeProjects } from "../../src/interop/claude-import.js"
import { codexExport } from "../../src/interop/codex-export.js"
import { codexImport } from "../../src/interop/codex-import.js"
import { codexRoots } from "../../src/interop/codex-roots.js"
import { planInterop } from "../../src/interop/interop.js"
import { parseOptions } from "../../src/options.js"

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
const TEMPLATES = path.resolve(import.meta.dirname, "../../templates")
let dir: string
let ours: string
let codex: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-exchange-"))
  ours = path.join(dir, "home", "memories")
  codex = path.join(dir, "codex", "memories")
  fs.mkdirSync(ours, { recursive: true })
})

const read = (...parts: string[]) => fs.readFileSync(path.join(...parts), "utf8")
const exists = (...parts: string[]) => fs.existsSync(path.join(...parts))

describe("codex import", () => {
  const importer = () => codexImport({ roots: codexRoots(path.dirname(codex)), instructions: "# Codex import\n" })

  it("copies Codex's MEMORY.md and summary, redacted, writes its instructions, and reports no change the second time", () => {
    fs.mkdirSync(codex, { recursive: true })
    fs.writeFileSync(path.join(codex, "MEMORY.md"), `# Task group\n- deploy with make ship; token ${TOKEN}\n`)
    fs.writeFileSync(path.join(codex, "memory_summary.md"), "v1\n## User Profile\nA Rust developer.\n")
    const extension = importer()
    expect(extension.hasSource()).toBe(true)
    expect(extension.sync!(ours)).toMatchObject({ changed: true })
    const copies = path.join(ours, "extensions", "codex_import")
    expect(read(copies, "instructions.md")).toBe("# Codex import\n")
    expect(read(copies, "resources", "codex", "MEMORY.md")).toContain("make ship")
    expect(read(copies, "resources", "codex", "MEMORY.md")).not.toContain(TOKEN)
    expect(read(copies, "resources", "codex", "memory_summary.md")).toContain("A Rust developer.")
    expect(extension.sync!(ours)).toMatchObject({ changed: false })
    expect(extension.describe()).toContain("unchanged")
  })

  it("imports the summary of Codex's V2 folder beside it", () => {
    fs.mkdirSync(`${codex}_v2`, { recursive: true })
    fs.writeFileSync(path.join(`${codex}_v2`, "memory_summary.md"), "v1\n## What's in Memory\n- recap\n")
    expect(importer().sync!(ours)).toMatchObject({ changed: true })
    expect(read(ours, "extensions/codex_import/resources/codex/v2/memory_summary.md")).toContain("recap")
    expect(exists(ours, "extensions/codex_import/resources/codex/MEMORY.md")).toBe(false)
  })

  it("follows a change, and removes a copy whose source Codex no longer has", () => {
    fs.mkdirSync(codex, { recursive: true })
    fs.writeFileSync(path.join(codex, "MEMORY.md"), "one\n")
    fs.writeFileSync(path.join(codex, "memory_summary.md"), "v1\n")
    const extension = importer()
    extension.sync!(ours)
    fs.writeFileSync(path.join(codex, "MEMORY.md"), "two\n")
    fs.rmSync(path.join(codex, "memory_summary.md"))
    const result = extension.sync!(ours)
    expect(result).toMatchObject({ changed: true, detail: expect.stringContaining("removed memory_summary.md") })
    expect(read(ours, "extensions/codex_import/resources/codex/MEMORY.md")).toBe("two\n")
    expect(exists(ours, "extensions/codex_import/resources/codex/memory_summary.md")).toBe(false)
  })

  it("copies nothing through a symlink, and creates nothing when Codex has no memory", () => {
    fs.mkdirSync(codex, { recursive: true })
    fs.writeFileSync(path.join(dir, "elsewhere.md"), "secret elsewhere")
    fs.symlinkSync(path.join(dir, "elsewhere.md"), path.join(codex, "MEMORY.md"))
    const extension = importer()
    expect(extension.sync!(ours)).toMatchObject({ changed: false })
    expect(exists(ours, "extensions", "codex_import")).toBe(false)
  })
})

describe("codex export", () => {
  const exporter = () => codexExport({ roots: codexRoots(path.dirname(codex)), instructions: "# From OpenCode\n" })
  const artifacts = () => {
    fs.writeFileSync(path.join(ours, "MEMORY.md"), "# Task group: deploys\n- make ship\n")
    fs.writeFileSync(path.join(ours, "memory_summary.md"), "v1\n## User profile\nx\n")
  }

  it("never creates Codex's memory folder", () => {
    artifacts()
    expect(exporter().afterSuccess!(ours)).toMatchObject({ changed: false, detail: expect.stringContaining("Codex has no memory folder yet") })
    expect(fs.existsSync(codex)).toBe(false)
    expect(fs.existsSync(`${codex}_v2`)).toBe(false)
  })

  it("exports into each of Codex's memory folders that exists, V2's alone included", () => {
    artifacts()
    fs.mkdirSync(`${codex}_v2`, { recursive: true })
    expect(exporter().afterSuccess!(ours)).toMatchObject({ changed: true })
    expect(read(`${codex}_v2`, "extensions/opencode_import/resources/opencode/memory_summary.md")).toContain("v1")
    expect(fs.existsSync(codex)).toBe(false)
  })

  it("writes only its one extension folder, and nothing when nothing changed", () => {
    artifacts()
    fs.mkdirSync(codex, { recursive: true })
    fs.writeFileSync(path.join(codex, "MEMORY.md"), "Codex's own\n")
    const extension = exporter()
    expect(extension.afterSuccess!(ours)).toMatchObject({ changed: true })
    const folder = path.join(codex, "extensions", "opencode_import")
    expect(read(folder, "instructions.md")).toBe("# From OpenCode\n")
    expect(read(folder, "resources", "opencode", "MEMORY.md")).toContain("make ship")
    expect(read(folder, "resources", "opencode", "memory_summary.md")).toContain("v1")
    expect(read(codex, "MEMORY.md")).toBe("Codex's own\n")
    expect(fs.readdirSync(codex).sort()).toEqual(["MEMORY.md", "extensions"])
    expect(extension.afterSuccess!(ours)).toMatchObject({ changed: false })
    // No temp file is left behind.
    expect(fs.readdirSync(path.join(folder, "resources", "opencode")).sort()).toEqual(["MEMORY.md", "memory_summary.md"])
  })

  it("refuses to write through a symlinked extensions folder", () => {
    artifacts()
    fs.mkdirSync(codex, { recursive: true })
    fs.mkdirSync(path.join(dir, "trap"))
    fs.symlinkSync(path.join(dir, "trap"), path.join(codex, "extensions"))
    expect(() => exporter().afterSuccess!(ours)).toThrow(/symlink/)
    expect(fs.readdirSync(path.join(dir, "trap"))).toEqual([])
  })
})

describe("claude import", () => {
  let claude: string
  const project = (key: string, options: { cwd?: string; notes?: Record<string, string>; logs?: Array<{ name: string; lines: unknown[]; ageMs?: number }> } = {}) => {
    const folder = path.join(claude, "projects", key)
    fs.mkdirSync(path.join(folder, "memory"), { recursive: true })
    for (const [name, text] of Object.entries(options.notes ?? { "MEMORY.md": `# ${key}\n` })) {
      fs.mkdirSync(path.dirname(path.join(folder, "memory", name)), { recursive: true })
      fs.writeFileSync(path.join(folder, "memory", name), text)
    }
    const logs = options.logs ?? [{ name: "s1.jsonl", lines: [{ type: "summary" }, { cwd: options.cwd ?? dir }] }]
    for (const log of logs) {
      const file = path.join(folder, log.name)
      fs.writeFileSync(file, log.lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
      const at = (Date.now() - (log.ageMs ?? 0)) / 1000
      fs.utimesSync(file, at, at)
    }
    return folder
  }
  beforeEach(() => {
    claude = path.join(dir, "claude")
    fs.mkdirSync(path.join(claude, "projects"), { recursive: true })
  })

  it("finds each project's folder in its newest session log that names an existing absolute folder", () => {
    const real = path.join(dir, "repo")
    fs.mkdirSync(real)
    project("-repo", {
      logs: [
        { name: "old.jsonl", lines: [{ cwd: real }], ageMs: 60_000 },
        { name: "new.jsonl", lines: [{ cwd: "relative/path" }, { cwd: path.join(dir, "gone") }] },
      ],
    })
    project("-nowhere", { logs: [{ name: "a.jsonl", lines: [{ cwd: "/does/not/exist" }] }] })
    const projects = discoverClaudeProjects(claude, undefined)
    expect(projects.map((p) => [p.key, p.cwd])).toEqual([["-repo", fs.realpathSync(real)]])
  })

  it("replaces each project's resources as a whole, with scope.json, skipping symlinks and redacting", () => {
    project("-acme", { notes: { "MEMORY.md": `- deploy: make ship ${TOKEN}\n`, "topics/ci.md": "- CI caches by lockfile\n" } })
    fs.writeFileSync(path.join(dir, "outside.md"), "not a note")
    fs.symlinkSync(path.join(dir, "outside.md"), path.join(claude, "projects", "-acme", "memory", "linked.md"))
    const extension = claudeImport({ claudeHome: claude, projects: undefined, instructions: "# Claude\n" })
    expect(extension.sync!(ours)).toMatchObject({ changed: true })
    const resources = path.join(ours, "extensions", "external_agent_import", "resources", "-acme")
    expect(fs.readdirSync(resources).sort()).toEqual(["MEMORY.md", "scope.json", "topics"])
    expect(JSON.parse(read(resources, "scope.json"))).toEqual({ cwd: fs.realpathSync(dir) })
    expect(read(resources, "MEMORY.md")).not.toContain(TOKEN)
    expect(read(resources, "topics", "ci.md")).toContain("lockfile")
    // A note removed at the source goes here too; an extra file put here is removed.
    fs.rmSync(path.join(claude, "projects", "-acme", "memory", "topics", "ci.md"))
    fs.writeFileSync(path.join(resources, "stray.md"), "stray")
    expect(extension.sync!(ours)).toMatchObject({ changed: true })
    expect(fs.readdirSync(resources).sort()).toEqual(["MEMORY.md", "scope.json"])
    expect(extension.sync!(ours)).toMatchObject({ changed: false })
  })

  it("removes a project that vanished or left the allowlist, and takes the allowlist by key or folder", () => {
    const repo = path.join(dir, "repo")
    fs.mkdirSync(repo)
    project("-a")
    project("-b", { cwd: repo })
    const all = claudeImport({ claudeHome: claude, projects: undefined, instructions: "x" })
    all.sync!(ours)
    const resources = path.join(ours, "extensions", "external_agent_import", "resources")
    expect(fs.readdirSync(resources).sort()).toEqual(["-a", "-b"])
    claudeImport({ claudeHome: claude, projects: [repo], instructions: "x" }).sync!(ours)
    expect(fs.readdirSync(resources)).toEqual(["-b"])
    claudeImport({ claudeHome: claude, projects: ["-a", "-b"], instructions: "x" }).sync!(ours)
    fs.rmSync(path.join(claude, "projects", "-b"), { recursive: true })
    all.sync!(ours)
    expect(fs.readdirSync(resources)).toEqual(["-a"])
  })

  it("does nothing at all when the Claude home cannot be read: no mass delete", () => {
    project("-a")
    claudeImport({ claudeHome: claude, projects: undefined, instructions: "x" }).sync!(ours)
    const moved = claudeImport({ claudeHome: path.join(dir, "unmounted"), projects: undefined, instructions: "x" })
    expect(moved.hasSource()).toBe(false)
    expect(moved.sync!(ours)).toMatchObject({ changed: false, detail: expect.stringContaining("cannot be read (nothing removed)") })
    expect(fs.readdirSync(path.join(ours, "extensions", "external_agent_import", "resources"))).toEqual(["-a"])
  })
})

describe("planInterop", () => {
  const plan = (options: Record<string, unknown>, env: Record<string, string> = {}) =>
    planInterop({ options: parseOptions(options).options, env, homedir: path.join(dir, "user"), templatesDir: TEMPLATES, memoryRoots: [ours, `${ours}_v2`] })

  it("runs the Codex exchange through V1 only, and the Claude import for every version", () => {
    const both = plan({ codex_interop: { import: true, export: true, codex_home: path.join(dir, "codex") }, claude_import: { enabled: true, claude_home: path.join(dir, "claude") } })
    expect(both.warnings).toEqual([])
    expect(both.forVersion("v1").map((e) => e.name)).toEqual(["codex import", "codex export", "claude import"])
    expect(both.forVersion("v2").map((e) => e.name)).toEqual(["claude import"])
    expect(plan({}).forVersion("v1")).toEqual([])
  })

  it("defaults Codex's home to CODEX_HOME, else ~/.codex", () => {
    const fromEnv = plan({ codex_interop: { import: true } }, { CODEX_HOME: path.join(dir, "env-codex") })
    expect(fromEnv.forVersion("v1")[0]!.describe()).toContain(`from ${path.join(dir, "env-codex", "memories")} and ${path.join(dir, "env-codex", "memories_v2")}`)
    expect(plan({ codex_interop: { import: true } }).forVersion("v1")[0]!.describe()).toContain(path.join(dir, "user", ".codex", "memories"))
  })

  it("turns an exchange off, with a warning, when Codex's memory folder is ours or holds it", () => {
    const same = plan({ codex_interop: { import: true, export: true, codex_home: path.dirname(ours) } })
    expect(same.forVersion("v1")).toEqual([])
    expect(same.warnings).toEqual([expect.stringMatching(/^codex_interop is off: Codex's memory folder .* and this memory's .* are the same folder or one holds the other/)])
    fs.symlinkSync(path.dirname(path.dirname(ours)), path.join(dir, "alias"))
    // A Claude home that holds this memory through a symlink is caught too.
    const through = plan({ codex_interop: { import: true }, claude_import: { enabled: true, claude_home: path.join(dir, "alias") } })
    expect(through.warnings).toEqual([expect.stringMatching(/^claude_import is off: the Claude home .*alias/)])
    expect(through.forVersion("v1").map((e) => e.name)).toEqual(["codex import"])
  })
})
