// Repeated entries in MEMORY.md (issue 39, "bounded memory"): the same learning written again under
// task after task is what made Codex's handbooks run to thousands of lines. Pure: counts exact
// duplicates (the same text once normalized) and near duplicates (bullet lines whose word sets
// overlap by a Jaccard index of at least 0.8), for memory_inspect and for the consolidation prompt,
// which gets the first groups to merge (duplicateInstructions).
//
// Entries are bullet lines (`-`, `*`, `+`, `1.`) of at least MIN_TOKENS words, outside the
// provenance and keyword lists (`### rollout_summary_files`, `### keywords`, ...), where the same
// file or word under two tasks is how the schema links them, not a repeat. Near pairs are found by
// prefix filtering: each entry's words ordered rarest first, only its first |A| - ceil(0.8 |A|) + 1
// indexed, so two entries are compared only when they share a rare word and their sizes allow the
// threshold, and at most MAX_COMPARISONS pairs are verified (`bounded` says when that stopped it).

import fs from "node:fs"
import path from "node:path"
import { countLines } from "./budget.js"
import { MEMORY_FILE } from "./workspace.js"

/** Jaccard index of two entries' word sets at or above which they are near duplicates. */
export const NEAR_THRESHOLD = 0.8
/** Shorter entries ("- none", "- make ship") repeat by nature. */
const MIN_TOKENS = 4
/** Pairs verified at most: a 1 MB handbook takes well under a second. */
const MAX_COMPARISONS = 2_000_000
/** Lists under these headings are provenance and search terms, repeated by design. */
const LIST_HEADINGS = /rollout_summary_files|extension_resource_files|keywords/i

export interface DuplicateGroup {
  kind: "exact" | "near"
  /** 1-based line numbers: every copy (exact), or each distinct entry's first line (near). */
  lines: number[]
  /** The first entry's text, as written. */
  text: string
}

export interface DuplicateReport {
  /** Bullet entries looked at. */
  entries: number
  /** Entries that repeat an earlier one exactly (the same words in the same order: normalizeEntry). */
  exact: number
  /** Distinct entries that nearly repeat another (each near group counts its size less one). */
  near: number
  /** Every group, by first line. */
  groups: DuplicateGroup[]
  /** The comparison cap was reached: `near` is a lower bound. */
  bounded: boolean
}

interface Entry {
  line: number
  text: string
  key: string
}

/** The entry's words in order, lowercased and joined by one space: case, spacing, punctuation and Markdown marks do not count. */
export function normalizeEntry(text: string): string {
  return (text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ")
}

function words(key: string): string[] {
  return [...new Set(key.split(" ").filter(Boolean))]
}

function entriesOf(text: string): Entry[] {
  const entries: Entry[] = []
  let skip = false
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, "")
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) {
      skip = LIST_HEADINGS.test(heading[1]!)
      continue
    }
    if (skip) continue
    const bullet = /^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$/.exec(line)
    if (!bullet) continue
    const key = normalizeEntry(bullet[1]!)
    if (words(key).length < MIN_TOKENS) continue
    entries.push({ line: i + 1, text: bullet[1]!, key })
  }
  return entries
}

