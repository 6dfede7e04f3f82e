// The memory folder as phase 2 sees it: prepared before each run (folder, seeded ad-hoc
// extension, usable git baseline), filled with the selected inputs, and checked afterwards.
//
//   memories/
//     MEMORY.md  memory_summary.md          the consolidator's output (validateArtifacts)
//     raw_memories.md  rollout_summaries/   inputs, rewritten from the selection every run
//     skills/                               optional output
//     extensions/<ext>/instructions.md      an extension; its resources/ age out after 7 days
//     extensions/ad_hoc/notes/              the user's notes, never pruned
//     phase2_workspace_diff.md              transient, written for the consolidator
//     .git/                                 the baseline (git-baseline.ts)
//
// V2 (memories_v2/) keeps only memory_summary.md as output and rollout_summaries/ as input: no
// raw_memories.md, MEMORY.md or skills/ (its validation is summary-v2.ts).
//
// Symlinks are never followed: a symlinked root or top-level entry is refused (the user's own
// arrangement, left for them to undo), any other symlink is deleted before the baseline and after
// the run (symlinks.ts), and files are replaced by rename, which replaces a link rather than
// writing through it.
import fs from "node:fs"
import path from "node:path"
import { nameTimestamp } from "../../backend/timestamps.js"
import { redact } from "../../redact/redact.js"
import type { MemoryVersion } from "../../util/paths.js"
import { createFile, readRegularFile, replaceFile } from "../../util/regular-file.js"
import { removeSymlinks, symlinkProblem } from "./symlinks.js"
import { WORKSPACE_DIFF_FILE } from "./workspace-diff.js"
import {
  RAW_MEMORIES_FILE,
  ROLLOUT_SUMMARIES_DIR,
  renderRawMemories,
  renderRolloutSummary,
  rolloutSummaryStems,
  type WorkspaceInput,
} from "./workspace-files.js"

export const MEMORY_FILE = "MEMORY.md"
export const SUMMARY_FILE = "memory_summary.md"
const EXTENSIONS_DIR = "extensions"
const AD_HOC_INSTRUCTIONS = "extensions/ad_hoc/instructions.md"
/** Entries the pipeline reads or writes at the top of the folder; none may be a symlink. */
const TOP_LEVEL = [MEMORY_FILE, SUMMARY_FILE, RAW_MEMORIES_FILE, ROLLOUT_SUMMARIES_DIR, "skills", EXTENSIONS_DIR, WORKSPACE_DIFF_FILE, ".git"]
/** extensions::RETENTION_DAYS */
const RESOURCE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

export interface SyncResult {
  /** The stem of each input's rollout summary, in input order. */
  stems: string[]
  prunedResources: number
  /** Secrets replaced in what was written, by class. */
  redactions: Record<string, number>
}

