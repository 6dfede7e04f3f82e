// The workspace's git baseline: one commit holding the folder as the last successful
// consolidation left it. Status and diff compare the folder with that commit; a reset replaces the
// whole repository, so text deleted or redacted since then survives nowhere in `.git`.
// isomorphic-git over node:fs writes the repository; nothing runs a git binary.
//
// Status is computed here rather than with isomorphic-git's statusMatrix: the HEAD tree is read
// once and every working file is hashed as a git blob, its mode compared too. That decides for
// itself what the workspace is (no .gitignore, no dot-entries, no symlinks read through) and
// measured ~15 ms for 256 summaries and a 100 KB MEMORY.md, against 40-70 ms for statusMatrix,
// so no stat cache is kept.
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { OMIT_HEADERS, formatPatch, structuredPatch } from "diff"
import { readRegularFile } from "../../util/regular-file.js"
import { add, commit, init, readBlob, readCommit, readObject, readTree, resolveRef } from "isomorphic-git"
import { PLUGIN_ID } from "../../constants.js"
import { sortByCodePoints } from "../../backend/safe-path.js"
import { WORKSPACE_DIFF_FILE } from "./workspace-diff.js"

export type ChangeStatus = "A" | "M" | "D"

export interface WorkspaceChange {
  status: ChangeStatus
  /** Relative to the memory root, "/"-separated. */
  path: string
}

/** An entry the walk passed over instead of reading: never followed, never committed. */
export interface SkippedEntry {
  path: string
  kind: "symlink" | "special"
}

export interface StatusOptions {
  /** Told of every symlink or special file found, so the caller can report it. */
  onSkipped?: (entry: SkippedEntry) => void
}

const GIT_DIR = ".git"
/** The next repository is built beside the live one and swapped in, so a crash leaves one or the other. */
const NEXT_GIT_DIR = ".git-baseline-next"
const AUTHOR = Object.freeze({ name: PLUGIN_ID, email: `${PLUGIN_ID}@localhost.invalid` })
const MESSAGE = "Memory baseline\n\nThe folder as the last consolidation left it; each reset replaces the repository.\n"
/** A file larger than this on either side gets a one-line note in the diff instead of its content. */
const DIFF_FILE_MAX_BYTES = 1024 * 1024
/** Past this much diff text further files are only counted: the rendered file is capped anyway. */
const DIFF_TOTAL_MAX_BYTES = 4 * 1024 * 1024
/** Beyond this many line edits a file's diff is shown as a whole replacement (bounds Myers' O(ND)). */
const MAX_EDIT_LENGTH = 1_000
/** Files added to the index per call, so a large folder never opens every file at once. */
const ADD_BATCH = 128
/** Git's binary test looks for a NUL byte in the first 8000 bytes. */
const BINARY_PROBE_BYTES = 8_000
/** Git's two modes for a regular file, as a tree entry names them. */
const REGULAR_MODE = "100644"
const EXECUTABLE_MODE = "100755"

/** A baseline file: its blob and its git mode. */
interface BaselineEntry {
  oid: string
  mode: string
}

/** Changes since the baseline commit, sorted by path. The baseline must exist (ensureBaseline). */
export async function workspaceStatus(root: string, options: StatusOptions = {}): Promise<WorkspaceChange[]> {
  const baseline = await baselineBlobs(root, {})
  const scan = scanWorkspace(root)
  for (const entry of scan.skipped) options.onSkipped?.(entry)
  const changes: WorkspaceChange[] = []
  const present = new Set<string>()
  for (const file of scan.files) {
    const bytes = readRegularFile(path.join(root, file))
    if (!bytes) continue
    present.add(file)
    const before = baseline.get(file)
    if (before === undefined) changes.push({ status: "A", path: file })
    // A mode change alone is a change, as in Codex: a skill's script made executable matters.
    else if (before.oid !== blobId(bytes) || before.mode !== fileMode(path.join(root, file))) changes.push({ status: "M", path: file })
  }
  for (const file of baseline.keys()) if (!present.has(file)) changes.push({ status: "D", path: file })
  return sortByCodePoints(changes, (change) => change.path)
}

