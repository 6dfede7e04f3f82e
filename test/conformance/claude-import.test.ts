// Codex's Claude Code memory import, ported: the tests of codex-rs/external-agent-migration/src/
// memory_import_tests.rs and memory_tests.rs (zarraxx/codex@a464891e, whose memory_import.rs is
// the one those tests run against; openai/codex's index has no memory_import.rs), and of the
// newer memory_tests.rs in openai/codex@923df3e9. Codex imports the projects a user selects once;
// here the selection is the `claude_import.projects` allowlist (none: every project), applied at
// every consolidation, and `claudeImport(...).sync` plays `copy_resources`.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { claudeImport, discoverClaudeProjects } from "../../src/interop/claude-import.js"

let root: string
let claudeHome: string
let memoryRoot: string
const resources = () => path.join(memoryRoot, "extensions", "external_agent_import", "resources")
const memoryDir = (key: string) => path.join(claudeHome, "projects", key, "memory")
const sync = (projects?: string[]) => claudeImport({ claudeHome, projects, instructions: "# imported\n" }).sync!(memoryRoot)
const listing = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [])

/** Codex's write_project_session: a session log naming a folder that exists. */
function writeProjectSession(key: string, cwd: string): void {
  fs.mkdirSync(cwd, { recursive: true })
  fs.mkdirSync(path.join(claudeHome, "projects", key), { recursive: true })
  const line = { type: "user", cwd, timestamp: "2026-07-13T00:00:00Z", message: { content: "remember this" } }
  fs.writeFileSync(path.join(claudeHome, "projects", key, "session.jsonl"), JSON.stringify(line))
}

function writeNote(key: string, relative: string, text: string): void {
  const file = path.join(memoryDir(key), relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-conf-claude-")))
  claudeHome = path.join(root, ".external-agent")
  memoryRoot = path.join(root, "memories")
  fs.mkdirSync(path.join(claudeHome, "projects"), { recursive: true })
  fs.mkdirSync(memoryRoot)
})

