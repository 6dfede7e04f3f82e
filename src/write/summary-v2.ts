// Memory V2's only artifact, memory_summary.md: what a finished V2 consolidation must leave, and
// how a summary that fails the check is kept from replacing the last one that passed. The
// consolidator writes the file in place, so phase 2 snapshots the valid bytes before it runs and
// puts them back (or removes the file) when validation fails.
import fs from "node:fs"
import path from "node:path"
import { readRegularFile, replaceFile } from "./regular-file.js"
import { symlinkProblem } from "./symlinks.js"
import { SUMMARY_FILE } from "./workspace.js"

/** The summary must be under this many UTF-8 bytes: the 2,500-token read-path cap at 4 bytes a token. */
export const V2_SUMMARY_LIMIT_BYTES = 10_000
/** Each must appear as a line of its own (surrounding whitespace ignored), not inside other text. */
export const V2_SUMMARY_HEADINGS: readonly string[] = Object.freeze(["## User Profile", "## User preferences", "## General Tips", "## What's in Memory"])

export type V2Check = { valid: true } | { valid: false; reason: string }

/** Pure: first line exactly `v1`, under the byte limit, every heading present as a line. */
export function checkV2Summary(text: string): V2Check {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""))
  const first = lines[0]!
  if (first !== "v1") return { valid: false, reason: `its first line is ${quote(first)}, not "v1"` }
  const bytes = Buffer.byteLength(text, "utf8")
  if (bytes >= V2_SUMMARY_LIMIT_BYTES) return { valid: false, reason: tooLarge(bytes) }
  const present = new Set(lines.map((line) => line.trim()))
  const missing = V2_SUMMARY_HEADINGS.filter((heading) => !present.has(heading))
  if (missing.length) return { valid: false, reason: `it lacks the heading line${missing.length > 1 ? "s" : ""} ${missing.map((h) => quote(h)).join(", ")}` }
  return { valid: true }
}

/**
 * What a finished V2 consolidation must leave: a plain folder with no symlink anywhere outside
 * `.git` (each one found is deleted, and named in the reason) and a regular memory_summary.md,
 * valid UTF-8, that passes checkV2Summary. Never throws: an unreadable folder is invalid.
 */
export function validateV2Artifacts(root: string): V2Check {
  try {
    const folder = fs.lstatSync(root, { throwIfNoEntry: false })
    if (!folder || folder.isSymbolicLink() || !folder.isDirectory()) return { valid: false, reason: "the memory folder is missing or not a plain folder" }
    const symlinks = symlinkProblem(root)
    if (symlinks) return { valid: false, reason: symlinks }
    const file = path.join(root, SUMMARY_FILE)
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (!stat) return { valid: false, reason: `${SUMMARY_FILE} is missing` }
    if (!stat.isFile()) return { valid: false, reason: `${SUMMARY_FILE} is not a regular file` }
    // A runaway file is judged by its size, without reading it.
    if (stat.size >= V2_SUMMARY_LIMIT_BYTES) return { valid: false, reason: `${SUMMARY_FILE}: ${tooLarge(stat.size)}` }
    const text = decode(readRegularFile(file))
    if (text === undefined) return { valid: false, reason: `${SUMMARY_FILE} is not a regular file of valid UTF-8` }
    const check = checkV2Summary(text)
    return check.valid ? check : { valid: false, reason: `${SUMMARY_FILE}: ${check.reason}` }
  } catch (error) {
    return { valid: false, reason: `the memory folder could not be checked: ${(error as Error).message}` }
  }
}

/**
 * The summary's bytes if it is a regular file that passes checkV2Summary now, else undefined.
 * Taken before the consolidator runs, it is what restoreSummary puts back.
 */
export function snapshotSummary(root: string): Buffer | undefined {
  const folder = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!folder || folder.isSymbolicLink() || !folder.isDirectory()) return undefined
  const bytes = readRegularFile(path.join(root, SUMMARY_FILE))
  const text = decode(bytes)
  return text !== undefined && checkV2Summary(text).valid ? bytes : undefined
}

/**
 * After a failed validation: puts the snapshot's bytes back, or removes the summary when there was
 * no valid one, so the read path never injects a summary that failed. Whatever stands in the
 * file's place (a folder, a symlink) is replaced, never written through.
 */
export function restoreSummary(root: string, previous: Buffer | undefined): "kept" | "restored" | "removed" {
  const folder = fs.lstatSync(root, { throwIfNoEntry: false })
  if (!folder || folder.isSymbolicLink() || !folder.isDirectory()) throw new Error(`memory folder ${root} is missing, a symlink or not a folder; the summary was not restored`)
  const file = path.join(root, SUMMARY_FILE)
  const current = fs.lstatSync(file, { throwIfNoEntry: false })
  if (previous === undefined) {
    if (!current) return "kept"
    fs.rmSync(file, { force: true, recursive: true })
    return "removed"
  }
  if (current?.isFile() && readRegularFile(file)?.equals(previous)) return "kept"
  if (current?.isDirectory()) fs.rmSync(file, { force: true, recursive: true })
  // Written beside and renamed over, so the read path sees either the old or the new bytes.
  replaceFile(file, previous)
  return "restored"
}

/** Strict UTF-8 with a byte-order mark kept, so a marked file fails the `v1` first line. */
function decode(bytes: Buffer | undefined): string | undefined {
  if (!bytes) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

function tooLarge(bytes: number): string {
  return `it is ${bytes} bytes; it must be under ${V2_SUMMARY_LIMIT_BYTES}`
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text)
}
