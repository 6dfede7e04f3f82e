// Claude Code -> OpenCode, one way: each Claude Code project's memory notes
// (<claude_home>/projects/<key>/memory/**/*.md) are copied into this memory's
// `extensions/external_agent_import/resources/<key>/` with a `scope.json` naming the project's
// folder, inside each claimed consolidation, before the diff (the same extension name and layout
// Codex's own Claude import uses). A project's folder is the `cwd` of its newest session log that
// names an absolute folder which still exists; a project without one is not imported. A project
// whose notes vanished, or that left the allowlist, loses its resources here; one that is still
// there but lost its folder keeps what was imported (as in Codex). Only folders holding our
// `scope.json` are ours to remove: anything else put under resources/ is left alone, except an
// unscoped folder named after a source project, which Codex's import replaces too. A Claude home
// that cannot be read is a no-op, never a mass delete. Symlinks are skipped; everything copied is redacted.
import fs from "node:fs"
import path from "node:path"
import { redact } from "../redact/redact.js"
import type { ExtensionSync, WorkspaceExtension } from "../write/phase2/workspace-extension.js"
import { listFiles, mirrorFolder, readHead, readSource, removeFolder, writeFileIfChanged } from "./mirror.js"

export const CLAUDE_IMPORT_DIR = "extensions/external_agent_import"
const RESOURCES = `${CLAUDE_IMPORT_DIR}/resources`
/** A project key names a folder here: Claude Code's keys are path-like names of these characters. */
const KEY = /^[A-Za-z0-9._-]{1,200}$/
const MAX_NOTES_PER_PROJECT = 500
/** How much of one session log is read while looking for its cwd: its first lines carry it. */
const LOG_HEAD_BYTES = 256 * 1024

export interface ClaudeProject {
  key: string
  cwd: string
  /** Relative path under memory/ -> bytes (redacted). */
  notes: Map<string, Buffer>
}

export function claudeImport(options: { claudeHome: string; projects: readonly string[] | undefined; instructions: string }): WorkspaceExtension {
  let last = "not run yet"
  const projectsDir = path.join(options.claudeHome, "projects")
  return {
    name: "claude import",
    hasSource: () => readableFolder(projectsDir) && fs.readdirSync(projectsDir).length > 0,
    sync(root): ExtensionSync {
      if (!readableFolder(projectsDir)) {
        last = `skipped: ${projectsDir} cannot be read (nothing removed)`
        return { changed: false, detail: last }
      }
      const { projects, unscoped } = scanClaudeProjects(options.claudeHome, options.projects)
      const resources = path.join(root, RESOURCES)
      if (projects.length === 0 && !fs.existsSync(resources)) {
        last = "no Claude Code project with memory notes"
        return { changed: false, detail: last }
      }
      let changed = writeFileIfChanged(root, `${CLAUDE_IMPORT_DIR}/instructions.md`, Buffer.from(options.instructions, "utf8"))
      const kept = new Set(projects.map((project) => project.key))
      const removed: string[] = []
      if (fs.existsSync(resources)) {
        for (const entry of fs.readdirSync(resources, { withFileTypes: true })) {
          if (kept.has(entry.name) || !removable(resources, entry, unscoped, options.projects)) continue
          if (removeFolder(resources, entry.name)) removed.push(entry.name)
        }
      }
      const updated: string[] = []
      for (const project of projects) {
        // A plain file where the project's folder goes is replaced, as Codex replaces any target.
        const target = path.join(resources, project.key)
        if (fs.lstatSync(target, { throwIfNoEntry: false })?.isFile()) fs.rmSync(target)
        const files = new Map(project.notes)
        files.set("scope.json", Buffer.from(`${JSON.stringify({ cwd: project.cwd }, null, 2)}\n`, "utf8"))
        const result = mirrorFolder(root, `${RESOURCES}/${project.key}`, files)
        if (result.written.length || result.removed.length) updated.push(project.key)
      }
      changed ||= removed.length > 0 || updated.length > 0
      last = `${projects.length} project(s)${updated.length ? `; updated ${updated.join(", ")}` : ""}${removed.length ? `; removed ${removed.join(", ")}` : ""}`
      return { changed, detail: last }
    },
    describe: () => `claude import: from ${projectsDir}${options.projects ? ` (only ${options.projects.join(", ")})` : ""}; last run: ${last}`,
  }
}

/**
 * The projects to import: every key under projects/ (or those the allowlist names, by key or by
 * folder) that has memory notes and a session log naming its folder. Pure apart from reading.
 */
export function discoverClaudeProjects(claudeHome: string, allow: readonly string[] | undefined): ClaudeProject[] {
  return scanClaudeProjects(claudeHome, allow).projects
}