describe("Claude import as Codex's memory_import tests expect", () => {
  // copies_only_selected_projects_and_recopies_changed_content.
  it("copies only the selected projects and recopies changed content as a whole", () => {
    writeProjectSession("project-a", path.join(root, "project-a-cwd"))
    writeProjectSession("project-b", path.join(root, "project-b-cwd"))
    writeNote("project-a", "MEMORY.md", "project A memory")
    writeNote("project-a", "release-process.md", "project A release process")
    writeNote("project-b", "MEMORY.md", "project B memory")
    sync(["project-a"])
    expect(fs.readFileSync(path.join(resources(), "project-a", "MEMORY.md"), "utf8")).toBe("project A memory")
    expect(fs.existsSync(path.join(resources(), "project-b"))).toBe(false)
    // A note removed and another added at the source: the target follows, nothing of the old left.
    fs.rmSync(path.join(memoryDir("project-a"), "release-process.md"))
    writeNote("project-a", "updated.md", "updated memory")
    expect(sync(["project-a"])).toMatchObject({ changed: true })
    expect(listing(path.join(resources(), "project-a"))).toEqual(["MEMORY.md", "scope.json", "updated.md"])
    writeNote("project-a", "MEMORY.md", "project A changed")
    expect(sync(["project-a"])).toMatchObject({ changed: true })
    expect(fs.readFileSync(path.join(resources(), "project-a", "MEMORY.md"), "utf8")).toBe("project A changed")
    // Exact content already imported: nothing to do.
    expect(sync(["project-a"])).toMatchObject({ changed: false })
  })

  // preserves_project_successes_and_reports_each_failed_selection: a selection that names no
  // project, or one whose notes are gone, costs the others nothing.
  it("imports the projects it can when others in the selection are missing or empty", () => {
    writeProjectSession("project-a", path.join(root, "project-a-cwd"))
    writeProjectSession("project-b", path.join(root, "project-b-cwd"))
    writeNote("project-a", "MEMORY.md", "project A memory")
    fs.mkdirSync(memoryDir("project-b"), { recursive: true })
    sync(["missing-project", "project-a", "project-b"])
    expect(listing(resources())).toEqual(["project-a"])
  })

  // removes_project_resources_when_the_source_project_disappears.
  it("removes a project's resources when the source project disappears", () => {
    writeProjectSession("project-a", path.join(root, "project-a-cwd"))
    writeNote("project-a", "MEMORY.md", "project A memory")
    sync()
    fs.rmSync(path.join(claudeHome, "projects", "project-a"), { recursive: true })
    expect(sync()).toMatchObject({ changed: true })
    expect(fs.existsSync(path.join(resources(), "project-a"))).toBe(false)
  })

  // uses_scope_file_to_identify_owned_projects: only folders holding a scope.json are the
  // import's own; anything else under resources/ is left where it is.
  it("removes only folders that hold a scope.json, hidden ones included, and leaves everything else", () => {
    fs.mkdirSync(path.join(resources(), "project-a"), { recursive: true })
    fs.writeFileSync(path.join(resources(), "project-a", "scope.json"), "{}")
    fs.mkdirSync(path.join(resources(), ".project"))
    fs.writeFileSync(path.join(resources(), ".project", "scope.json"), "{}")
    fs.mkdirSync(path.join(resources(), "metadata"))
    fs.mkdirSync(path.join(resources(), ".metadata"))
    fs.writeFileSync(path.join(resources(), ".DS_Store"), "metadata")
    expect(sync()).toMatchObject({ changed: true })
    expect(listing(resources())).toEqual([".DS_Store", ".metadata", "metadata"])
  })

  // project_rename_removes_the_old_target_and_imports_the_new_target.
  it("removes the old target and imports the new one when a project is renamed", () => {
    writeProjectSession("project-a", path.join(root, "project-cwd"))
    writeNote("project-a", "MEMORY.md", "project memory")
    sync()
    fs.renameSync(path.join(claudeHome, "projects", "project-a"), path.join(claudeHome, "projects", "project-b"))
    expect(sync()).toMatchObject({ changed: true })
    expect(listing(resources())).toEqual(["project-b"])
    expect(fs.statSync(path.join(resources(), "project-b", "scope.json")).isFile()).toBe(true)
  })

  // does_not_import_a_new_project_without_a_reliable_cwd.
  it("does not import a new project without a reliable folder", () => {
    writeNote("project-a", "MEMORY.md", "project memory")
    sync(["project-a"])
    expect(fs.existsSync(path.join(resources(), "project-a"))).toBe(false)
  })

  // missing_cwd_does_not_make_an_existing_scoped_project_look_deleted.
  it("keeps an imported project whose session logs no longer name its folder", () => {
    writeProjectSession("project-a", path.join(root, "project-a-cwd"))
    writeNote("project-a", "MEMORY.md", "project memory")
    sync()
    fs.rmSync(path.join(claudeHome, "projects", "project-a", "session.jsonl"))
    expect(sync()).toMatchObject({ changed: false })
    expect(fs.readFileSync(path.join(resources(), "project-a", "MEMORY.md"), "utf8")).toBe("project memory")
    // Allowlisted by the folder its scope.json names, it is kept too.
    sync([path.join(root, "project-a-cwd")])
    expect(listing(resources())).toEqual(["project-a"])
  })

  // removes_an_existing_unscoped_target_when_cwd_is_unavailable.
  it("removes an unscoped target named after a project that has no folder", () => {
    writeNote("project-a", "MEMORY.md", "source memory")
    fs.mkdirSync(path.join(resources(), "project-a"), { recursive: true })
    fs.writeFileSync(path.join(resources(), "project-a", "MEMORY.md"), "imported memory")
    expect(sync(["project-a"])).toMatchObject({ changed: true })
    expect(fs.existsSync(path.join(resources(), "project-a"))).toBe(false)
  })
})

