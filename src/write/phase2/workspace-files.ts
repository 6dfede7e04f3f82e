// The phase-2 input files, rendered from the selected extraction outputs: one rollout summary per
// session and raw_memories.md over all of them. Pure: the same selection gives the same names and
// bytes, so an unchanged selection leaves the workspace (and its git diff) untouched.
import { createHash } from "node:crypto"
import { fileTimestamp } from "../../backend/notes.js"
import { sortByCodePoints } from "../../backend/safe-path.js"
import type { Phase2Input } from "../../store/phase2-jobs.js"
import type { MemoryVersion } from "../../util/paths.js"

/** What the workspace files are made of: the part of a selected phase-2 input that is written. */
export type WorkspaceInput = Pick<Phase2Input, "sessionId" | "sourceUpdatedAt" | "rawMemory" | "rolloutSummary" | "slug" | "cwd"> &
  Partial<Pick<Phase2Input, "gitBranch" | "projectKey" | "projectName">>

export const RAW_MEMORIES_FILE = "raw_memories.md"
export const ROLLOUT_SUMMARIES_DIR = "rollout_summaries"

/** ROLLOUT_SLUG_MAX_LEN */
const SLUG_MAX = 60
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** 62^4: the hash is four base-62 digits. */
const HASH_SPACE = 14_776_336

/**
 * `<YYYY-MM-DDTHH-MM-SS>-<hash>[-<slug>]`: the UTC time sorts the files, the hash of the session
 * id keeps two sessions of the same second apart, and the slug says what the session was about.
 */
export function rolloutSummaryStem(input: WorkspaceInput): string {
  const stamp = fileTimestamp(new Date(input.sourceUpdatedAt))
  const slug = stemSlug(input.slug)
  return slug ? `${stamp}-${sessionHash(input.sessionId)}-${slug}` : `${stamp}-${sessionHash(input.sessionId)}`
}

/**
 * The stem of each input, in input order. Two inputs whose stems collide (same second, same hash,
 * same slug) would overwrite each other's file, so the later one in session-id order gets `-2`.
 */
export function rolloutSummaryStems(inputs: readonly WorkspaceInput[]): string[] {
  const stems = new Array<string>(inputs.length)
  const taken = new Set<string>()
  const order = sortByCodePoints(inputs.map((input, index) => ({ input, index })), (entry) => entry.input.sessionId)
  for (const { input, index } of order) {
    const stem = rolloutSummaryStem(input)
    let unique = stem
    for (let n = 2; taken.has(unique); n++) unique = `${stem}-${n}`
    taken.add(unique)
    stems[index] = unique
  }
  return stems
}

/**
 * V1: the session's id, time and folder, then its summary. V2 has no raw_memories.md and no
 * MEMORY.md, so this file is the consolidator's only source: it also carries the UTC day the
 * summary groups work under and the topic, so every pointer in the summary can be copied from a
 * header instead of being guessed.
 */
export function renderRolloutSummary(input: WorkspaceInput, layout: MemoryVersion = "v1"): string {
  const head = [`session_id: ${headerValue(input.sessionId)}`, `updated_at: ${isoTime(input.sourceUpdatedAt)}`]
  if (layout === "v2") head.push(`date: ${isoTime(input.sourceUpdatedAt).slice(0, 10)}`)
  head.push(`cwd: ${input.cwd ? headerValue(input.cwd) : "(unknown)"}`)
  // Codex's optional line: only when the folder was a repository, so older records keep their bytes.
  const branch = input.gitBranch ? headerValue(input.gitBranch) : ""
  if (branch) head.push(`git_branch: ${branch}`)
  head.push(...projectLines(input))
  if (layout === "v2") head.push(`topic: ${input.slug && headerValue(input.slug) ? headerValue(input.slug) : "(none)"}`)
  const text = layout === "v2" ? bodyOr(input.rolloutSummary, "(no summary was recorded for this session)") : body(input.rolloutSummary)
  return [...head, "", text].join("\n")
}

/** The lines above the first section: title, blank, the order and length line, blank. */
const RAW_MEMORIES_HEAD_LINES = 4

export function renderRawMemories(inputs: readonly WorkspaceInput[]): string {
  if (inputs.length === 0) return "# Raw Memories\n\nNo raw memories yet.\n"
  const stems = rolloutSummaryStems(inputs)
  const entries = sortByCodePoints(inputs.map((input, index) => ({ input, stem: stems[index]! })), (entry) => entry.input.sessionId)
  const sections = entries.map(({ input, stem }) =>
    [
      `## Session \`${headerValue(input.sessionId)}\``,
      "",
      `updated_at: ${isoTime(input.sourceUpdatedAt)}`,
      `cwd: ${input.cwd ? headerValue(input.cwd) : "(unknown)"}`,
      ...projectLines(input),
      `rollout_summary_file: ${stem}.md`,
      "",
      body(input.rawMemory),
    ].join("\n"),
  )
  const text = sections.join("\n")
  // The file's own length, so a consolidator whose read stops early knows there is more to page through.
  const lines = text.split("\n").length - 1 + RAW_MEMORIES_HEAD_LINES
  const count = `${inputs.length} session${inputs.length === 1 ? "" : "s"}, ${lines} lines in all`
  return ["# Raw Memories", "", `Sessions are listed in ascending session id order: ${count}. Read to the last line.`, "", text].join("\n")
}

/**
 * Ours, not Codex's: the project the folder belongs to, the consolidator's grouping key (one
 * repository's checkouts, worktrees and subfolders share it). Only when the record has one, so
 * records made outside any project, or before projects were recorded, keep their bytes.
 */
function projectLines(input: WorkspaceInput): string[] {
  const name = input.projectName ? headerValue(input.projectName) : ""
  const key = input.projectKey ? headerValue(input.projectKey) : ""
  return name && key ? [`project: ${name}`, `project_key: ${key}`] : []
}

/** Four base-62 digits from the first 32 bits of the id's SHA-256 (OpenCode ids are not UUIDs). */
function sessionHash(sessionId: string): string {
  let value = createHash("sha256").update(sessionId).digest().readUInt32BE(0) % HASH_SPACE
  let out = ""
  for (let i = 0; i < 4; i++) {
    out = BASE62[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out
}

/**
 * Each character of the slug, up to 60, becomes itself lowercased when it is an ASCII letter or
 * digit and `_` otherwise; trailing `_` are then trimmed. Per character, not per UTF-16 unit, and
 * lowercased only within ASCII, so an emoji is one `_` and a Kelvin sign never becomes `k`.
 */
function stemSlug(slug: string | null): string {
  if (!slug) return ""
  let out = ""
  for (const char of slug) {
    if (out.length >= SLUG_MAX) break
    out += /^[A-Za-z0-9]$/.test(char) ? char.toLowerCase() : "_"
  }
  return out.replace(/_+$/, "")
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString()
}

/** One line, whatever the value holds, so a header can never grow a second line. */
function headerValue(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
}

/** The text with exactly one trailing newline; an empty text says so rather than leaving a gap. */
function body(text: string): string {
  return bodyOr(text, "(empty)")
}

function bodyOr(text: string, empty: string): string {
  const trimmed = text.replace(/\s+$/, "")
  return trimmed ? `${trimmed}\n` : `${empty}\n`
}