/** Prepares the folder for a run; returns the symlinks it deleted below the top level, sorted. */
export async function prepareWorkspace(root: string, options: { templatesDir: string; now: () => number }): Promise<{ removedSymlinks: string[] }> {
  const stat = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!stat) fs.mkdirSync(root, { recursive: true })
  else if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`memory folder ${root} is a symlink or not a folder; phase 2 does not use it`)
  for (const name of TOP_LEVEL) {
    if (fs.lstatSync(path.join(root, name), { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new Error(`${name} in the memory folder is a symlink; phase 2 does not follow symlinks, so replace it with the real thing`)
    }
  }
  // As Codex's ensure_layout (#39205): no symlink survives into the run.
  const removedSymlinks = removeSymlinks(root)
  fs.rmSync(path.join(root, WORKSPACE_DIFF_FILE), { force: true })
  seedAdHocInstructions(root, options.templatesDir)
  // The git library loads only when a consolidation runs, not with the plugin (it costs ~30 ms).
  const { ensureBaseline } = await import("./git-baseline.js")
  await ensureBaseline(root, options.now)
  return { removedSymlinks }
}

/**
 * Rewrites the inputs from the selection: one rollout summary per input (others deleted) and, in
 * the V1 layout, raw_memories.md, each rewritten only when its bytes change so an unchanged
 * selection leaves no trace in the diff; then prunes old extension resources. Everything written
 * is redacted. The V2 consolidator reads rollout summaries only, so V2 writes no raw_memories.md
 * and removes one left in the folder.
 */
export async function syncInputs(
  root: string,
  inputs: readonly WorkspaceInput[],
  options: { now: () => number; layout?: MemoryVersion },
): Promise<SyncResult> {
  const layout = options.layout ?? "v1"
  const redactions: Record<string, number> = {}
  const clean = (text: string): string => {
    const result = redact(text)
    for (const [rule, count] of Object.entries(result.counts)) redactions[rule] = (redactions[rule] ?? 0) + count
    return result.text
  }
  // The slug becomes a file name, so it is redacted before the stem is made from it.
  const safe = inputs.map((input) => ({ ...input, slug: input.slug === null ? null : redact(input.slug).text }))
  const stems = rolloutSummaryStems(safe)
  const wanted = new Map(stems.map((stem, index) => [`${stem}.md`, safe[index]!]))

  const summaries = ensureDirectory(root, ROLLOUT_SUMMARIES_DIR)
  for (const entry of fs.readdirSync(summaries, { withFileTypes: true })) {
    if (!entry.name.endsWith(".md") || wanted.has(entry.name) || entry.isDirectory()) continue
    fs.rmSync(path.join(summaries, entry.name), { force: true })
  }
  for (const [name, input] of wanted) writeIfChanged(path.join(summaries, name), clean(renderRolloutSummary(input, layout)))
  // rmSync removes a symlink itself, never its target.
  if (layout === "v2") fs.rmSync(path.join(root, RAW_MEMORIES_FILE), { force: true, recursive: true })
  else writeIfChanged(path.join(root, RAW_MEMORIES_FILE), clean(renderRawMemories(safe)))
  return { stems, prunedResources: pruneResources(root, options.now()), redactions }
}

/**
 * What a finished consolidation must leave: no symlink (each one found is deleted, and named),
 * MEMORY.md, and a summary whose first line is `v1`.
 */
export function validateArtifacts(root: string): { valid: true } | { valid: false; reason: string } {
  const folder = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!folder || folder.isSymbolicLink() || !folder.isDirectory()) return { valid: false, reason: "the memory folder is missing or not a plain folder" }
  const symlinks = symlinkProblem(root)
  if (symlinks) return { valid: false, reason: symlinks }
  for (const name of [MEMORY_FILE, SUMMARY_FILE]) {
    const stat = fs.lstatSync(path.join(root, name), { throwIfNoEntry: false })
    if (!stat) return { valid: false, reason: `${name} is missing` }
    if (stat.isSymbolicLink()) return { valid: false, reason: `${name} is a symlink` }
    if (!stat.isFile()) return { valid: false, reason: `${name} is not a regular file` }
  }
  const firstLine = readFirstLine(path.join(root, SUMMARY_FILE))
  if (firstLine !== "v1") return { valid: false, reason: `the first line of ${SUMMARY_FILE} is ${JSON.stringify(firstLine ?? "")}, not "v1"` }
  return { valid: true }
}

/** A V1 summary's text may be injected when its first line is `v1` (what validateArtifacts asks of the file). */
export function checkV1Summary(text: string): { valid: true } | { valid: false; reason: string } {
  const first = text.split("\n", 1)[0]!.replace(/\r$/, "")
  return first === "v1" ? { valid: true } : { valid: false, reason: `its first line is ${JSON.stringify(first.slice(0, 60))}, not "v1"` }
}

/**
 * True when some extension holds input beyond its instructions.md (a note, a resource): then the
 * workspace has something to consolidate even with no session selected. Read-only; dot-entries
 * and symlinks are passed over, as the workspace scan does.
 */