describe("Claude discovery as Codex's memory tests expect", () => {
  // memory_tests.rs (openai/codex@923df3e9): discovers_arbitrary_project_markdown_and_resolves_cwd_from_session_metadata.
  it("finds every Markdown note at any depth and the folder from a session log past a non-JSON line", () => {
    const projectRoot = path.join(root, "source", "project-a")
    fs.mkdirSync(projectRoot, { recursive: true })
    writeNote("opaque-project-key", "MEMORY.md", "index")
    writeNote("opaque-project-key", "release-process.md", "release notes")
    writeNote("opaque-project-key", path.join("topics", "database.md"), "database notes")
    writeNote("opaque-project-key", "ignored.txt", "not markdown")
    fs.writeFileSync(path.join(claudeHome, "projects", "opaque-project-key", "session.jsonl"), `not json\n${JSON.stringify({ cwd: projectRoot })}\n`)
    const [project, ...others] = discoverClaudeProjects(claudeHome, undefined)
    expect(others).toEqual([])
    expect(project).toMatchObject({ key: "opaque-project-key", cwd: projectRoot })
    expect([...project!.notes.keys()].sort()).toEqual(["MEMORY.md", "release-process.md", path.join("topics", "database.md")])
  })

  // memory_tests.rs (zarraxx/codex@a464891e): leaves_project_unscoped_without_an_existing_absolute_cwd.
  it("leaves a project whose logged folder does not exist without a scope, so it is not imported", () => {
    writeNote("opaque-project-key", "MEMORY.md", "index")
    fs.writeFileSync(path.join(claudeHome, "projects", "opaque-project-key", "session.jsonl"), JSON.stringify({ cwd: path.join(root, "missing-project") }))
    expect(discoverClaudeProjects(claudeHome, undefined)).toEqual([])
  })

  // memory_tests.rs (zarraxx/codex@a464891e): skips_symlinked_memory_directory.
  it("skips a memory folder that is a symlink", () => {
    writeProjectSession("project", path.join(root, "project-cwd"))
    fs.mkdirSync(path.join(root, "outside-memory"))
    fs.writeFileSync(path.join(root, "outside-memory", "secret.md"), "secret")
    fs.symlinkSync(path.join(root, "outside-memory"), memoryDir("project"))
    expect(discoverClaudeProjects(claudeHome, undefined)).toEqual([])
  })

  // memory_tests.rs (openai/codex@923df3e9): does_not_require_documentation_example_topic_names.
  it("takes a note of any name", () => {
    writeProjectSession("project", path.join(root, "project-cwd"))
    writeNote("project", "team-conventions.md", "conventions")
    expect([...discoverClaudeProjects(claudeHome, undefined)[0]!.notes.keys()]).toEqual(["team-conventions.md"])
  })

  // memory.rs (openai/codex@923df3e9): the newest log first, equal times by name, last first;
  // the `.jsonl` extension in any case.
  it("reads the newest session log first, breaking equal times by name, whatever the extension's case", () => {
    writeNote("p", "MEMORY.md", "index")
    const older = path.join(root, "older")
    const newer = path.join(root, "newer")
    fs.mkdirSync(older)
    fs.mkdirSync(newer)
    const dir = path.join(claudeHome, "projects", "p")
    fs.writeFileSync(path.join(dir, "a.jsonl"), JSON.stringify({ cwd: older }))
    fs.writeFileSync(path.join(dir, "b.JSONL"), JSON.stringify({ cwd: newer }))
    const at = new Date("2026-07-13T00:00:00Z")
    for (const name of ["a.jsonl", "b.JSONL"]) fs.utimesSync(path.join(dir, name), at, at)
    expect(discoverClaudeProjects(claudeHome, undefined)[0]?.cwd).toBe(newer)
  })
})