/** Pure: the exact and near duplicate entries of a MEMORY.md. */
export function findDuplicates(text: string): DuplicateReport {
  const entries = entriesOf(text)
  // Exact: the same normalized text.
  const byKey = new Map<string, Entry[]>()
  for (const entry of entries) {
    const same = byKey.get(entry.key)
    if (same) same.push(entry)
    else byKey.set(entry.key, [entry])
  }
  const groups: DuplicateGroup[] = []
  let exact = 0
  for (const same of byKey.values()) {
    if (same.length < 2) continue
    exact += same.length - 1
    groups.push({ kind: "exact", lines: same.map((entry) => entry.line), text: same[0]!.text })
  }

  // Near: distinct texts, their word sets ordered rarest first.
  const distinct = [...byKey.values()].map((same) => ({ first: same[0]!, words: words(same[0]!.key) }))
  const frequency = new Map<string, number>()
  for (const item of distinct) for (const word of item.words) frequency.set(word, (frequency.get(word) ?? 0) + 1)
  const rare = (a: string, b: string) => frequency.get(a)! - frequency.get(b)! || (a < b ? -1 : a > b ? 1 : 0)
  for (const item of distinct) item.words.sort(rare)
  const order = distinct.map((_, i) => i).sort((a, b) => distinct[a]!.words.length - distinct[b]!.words.length || a - b)
  const sets = distinct.map((item) => new Set(item.words))
  const parent = distinct.map((_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!
    return i
  }
  const index = new Map<string, number[]>()
  let comparisons = 0
  let bounded = false
  outer: for (const a of order) {
    const mine = distinct[a]!.words
    const prefix = mine.length - Math.ceil(NEAR_THRESHOLD * mine.length) + 1
    const seen = new Set<number>()
    for (let p = 0; p < prefix; p++) {
      const word = mine[p]!
      for (const b of index.get(word) ?? []) {
        if (seen.has(b)) continue
        seen.add(b)
        // b is no larger than a (sizes ascending): the threshold needs |b| >= 0.8 |a|.
        if (sets[b]!.size < NEAR_THRESHOLD * mine.length) continue
        if (find(a) === find(b)) continue
        if (++comparisons > MAX_COMPARISONS) {
          bounded = true
          break outer
        }
        let shared = 0
        for (const w of sets[b]!) if (sets[a]!.has(w)) shared++
        if (shared / (mine.length + sets[b]!.size - shared) >= NEAR_THRESHOLD) parent[find(a)] = find(b)
      }
      const list = index.get(word)
      if (list) list.push(a)
      else index.set(word, [a])
    }
  }
  const components = new Map<number, number[]>()
  for (let i = 0; i < distinct.length; i++) {
    const root = find(i)
    const members = components.get(root)
    if (members) members.push(i)
    else components.set(root, [i])
  }
  let near = 0
  for (const members of components.values()) {
    if (members.length < 2) continue
    near += members.length - 1
    const firsts = members.map((i) => distinct[i]!.first).sort((x, y) => x.line - y.line)
    groups.push({ kind: "near", lines: firsts.map((entry) => entry.line), text: firsts[0]!.text })
  }
  groups.sort((x, y) => x.lines[0]! - y.lines[0]! || (x.kind === y.kind ? 0 : x.kind === "exact" ? -1 : 1))
  return { entries: entries.length, exact, near, groups, bounded }
}

/** Groups the consolidation prompt lists at most; the rest are counted. */
export const PROMPT_DUPLICATE_GROUPS = 20
/** Characters of an entry quoted in the prompt. */
const QUOTE_CHARS = 120

/** Pure: the prompt fragment listing MEMORY.md's duplicate groups to merge; "" when there are none. */
export function duplicateInstructions(report: DuplicateReport | undefined, max = PROMPT_DUPLICATE_GROUPS): string {
  if (!report?.groups.length) return ""
  const shown = report.groups.slice(0, max)
  const rest = report.groups.length - shown.length
  return [
    "## Repeated entries in MEMORY.md",
    "",
    `Before this run MEMORY.md holds ${plural(report.exact, "exact duplicate entry", "exact duplicate entries")} and ${plural(report.near, "near-duplicate entry", "near-duplicate entries")}${report.bounded ? " (at least)" : ""}. While you work, merge each group below into one entry where it belongs (a learning shared by several tasks goes to the block-level lists once, with every task's reference), unless the entries truly say different things:`,
    "",
    ...shown.map((group) => `- lines ${group.lines.slice(0, 8).join(", ")}${group.lines.length > 8 ? `, ... (${group.lines.length} in all)` : ""} (${group.kind}): ${JSON.stringify(quote(group.text))}`),
    ...(rest > 0 ? ["", `${plural(rest, "more group", "more groups")} not listed: look for repeats as you go.`] : []),
  ].join("\n")
}

/** Pure: memory_inspect's count, "3 exact and 7 near-duplicate entries in 1,204". */
export function describeDuplicates(report: DuplicateReport): string {
  return `${n(report.exact)} exact and ${n(report.near)}${report.bounded ? "+" : ""} near-duplicate entries among ${n(report.entries)}`
}

function quote(text: string): string {
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}...` : text
}

function plural(count: number, one: string, many: string): string {
  return `${n(count)} ${count === 1 ? one : many}`
}

function n(value: number): string {
  return value.toLocaleString("en-US")
}

/** Bytes of MEMORY.md looked at, at most: a runaway file is judged by its first 4 MB. */
const READ_LIMIT_BYTES = 4 * 1024 * 1024

/** MEMORY.md as memory_inspect shows it: its size and its repeated entries. */
export interface HandbookStats {
  bytes: number
  lines: number
  duplicates: DuplicateReport
}

/** findDuplicates over the folder's MEMORY.md; no report when it is missing, not a regular file or unreadable. Never throws. */
export function readHandbookDuplicates(root: string): DuplicateReport | undefined {
  return handbookStats(root)?.duplicates
}

/** The folder's MEMORY.md measured (lines within its first 4 MB); undefined when it is missing, not a regular file or unreadable. Never throws. */
export function handbookStats(root: string): HandbookStats | undefined {
  try {
    const file = path.join(root, MEMORY_FILE)
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (!stat?.isFile()) return undefined
    const fd = fs.openSync(file, "r")
    try {
      const buffer = Buffer.alloc(Math.min(stat.size, READ_LIMIT_BYTES))
      const read = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0))
      return { bytes: stat.size, lines: countLines(read), duplicates: findDuplicates(read.toString("utf8")) }
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return undefined
  }
}
