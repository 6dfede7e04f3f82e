// The maintainers' drift check: what changed in Codex since each file of this plugin was last
// audited against it (codex-map.yaml), read from a local Codex checkout with the git binary.
//
//   CODEX_REPO=/path/to/codex ./scripts/check-codex-drift.sh [--json] [--map FILE] [--update-ref FILE...]
//
// For every mapped Codex path it reports a move or rename (git's rename detection between the
// file's codex_ref and the checkout's HEAD) or a deletion, and for every project file whose
// sources or watch paths changed since its codex_ref, what changed (a diffstat) and the command
// that shows the whole diff. Exit 0: aligned; 1: drift; 2: a setup error (CODEX_REPO unset or not
// a repository, an audited commit missing, an invalid map). `--update-ref` (after a review)
// records the checkout's HEAD as the audited commit of the files named.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { matchesPattern, parseCodexMap, projectRoot, readCodexMap, type CodexMap } from "./codex-map.js"

export interface Change {
  status: "A" | "M" | "D" | "R"
  path: string
  /** For a rename: the path at the audited commit. */
  from?: string
}

export interface FileReport {
  file: string
  codex_ref: string
  moved: Array<{ from: string; to: string }>
  deleted: string[]
  /** Mapped sources that do not exist at the audited commit: the map itself is wrong there. */
  missing: string[]
  /** Mapped sources whose content changed, with line counts. */
  changed: Array<{ path: string; added: number; deleted: number }>
  /** Upstream files under the entry's watch paths that changed (added, modified, deleted or moved). */
  watched: string[]
  /** Shows the whole upstream diff for this file. */
  command: string
}

export interface DriftReport {
  repo: string
  head: string
  aligned: boolean
  files: FileReport[]
  /** Changes under the map's own watch paths that no file's sources or watch paths cover. */
  unowned: string[]
}

export type DriftOutcome = { code: 0 | 1 | 2; stdout: string; stderr: string }

export interface DriftOptions {
  repo: string | undefined
  mapFile: string
  json?: boolean
  updateRef?: readonly string[]
}

