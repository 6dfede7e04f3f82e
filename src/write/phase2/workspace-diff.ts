// phase2_workspace_diff.md: what changed in the memory folder since the last consolidation, as
// the consolidator's work list. Rendering is pure (golden-tested); the file is capped so that a
// huge change can never become a prompt the model cannot read.
import fs from "node:fs"
import path from "node:path"
import { redact } from "../../redact/redact.js"
import { replaceFile } from "../../util/regular-file.js"

export const WORKSPACE_DIFF_FILE = "phase2_workspace_diff.md"
/** workspace_diff::MAX_BYTES */
export const WORKSPACE_DIFF_MAX_BYTES = 4 * 1024 * 1024

const TITLE = [
  "# Phase 2 workspace diff",
  "",
  "Generated from the memory folder's git baseline for this consolidation run; do not edit.",
  "",
  "## Status",
  "",
  "",
].join("\n")

export function renderWorkspaceDiff(changes: ReadonlyArray<{ status: string; path: string }>, diff: string): string {
  // Nothing changed: the status says so and, as in Codex, there is no diff section to read.
  if (changes.length === 0) return `${TITLE}- none\n`
  const status = changes.map((change) => `- ${change.status} ${displayPath(change.path)}`).join("\n")
  // The diff shows files as they are on disk, which a user may have edited by hand.
  const body = redact(diff).text
  const fence = fenceFor(body)
  const head = [TITLE + status, "", "## Diff", "", `${fence}diff`, ""].join("\n")
  const text = body ? (body.endsWith("\n") ? body : `${body}\n`) : "(no textual changes)\n"
  const tail = `${fence}\n`
  const full = head + text + tail
  if (Buffer.byteLength(full) <= WORKSPACE_DIFF_MAX_BYTES) return full
  // Codex's marker words, then what they leave out: how much there was.
  const marker = `[workspace diff truncated at ${WORKSPACE_DIFF_MAX_BYTES} bytes: the whole diff is ${Buffer.byteLength(text)} bytes and the rest is not shown]\n`
  const kept = cutUtf8Lines(head + text, WORKSPACE_DIFF_MAX_BYTES - Buffer.byteLength(marker) - Buffer.byteLength(tail))
  // A status list too long for the cap is cut before the fence opens, so none must close.
  return kept.length < head.length ? kept + marker : kept + marker + tail
}

/** Replaces the file whole; a symlink or stale file in its place is replaced, never written through. */
export async function writeWorkspaceDiff(root: string, content: string): Promise<void> {
  replaceFile(path.join(root, WORKSPACE_DIFF_FILE), content)
}

/**
 * At most `maxBytes` of UTF-8, never inside a character, ending at a line end when that keeps at
 * least half of `maxBytes` (Codex cuts at the character boundary alone).
 */
function cutUtf8Lines(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= maxBytes) return text
  const lineEnd = maxBytes > 0 ? bytes.lastIndexOf(0x0a, maxBytes - 1) : -1
  if (lineEnd >= 0 && lineEnd + 1 >= maxBytes / 2) return bytes.toString("utf8", 0, lineEnd + 1)
  // A line far longer than what is left (a huge one-line file): cut inside it, before a
  // continuation byte, and end the line, rather than drop the whole line and keep nothing.
  let end = Math.max(0, maxBytes - 1)
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return `${bytes.toString("utf8", 0, end)}\n`
}

/** A fence longer than any backtick run in the body, so no diff line can close it early. */
function fenceFor(body: string): string {
  let longest = 0
  for (const match of body.matchAll(/`{3,}/g)) longest = Math.max(longest, match[0].length)
  return "`".repeat(Math.max(3, longest + 1))
}

/** File names are one line each: a name holding control characters is shown quoted. */
function displayPath(file: string): string {
  return /[\u0000-\u001f\u007f]/.test(file) ? JSON.stringify(file) : file
}