/** The unified diff of `changes` against the baseline blobs, git-style, one section per file. */
export async function workspaceDiff(root: string, changes: ReadonlyArray<WorkspaceChange>): Promise<string> {
  const cache = {}
  const baseline = await baselineBlobs(root, cache)
  const sections: string[] = []
  let size = 0
  for (const [index, change] of changes.entries()) {
    if (size > DIFF_TOTAL_MAX_BYTES) {
      sections.push(`(${changes.length - index} more changed file(s) not shown: the diff is already over the size limit)\n`)
      break
    }
    const entry = change.status === "A" ? undefined : baseline.get(change.path)
    const before = entry === undefined ? undefined : { bytes: Buffer.from((await readBlob({ fs, dir: root, oid: entry.oid, cache })).blob), mode: entry.mode }
    const absolute = path.join(root, change.path)
    const afterBytes = change.status === "D" ? undefined : readRegularFile(absolute)
    const after = afterBytes === undefined ? undefined : { bytes: afterBytes, mode: fileMode(absolute) }
    const section = fileDiff(change.path, before, after)
    sections.push(section)
    size += section.length
  }
  return sections.join("")
}

/**
 * Drops `.git` and commits the folder as the one and only commit: with the history gone, text
 * the consolidation deleted or redacted does not linger in old objects. The diff file goes first.
 */
export async function resetBaseline(root: string, now: () => number): Promise<void> {
  fs.rmSync(path.join(root, WORKSPACE_DIFF_FILE), { force: true })
  await replaceRepository(root, now)
}

/** Keeps a usable baseline; otherwise (missing, not a folder, unreadable) commits the folder afresh. */
export async function ensureBaseline(root: string, now: () => number): Promise<"kept" | "created" | "reinitialised"> {
  const stat = fs.lstatSync(path.join(root, GIT_DIR), { throwIfNoEntry: false })
  if (!stat) {
    await replaceRepository(root, now)
    return "created"
  }
  if (stat.isDirectory() && (await usable(root))) return "kept"
  await replaceRepository(root, now)
  return "reinitialised"
}

/**
 * The workspace's regular files, "/"-separated and sorted. Dot-entries (`.git` among them) are not
 * memory, and the diff file describes the workspace rather than belonging to it. Symlinks and
 * special files are listed as skipped and never followed or opened.
 */
export function scanWorkspace(root: string): { files: string[]; skipped: SkippedEntry[] } {
  const stat = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!stat || stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`memory folder ${root} is not a plain folder`)
  const files: string[] = []
  const skipped: SkippedEntry[] = []
  const walk = (absolute: string, relative: string): void => {
    for (const entry of fs.readdirSync(absolute, { withFileTypes: true })) {
      const name = entry.name
      if (name.startsWith(".")) continue
      const child = relative ? `${relative}/${name}` : name
      if (child === WORKSPACE_DIFF_FILE) continue
      // A name that is not valid UTF-8 decodes with U+FFFD and cannot be opened by that string:
      // skip it rather than fail every consolidation on a file nobody can address. (Bun gives no
      // names with readdir's buffer encoding and file types, so the decoded name is checked.)
      if (name.includes("\uFFFD")) skipped.push({ path: child, kind: "special" })
      else if (entry.isSymbolicLink()) skipped.push({ path: child, kind: "symlink" })
      else if (entry.isDirectory()) walk(path.join(absolute, name), child)
      else if (entry.isFile()) files.push(child)
      else skipped.push({ path: child, kind: "special" })
    }
  }
  walk(root, "")
  return { files: sortByCodePoints(files, (file) => file), skipped }
}


/**
 * The git mode of a working file: executable when any execute bit is set, as git and Codex judge
 * it. Windows has no execute bit, so every file there is a regular one (Codex does the same).
 */
function fileMode(absolute: string): string {
  if (process.platform === "win32") return REGULAR_MODE
  const stat = fs.lstatSync(absolute, { throwIfNoEntry: false })
  return stat && (stat.mode & 0o111) !== 0 ? EXECUTABLE_MODE : REGULAR_MODE
}

/** The object id git gives these bytes as a blob. */
function blobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex")
}

/** HEAD's files (path -> blob id and mode), dot-entries left out as the walk leaves them out. Throws when unreadable. */
async function baselineBlobs(root: string, cache: object): Promise<Map<string, BaselineEntry>> {
  const head = await resolveRef({ fs, dir: root, ref: "HEAD" })
  const { commit: headCommit } = await readCommit({ fs, dir: root, oid: head, cache })
  const blobs = new Map<string, BaselineEntry>()
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await readTree({ fs, dir: root, oid, cache })
    for (const entry of tree) {
      if (entry.path.startsWith(".")) continue
      if (entry.type === "tree") await walk(entry.oid, `${prefix}${entry.path}/`)
      else if (entry.type === "blob") blobs.set(`${prefix}${entry.path}`, { oid: entry.oid, mode: entry.mode })
    }
  }
  await walk(headCommit.tree, "")
  return blobs
}