export function checkDrift(options: DriftOptions): DriftOutcome {
  const setup = (message: string): DriftOutcome => ({ code: 2, stdout: "", stderr: `check-codex-drift: ${message}\n` })
  if (!options.repo?.trim()) return setup("CODEX_REPO is not set. Point it at a local clone of openai/codex: CODEX_REPO=/path/to/codex ./scripts/check-codex-drift.sh")
  const repo = path.resolve(options.repo)
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 * 1024 * 1024 })
  try {
    git("rev-parse", "--git-dir")
  } catch {
    return setup(`${repo} is not a git repository (CODEX_REPO must be a clone of openai/codex)`)
  }
  const read = readCodexMap(options.mapFile)
  if (!read.ok) return setup(`${options.mapFile} does not match its schema:\n  ${read.problems.join("\n  ")}`)
  const map = read.map
  const refs = new Map<string, string>()
  for (const ref of new Set([map.codex_ref, ...Object.values(map.files).flatMap((entry) => (entry.codex_ref ? [entry.codex_ref] : []))])) {
    try {
      refs.set(ref, git("rev-parse", "--verify", "--quiet", `${ref}^{commit}`).trim())
    } catch {
      return setup(`${repo} does not have the audited commit ${ref}. Fetch it first, e.g. git -C ${repo} fetch origin (or fetch --unshallow for a shallow clone)`)
    }
  }
  const head = git("rev-parse", "HEAD").trim()
  if (options.updateRef) return updateRefs(options.mapFile, options.updateRef, head, map)

  const changesAt = new Map<string, Change[]>()
  const changes = (ref: string) => {
    if (!changesAt.has(ref)) changesAt.set(ref, parseNameStatus(git("diff", "--name-status", "-M", "-z", refs.get(ref)!, head)))
    return changesAt.get(ref)!
  }
  const treeAt = new Map<string, Set<string>>()
  const exists = (ref: string, source: string) => {
    if (!treeAt.has(ref)) treeAt.set(ref, new Set(git("ls-tree", "-r", "--name-only", "-z", refs.get(ref)!).split("\0").filter(Boolean)))
    const tree = treeAt.get(ref)!
    if (/[*?]/.test(source)) return [...tree].some((file) => matchesPattern(source, file))
    return source.endsWith("/") ? [...tree].some((file) => file.startsWith(source)) : tree.has(source)
  }
  const numstat = (ref: string, file: string) => {
    const [added, deleted] = git("diff", "--numstat", "-M", refs.get(ref)!, head, "--", file).trim().split(/\s+/)
    return { added: Number(added) || 0, deleted: Number(deleted) || 0 }
  }

  const files: FileReport[] = []
  const owned = new Set<string>()
  for (const [file, entry] of Object.entries(map.files)) {
    const ref = entry.codex_ref ?? map.codex_ref
    const sources = entry.codex ?? []
    const watch = entry.watch_paths ?? []
    const report: FileReport = { file, codex_ref: ref, moved: [], deleted: [], missing: sources.filter((source) => !exists(ref, source)), changed: [], watched: [], command: "" }
    for (const change of changes(ref)) {
      const before = change.from ?? change.path
      const inSources = sources.some((source) => matchesPattern(source, before))
      const inWatch = watch.some((pattern) => matchesPattern(pattern, before) || matchesPattern(pattern, change.path))
      if (inSources || inWatch) owned.add(change.path)
      if (inSources) {
        if (change.status === "R") report.moved.push({ from: before, to: change.path })
        else if (change.status === "D") report.deleted.push(change.path)
        else report.changed.push({ path: change.path, ...numstat(ref, change.path) })
      } else if (inWatch) report.watched.push(`${change.status} ${change.from ? `${change.from} -> ` : ""}${change.path}`)
    }
    if (!report.moved.length && !report.deleted.length && !report.missing.length && !report.changed.length && !report.watched.length) continue
    const paths = [...new Set([...sources, ...watch])].map((p) => p.replace(/\*.*$/, "")).join(" ")
    report.command = `git -C ${repo} diff -M ${ref} ${head.slice(0, 12)} -- ${paths}`
    files.push(report)
  }
  const unowned = changes(map.codex_ref)
    .filter((change) => !owned.has(change.path) && (map.watch_paths ?? []).some((pattern) => matchesPattern(pattern, change.from ?? change.path) || matchesPattern(pattern, change.path)))
    .map((change) => `${change.status} ${change.from ? `${change.from} -> ` : ""}${change.path}`)
  const report: DriftReport = { repo, head, aligned: files.length === 0 && unowned.length === 0, files, unowned }
  return { code: report.aligned ? 0 : 1, stdout: options.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report, map), stderr: "" }
}

/** `git diff --name-status -z`: NUL-separated status, then one path (two for a rename or copy). */
export function parseNameStatus(output: string): Change[] {
  const fields = output.split("\0").filter((field) => field !== "")
  const changes: Change[] = []
  for (let i = 0; i < fields.length; ) {
    const status = fields[i++]!
    const kind = status[0]!
    if (kind === "R" || kind === "C") {
      const from = fields[i++]!
      const to = fields[i++]!
      changes.push(kind === "R" ? { status: "R", path: to, from } : { status: "A", path: to })
    } else changes.push({ status: kind === "A" || kind === "D" ? kind : "M", path: fields[i++]! })
  }
  return changes
}

export function renderReport(report: DriftReport, map: CodexMap): string {
  const lines: string[] = []
  lines.push(`Codex checkout ${report.repo} at ${report.head.slice(0, 12)}; map audited at ${map.codex_ref} (${map.codex_ref_date})`)
  if (report.aligned) return `${lines[0]}\naligned: nothing mapped changed since its audited commit\n`
  for (const file of report.files) {
    lines.push("", `${file.file}  (audited at ${file.codex_ref})`)
    for (const move of file.moved) lines.push(`  moved    ${move.from} -> ${move.to}`)
    for (const gone of file.deleted) lines.push(`  deleted  ${gone}`)
    for (const absent of file.missing) lines.push(`  missing  ${absent} (not in Codex at the audited commit: the map is wrong here)`)
    for (const change of file.changed) lines.push(`  changed  ${change.path}  +${change.added} -${change.deleted}`)
    for (const watched of file.watched) lines.push(`  watched  ${watched}`)
    lines.push(`  diff:    ${file.command}`)
  }
  if (report.unowned.length) {
    lines.push("", "Changed under the map's watch paths, mapped by no file:")
    for (const change of report.unowned) lines.push(`  ${change}`)
  }
  lines.push("", `drift: ${report.files.length} file(s)${report.unowned.length ? ` and ${report.unowned.length} unowned change(s)` : ""}. Review each, port it or record why not in the file's note, then run with --update-ref <file>...`)
  return `${lines.join("\n")}\n`
}

