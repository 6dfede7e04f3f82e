// Memory V2's only artifact, memory_summary.md: what a finished V2 consolidation must leave. A run
// that fails the check is undone by the run snapshot (run-snapshot.ts), the same as in V1.
import fs from "node:fs"
import path from "node:path"
import { readRegularFile } from "../../util/regular-file.js"
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
  // Trimmed as Rust's str::trim does (Unicode White_Space), not JavaScript's: that also drops a
  // byte-order mark, which Codex's check keeps, and keeps NEL (U+0085), which Codex drops.
  const rustTrim = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g
  const present = new Set(lines.map((line) => line.replace(rustTrim, "")))
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

/** checkV2Summary over a file's bytes: invalid UTF-8 fails, as Codex's readiness check does. */
export function checkV2SummaryBytes(bytes: Buffer): V2Check {
  const text = decode(bytes)
  return text === undefined ? { valid: false, reason: "it is not valid UTF-8" } : checkV2Summary(text)
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