export function hasExtensionInputs(root: string): boolean {
  const extensions = path.join(root, EXTENSIONS_DIR)
  if (!isPlainDirectory(root) || !isPlainDirectory(extensions)) return false
  const holdsFile = (folder: string, top: boolean): boolean =>
    fs.readdirSync(folder, { withFileTypes: true }).some((entry) => {
      if (entry.name.startsWith(".")) return false
      if (entry.isDirectory()) return holdsFile(path.join(folder, entry.name), false)
      return entry.isFile() && !(top && entry.name === "instructions.md")
    })
  return fs
    .readdirSync(extensions, { withFileTypes: true })
    .some((extension) => extension.isDirectory() && !extension.name.startsWith(".") && holdsFile(path.join(extensions, extension.name), true))
}

/** Create-new only: an instructions.md the user edited (or replaced) is theirs. */
function seedAdHocInstructions(root: string, templatesDir: string): void {
  const text = fs.readFileSync(path.join(templatesDir, AD_HOC_INSTRUCTIONS), "utf8")
  ensureDirectory(root, path.posix.dirname(AD_HOC_INSTRUCTIONS))
  try {
    createFile(path.join(root, AD_HOC_INSTRUCTIONS), text)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  }
}

/**
 * Deletes `extensions/<ext>/resources/<YYYY-MM-DDTHH-MM-SS...>.md` older than the retention, for
 * extensions with an instructions.md. Nested or untimestamped files, and notes/, are kept.
 */
function pruneResources(root: string, now: number): number {
  const extensions = path.join(root, EXTENSIONS_DIR)
  if (!isPlainDirectory(extensions)) return 0
  let pruned = 0
  for (const extension of fs.readdirSync(extensions, { withFileTypes: true })) {
    if (!extension.isDirectory() || extension.name.startsWith(".")) continue
    const folder = path.join(extensions, extension.name)
    if (!fs.lstatSync(path.join(folder, "instructions.md"), { throwIfNoEntry: false })?.isFile()) continue
    const resources = path.join(folder, "resources")
    if (!isPlainDirectory(resources)) continue
    for (const entry of fs.readdirSync(resources, { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".md")) continue
      const at = nameTimestamp(entry.name)
      if (at === undefined || now - at < RESOURCE_RETENTION_MS) continue
      fs.rmSync(path.join(resources, entry.name), { force: true })
      pruned++
    }
  }
  return pruned
}

function writeIfChanged(file: string, text: string): void {
  const bytes = Buffer.from(text, "utf8")
  if (readRegularFile(file)?.equals(bytes)) return
  replaceFile(file, bytes)
}

/** Creates each missing folder below the root; refuses a symlink or a file anywhere on the way, the root included. */
function ensureDirectory(root: string, relative: string): string {
  if (!isPlainDirectory(root)) throw new Error(`memory folder ${root} is missing, a symlink or not a folder`)
  let current = root
  for (const part of relative.split("/")) {
    current = path.join(current, part)
    const stat = fs.lstatSync(current, { throwIfNoEntry: false })
    if (!stat) fs.mkdirSync(current)
    else if (stat.isSymbolicLink()) throw new Error(`${path.relative(root, current)} in the memory folder is a symlink; phase 2 does not write through symlinks`)
    else if (!stat.isDirectory()) throw new Error(`${path.relative(root, current)} in the memory folder is not a folder`)
  }
  return current
}

function isPlainDirectory(absolute: string): boolean {
  const stat = fs.lstatSync(absolute, { throwIfNoEntry: false })
  return !!stat && !stat.isSymbolicLink() && stat.isDirectory()
}

/** The first line, without its line ending; undefined for an unreadable file. */
function readFirstLine(file: string): string | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0))
  } catch {
    return undefined
  }
  try {
    const buffer = Buffer.alloc(256)
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
    return buffer.toString("utf8", 0, read).split("\n")[0]!.replace(/\r$/, "")
  } finally {
    fs.closeSync(fd)
  }
}