/**
 * The projects to import, and the keys of those with notes but no folder to scope them (allowed
 * or not): their earlier import is kept rather than taken for a deleted project.
 */
function scanClaudeProjects(claudeHome: string, allow: readonly string[] | undefined): { projects: ClaudeProject[]; unscoped: Set<string> } {
  const projectsDir = path.join(claudeHome, "projects")
  const projects: ClaudeProject[] = []
  const unscoped = new Set<string>()
  for (const entry of fs.readdirSync(projectsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !KEY.test(entry.name)) continue
    const dir = path.join(projectsDir, entry.name)
    const memory = path.join(dir, "memory")
    if (!fs.lstatSync(memory, { throwIfNoEntry: false })?.isDirectory()) continue
    const cwd = projectFolder(dir)
    const names = listFiles(memory)
      .filter((relative) => relative.toLowerCase().endsWith(".md"))
      // Dot files are editor and sync leftovers (macOS writes binary `._NAME.md` beside a note).
      .filter((relative) => !relative.split(path.sep).some((part) => part.startsWith(".")))
    if (!cwd) {
      // Notes with no folder to scope them are not read: only the key matters, to keep their earlier import.
      if (names.length) unscoped.add(entry.name)
      continue
    }
    if (!allowed(allow, entry.name, cwd)) continue
    const notes = new Map<string, Buffer>()
    for (const relative of names.slice(0, MAX_NOTES_PER_PROJECT)) {
      const bytes = readSource(path.join(memory, relative))
      if (bytes) notes.set(relative, Buffer.from(redact(bytes.toString("utf8")).text, "utf8"))
    }
    if (notes.size) projects.push({ key: entry.name, cwd, notes })
  }
  return { projects: projects.sort((a, b) => (a.key < b.key ? -1 : 1)), unscoped }
}

/**
 * Whether an entry of resources/ that no current project keeps may go: a folder holding our
 * scope.json (a project that vanished or left the allowlist) unless its project is still there
 * without a folder, and an unscoped entry named after such a project (an import older than
 * scope.json, as Codex replaces it). Anything else was not written here and is left alone.
 */
function removable(resources: string, entry: fs.Dirent, unscoped: ReadonlySet<string>, allow: readonly string[] | undefined): boolean {
  if (entry.isSymbolicLink()) return false
  const scope = path.join(resources, entry.name, "scope.json")
  const owned = entry.isDirectory() && fs.lstatSync(scope, { throwIfNoEntry: false })?.isFile() === true
  if (!unscoped.has(entry.name)) return owned
  // The project is still there without a folder: the allowlist may name it by the folder it had.
  return owned ? !allowed(allow, entry.name, scopedFolder(scope)) : allowed(allow, entry.name, undefined)
}

/** Whether the allowlist (none: every project) names a project, by key or by folder. */
function allowed(allow: readonly string[] | undefined, key: string, cwd: string | undefined): boolean {
  return !allow || allow.some((item) => item === key || (cwd !== undefined && path.resolve(item) === cwd))
}

/** The folder an earlier import's scope.json names, if it can be read. */
function scopedFolder(scope: string): string | undefined {
  try {
    const cwd = (JSON.parse(readSource(scope)?.toString("utf8") ?? "") as { cwd?: unknown }).cwd
    return typeof cwd === "string" ? cwd : undefined
  } catch {
    return undefined
  }
}

/** The cwd of the newest session log (`*.jsonl`) that names an absolute folder which exists. */
function projectFolder(dir: string): string | undefined {
  const logs = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith(".jsonl"))
    .map((entry) => ({ name: entry.name, file: path.join(dir, entry.name), mtime: fs.statSync(path.join(dir, entry.name)).mtimeMs }))
    // Equal times are broken by name, last first, as Codex does: the order never depends on the file system's.
    .sort((a, b) => b.mtime - a.mtime || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0))
  for (const { file } of logs) {
    const cwd = cwdOf(file)
    if (cwd) return cwd
  }
  return undefined
}

function cwdOf(file: string): string | undefined {
  const head = readHead(file, LOG_HEAD_BYTES)
  if (!head) return undefined
  for (const line of head.split("\n")) {
    if (!line.includes('"cwd"')) continue
    try {
      const cwd = (JSON.parse(line) as { cwd?: unknown }).cwd
      if (typeof cwd !== "string" || !path.isAbsolute(cwd)) continue
      const real = fs.realpathSync(cwd)
      if (fs.statSync(real).isDirectory()) return real
    } catch {
      // a line that is not JSON, or a folder that is gone
    }
  }
  return undefined
}

function readableFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory() && (fs.readdirSync(dir), true)
  } catch {
    return false
  }
}