/** Records `head` as the audited commit of each named file, in place, keeping the rest of the file as it is. */
function updateRefs(mapFile: string, files: readonly string[], head: string, map: CodexMap): DriftOutcome {
  if (files.length === 0) return { code: 2, stdout: "", stderr: "check-codex-drift: --update-ref needs the files you reviewed, e.g. --update-ref src/write/phase2/phase2.ts\n" }
  const unknown = files.filter((file) => !(file in map.files))
  if (unknown.length) return { code: 2, stdout: "", stderr: `check-codex-drift: not in the map: ${unknown.join(", ")}\n` }
  let text = fs.readFileSync(mapFile, "utf8")
  for (const file of files) text = setEntryRef(text, file, head)
  if (!parseCodexMap(text).ok) return { code: 2, stdout: "", stderr: "check-codex-drift: the updated map would not be valid; nothing written\n" }
  const temporary = `${mapFile}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text)
  fs.renameSync(temporary, mapFile)
  return { code: 0, stdout: `recorded ${head.slice(0, 12)} as the audited commit of ${files.join(", ")}\n`, stderr: "" }
}

/**
 * The map text with `codex_ref: <ref>` set in one entry: replaced where the entry has one, else
 * added as its first field (a block entry gets a line, a one-line `{ ... }` entry a field).
 */
export function setEntryRef(text: string, key: string, ref: string): string {
  const lines = text.split("\n")
  const at = lines.findIndex((line) => line === `  ${key}:` || line.startsWith(`  ${key}: `))
  if (at < 0) throw new Error(`no entry ${key}`)
  const line = lines[at]!
  const inline = /^(\s*\S.*?:\s*)\{\s*(.*)\}\s*$/.exec(line)
  if (inline) {
    const fields = inline[2]!.trim().replace(/(^|,\s*)codex_ref:\s*"?[0-9a-f]+"?\s*(,\s*)?/, "$1").replace(/,\s*$/, "")
    lines[at] = `${inline[1]}{ codex_ref: ${yamlRef(ref)}${fields ? `, ${fields}` : ""} }`
    return lines.join("\n")
  }
  let end = at + 1
  while (end < lines.length && (lines[end]!.startsWith("    ") || lines[end]!.trim() === "")) end++
  const existing = lines.slice(at + 1, end).findIndex((l) => l.startsWith("    codex_ref:"))
  if (existing >= 0) lines[at + 1 + existing] = `    codex_ref: ${yamlRef(ref)}`
  else lines.splice(at + 1, 0, `    codex_ref: ${yamlRef(ref)}`)
  return lines.join("\n")
}

function main(argv: readonly string[]): number {
  // node:util's parser: three flags and a list of files need no library.
  const { values, positionals } = parseArgs({ args: [...argv], allowPositionals: true, options: { json: { type: "boolean" }, map: { type: "string" }, "update-ref": { type: "boolean" } } })
  const mapFile = values.map ? path.resolve(values.map) : path.join(projectRoot(path.dirname(fileURLToPath(import.meta.url))), "codex-map.yaml")
  if (positionals.length && !values["update-ref"]) {
    process.stderr.write(`check-codex-drift: unexpected arguments ${positionals.join(" ")} (files go after --update-ref)\n`)
    return 2
  }
  const outcome = checkDrift({ repo: process.env.CODEX_REPO, mapFile, json: values.json ?? false, ...(values["update-ref"] ? { updateRef: positionals } : {}) })
  process.stdout.write(outcome.stdout)
  process.stderr.write(outcome.stderr)
  return outcome.code
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) process.exitCode = main(process.argv.slice(2))

/** A ref as YAML must see it: quoted when it would otherwise read as a number (digits, or digits around one "e"). */
export function yamlRef(ref: string): string {
  return /^[0-9]+(?:e[0-9]+)?$/.test(ref) ? `"${ref}"` : ref
}