/** HEAD, its trees and the presence of every blob it names: what status and diff will need. */
async function usable(root: string): Promise<boolean> {
  try {
    const cache = {}
    const blobs = await baselineBlobs(root, cache)
    for (const { oid } of blobs.values()) {
      if (fs.existsSync(path.join(root, GIT_DIR, "objects", oid.slice(0, 2), oid.slice(2)))) continue
      // Not loose: a user's `git gc` may have packed it.
      await readObject({ fs, dir: root, oid, format: "deflated", cache })
    }
    return true
  } catch {
    return false
  }
}

async function replaceRepository(root: string, now: () => number): Promise<void> {
  const next = path.join(root, NEXT_GIT_DIR)
  fs.rmSync(next, { recursive: true, force: true })
  await init({ fs, dir: root, gitdir: next, defaultBranch: "main" })
  const { files } = scanWorkspace(root)
  const cache = {}
  // `add` also writes the index, so a git client run in the folder sees a clean tree; `force`
  // because a .gitignore in the folder must not hide memory from the baseline.
  for (let i = 0; i < files.length; i += ADD_BATCH) {
    await add({ fs, dir: root, gitdir: next, filepath: files.slice(i, i + ADD_BATCH), force: true, cache })
  }
  const author = { ...AUTHOR, timestamp: Math.floor(now() / 1000), timezoneOffset: 0 }
  await commit({ fs, dir: root, gitdir: next, message: MESSAGE, author, committer: author, cache })
  // rm removes a symlinked .git as a link, never what it points to.
  fs.rmSync(path.join(root, GIT_DIR), { recursive: true, force: true })
  fs.renameSync(next, path.join(root, GIT_DIR))
}

interface FileSide {
  bytes: Buffer
  mode: string
}

/** One file's section of the diff. `undefined` is the side where the file does not exist. */
function fileDiff(file: string, beforeSide: FileSide | undefined, afterSide: FileSide | undefined): string {
  const header = [`diff --git a/${file} b/${file}`]
  if (!beforeSide && afterSide) header.push(`new file mode ${afterSide.mode}`)
  if (beforeSide && !afterSide) header.push(`deleted file mode ${beforeSide.mode}`)
  if (beforeSide && afterSide && beforeSide.mode !== afterSide.mode) header.push(`old mode ${beforeSide.mode}`, `new mode ${afterSide.mode}`)
  const before = beforeSide?.bytes
  const after = afterSide?.bytes
  const from = before ? `a/${file}` : "/dev/null"
  const to = after ? `b/${file}` : "/dev/null"
  // Same bytes on both sides (only the mode changed): no content to show, as git shows it.
  if (before && after && before.equals(after)) return `${header.join("\n")}\n`
  const beforeSize = before?.length ?? 0
  const afterSize = after?.length ?? 0
  if (beforeSize > DIFF_FILE_MAX_BYTES || afterSize > DIFF_FILE_MAX_BYTES) {
    header.push(`(large file: ${beforeSize} bytes before, ${afterSize} bytes after; over ${DIFF_FILE_MAX_BYTES} bytes, so the content is not shown)`)
    return `${header.join("\n")}\n`
  }
  const oldText = before ? textOf(before) : ""
  const newText = after ? textOf(after) : ""
  if (oldText === undefined || newText === undefined) {
    header.push(`Binary files ${from} and ${to} differ`)
    return `${header.join("\n")}\n`
  }
  header.push(`--- ${from}`, `+++ ${to}`)
  const patch = structuredPatch(from, to, oldText, newText, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH })
  const hunks = patch ? (patch.hunks.length ? formatPatch(patch, OMIT_HEADERS) : "") : replacementHunk(oldText, newText)
  return `${header.join("\n")}\n${hunks}`
}

/** UTF-8 text, or undefined for what git would call binary (a NUL byte) or for invalid UTF-8. */
function textOf(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** Every old line removed and every new line added, in one hunk: what a too-long edit script amounts to. */
function replacementHunk(oldText: string, newText: string): string {
  const side = (text: string, sign: string): string[] => {
    if (!text) return []
    const lines = text.split("\n")
    const complete = lines[lines.length - 1] === ""
    if (complete) lines.pop()
    const out = lines.map((line) => sign + line)
    if (!complete) out.push("\\ No newline at end of file")
    return out
  }
  const removed = side(oldText, "-")
  const added = side(newText, "+")
  const count = (text: string) => (text ? text.split("\n").length - (text.endsWith("\n") ? 1 : 0) : 0)
  const range = (lines: number) => `${lines ? 1 : 0},${lines}`
  return `@@ -${range(count(oldText))} +${range(count(newText))} @@\n${[...removed, ...added].join("\n")}\n`
}

export { readRegularFile }
