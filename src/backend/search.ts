// memory_search: substring search over every regular file under a scope, in a stable order (path
// in byte order, then line), paged by keyset cursors (search-cursor.ts). Match modes are defined
// in search-match.ts.
//
// Where a warm query's time goes (scripts/bench/search.ts: 4,097 files, 20 MB): one lstat per
// file is about 10 ms of a ~20 ms query, and is kept on purpose. Rewriting a file in place changes
// neither its folder's mtime nor anything else cheaper to check, so without it an external edit
// could go unseen, and results must never come from stale text. Everything else is made small:
// folder listings are reused while the folder is unchanged (search-walk.ts), contents and their
// lowercased forms are cached (search-cache.ts), a file whose character triples rule out every
// query is skipped without a scan (search-filter.ts), and a scan is one indexOf pass per query
// over the whole file. Files filtered out by name (since/until) or already paged past are not
// stat'ed, and the scan stops once the page is full and one more match proves a next page.
//
// Secrets (D11, D27): lines match, and are shown, as the redactor leaves them. Matching the text as
// written and redacting only what is shown would still answer whether a secret is there: a query
// of its first characters, one more each time, would spell it out. So a file whose text as written
// matches is redacted (redactLines: every line keeps its number, so lines and cursors mean what
// they did, and memory_read shows the same lines) and its matches are those of the redacted text.
// A file whose text as written holds no match is not redacted at all, which keeps a cold search
// cheap (redacting 20 MB takes most of a second); the one thing that costs is that a query for a
// marker's own words ("REDACTED", "github-token") finds only files with some match as written.
// Paths are shown redacted too (a secret in a file's name); such a file is then not found by
// memory_read under the name shown.
import fs from "node:fs"
import { redactText } from "../redact/redact.js"
import { MemoryError } from "./errors.js"
import type { MatchMode, SearchMatch, SearchRequest, SearchResult } from "./requests.js"
import { compareCodePoints, resolveMemoryEntry, splitRelative } from "./safe-path.js"
import { wholeNumber } from "./search-args.js"
import { transformText, type CachedFile, type FileCache, type Variant, type VariantKind } from "./search-cache.js"
import { decodeSearchCursor, encodeCursor, fingerprintOf, type SearchCursor } from "./search-cursor.js"
import { mayContain, tripleFilter, tripleHashes } from "./search-filter.js"
import { lineText } from "./search-lines.js"
import { findSpans, type LineSpan, type Needle } from "./search-match.js"
import type { Candidate, FolderCache } from "./search-walk.js"
import { inRange, nameTimestamp, parseTimeRange, type TimeRange } from "./timestamps.js"
import { headerProject, projectFilter, projectMatches } from "./project-filter.js"

/** The folder of per-session rollout summaries, the files whose header may name a project. */
const ROLLOUT_SUMMARIES = "rollout_summaries"

export const SEARCH_MAX_RESULTS = 200
export const SEARCH_MAX_CONTEXT_LINES = 10
export const SEARCH_MAX_LINE_COUNT = 100
/** Each query is one bit of a line's mask. */
export const SEARCH_MAX_QUERIES = 20
/** Longer lines are shown cut, in matches and context alike; memory_read shows them whole. */
export const SEARCH_MAX_LINE_CHARS = 1_000
const CUT_MARKER = " …"
const MATCH_MODES: readonly MatchMode[] = ["any", "all_on_same_line", "all_within_lines"]

/** A validated request: everything the scan needs, and nothing that depends on the disk. */
export interface SearchPlan {
  /** Non-blank queries, without duplicates, in request order; bit i of a mask is queries[i]. */
  queries: string[]
  needles: PlannedNeedle[]
  variant: VariantKind
  mode: MatchMode
  lineCount: number
  scope: string
  contextLines: number
  maxResults: number
  range: TimeRange | undefined
  /** Lowercased; set: only rollout summaries naming this project (project-filter.ts). */
  project: string | undefined
  /** Identifies the ordered match list, for cursors. */
  fingerprint: string
}

export function planSearch(request: SearchRequest): SearchPlan {
  const queries = checkQueries(request.queries)
  const mode = request.match_mode ?? "any"
  if (!MATCH_MODES.includes(mode)) {
    throw new MemoryError("invalid_argument", `match_mode must be one of ${[...MATCH_MODES, "ranked"].map((m) => `"${m}"`).join(", ")} (got ${JSON.stringify(mode)}).`)
  }
  if (mode === "all_within_lines" && (request.line_count === undefined || request.line_count === null)) {
    throw new MemoryError("invalid_argument", `match_mode "all_within_lines" needs line_count: how many consecutive lines (1 to ${SEARCH_MAX_LINE_COUNT}) must hold all the queries.`)
  }
  const lineCount = mode === "all_within_lines" ? lineCountOf(request.line_count) : 1
  const caseSensitive = flag(request.case_sensitive, "case_sensitive")
  const normalized = flag(request.normalized, "normalized")
  const variant: VariantKind = normalized ? (caseSensitive ? "letters" : "letters-lower") : caseSensitive ? "exact" : "lower"
  const needles = needlesOf(queries, variant)
  const scope = request.path ?? ""
  const normalizedScope = splitRelative(scope).join("/")
  const range = parseTimeRange(request.since, request.until)
  const project = projectFilter(request.project)
  return {
    queries,
    needles,
    variant,
    mode,
    lineCount,
    scope,
    contextLines: wholeNumber(request.context_lines, "context_lines", { min: 0, max: SEARCH_MAX_CONTEXT_LINES, fallback: 0 }),
    maxResults: wholeNumber(request.max_results, "max_results", { min: 1, max: SEARCH_MAX_RESULTS, fallback: SEARCH_MAX_RESULTS }),
    range,
    project,
    fingerprint: fingerprintOf([queries, variant, mode, lineCount, normalizedScope, range?.from ?? null, range?.to ?? null, ...(project ? [project] : [])]),
  }
}

export interface SearchCaches {
  files: FileCache
  folders: FolderCache
}

export function searchMemory(root: string, caches: SearchCaches, request: SearchRequest): SearchResult {
  const plan = planSearch(request)
  const cursor = request.cursor === undefined || request.cursor === null ? undefined : decodeSearchCursor(request.cursor, plan.fingerprint)
  const scope = resolveMemoryEntry(root, plan.scope)
  let files: readonly Candidate[]
  if (scope.stat.isDirectory()) {
    const walked = caches.folders.walk(scope, scope.stat)
    files = walked.files
    // A changed walk of the whole folder shows which cached files are gone.
    if (walked.fresh && scope.relative === "") caches.files.retain(new Set(files.map((file) => file.relative)))
  } else if (scope.stat.isFile()) {
    files = [{ relative: scope.relative, absolute: scope.absolute }]
  } else {
    throw new MemoryError("invalid_argument", `"${scope.relative}" is neither a file nor a folder; pass a file or folder path, or omit path to search everything.`)
  }
  if (plan.range) files = files.filter((file) => inTimeRange(file.relative, plan.range!))
  // Only rollout summaries name a project (in their header), so only they can match a project filter.
  if (plan.project) files = files.filter((file) => file.relative.startsWith(`${ROLLOUT_SUMMARIES}/`))

  const found: Found[] = []
  let scanned = 0
  for (let i = cursor ? firstAtOrAfter(files, cursor.path) : 0; i < files.length && found.length <= plan.maxResults; i++) {
    const file = files[i]!
    const loaded = loadFile(caches.files, file)
    const variant = loaded && caches.files.variant(loaded, plan.variant)
    if (!loaded?.original || !variant) continue
    if (plan.project && !projectMatches(plan.project, headerProject(loaded.original.text))) continue
    scanned++
    const needles = loaded.kept ? possibleNeedles(variant, plan) : plan.needles
    if (!needles) continue
    const spans = findSpans(variant.text, variant.starts, needles, plan.mode, plan.lineCount)
    if (spans.length === 0) continue
    // The matches are those of the redacted text (see the header), and only a file whose text as
    // written matches is redacted: nearly always that is the same text, and the same spans.
    const clean = caches.files.clean(loaded)!
    const cleanVariant = clean === loaded ? variant : caches.files.variant(clean, plan.variant)!
    for (const span of clean === loaded ? spans : findSpans(cleanVariant.text, cleanVariant.starts, plan.needles, plan.mode, plan.lineCount)) {
      if (cursor && isPagedPast(file.relative, span.first + 1, cursor)) continue
      found.push({ relative: file.relative, file: clean, span })
    }
  }

  const page = found.slice(0, plan.maxResults)
  const cut = { lines: 0 }
  const matches = page.map((item) => present(item, plan, cut))
  const last = page[page.length - 1]
  const result: SearchResult = { matches, files_scanned: scanned }
  if (found.length > plan.maxResults && last) {
    result.next_cursor = encodeCursor({ kind: "search", fingerprint: plan.fingerprint, path: last.relative, line: last.span.first + 1 })
  }
  if (cut.lines > 0) result.truncated_lines = cut.lines
  return result
}

interface PlannedNeedle extends Needle {
  /** Hashes of the character triples a file must hold to contain the needle. */
  triples: number[]
}

interface Found {
  relative: string
  file: CachedFile
  span: LineSpan
}

/**
 * The needles the file's triple set does not rule out, or undefined when it cannot match at all.
 * Only for cached files: for a file read once, building the set would cost more than a scan.
 */
function possibleNeedles(variant: Variant, plan: SearchPlan): readonly Needle[] | undefined {
  const triples = (variant.triples ??= tripleFilter(variant.text))
  let possible: PlannedNeedle[] | undefined
  for (let i = 0; i < plan.needles.length; i++) {
    const needle = plan.needles[i]!
    if (mayContain(triples, needle.triples)) {
      possible?.push(needle)
      continue
    }
    if (plan.mode !== "any") return undefined
    // The first ruled-out needle: from here on, collect the ones still possible.
    possible ??= plan.needles.slice(0, i)
  }
  return possible === undefined ? plan.needles : possible.length > 0 ? possible : undefined
}

/** The cached file if it is still a regular file; undefined if it vanished or cannot be read. */
function loadFile(cache: FileCache, file: Candidate): CachedFile | undefined {
  let stat: fs.Stats | undefined
  try {
    stat = fs.lstatSync(file.absolute, { throwIfNoEntry: false })
    if (stat?.isFile()) return cache.load(file.relative, file.absolute, stat)
  } catch {
    // One unreadable file must not fail the whole search; it is simply not searched.
  }
  cache.forget(file.relative)
  return undefined
}

function present(item: Found, plan: SearchPlan, cut: { lines: number }): SearchMatch {
  const { text, starts } = item.file.original!
  const show = (line: number) => shorten(lineText(text, starts, line), cut)
  const { first, last } = item.span
  const before: string[] = []
  for (let line = Math.max(0, first - plan.contextLines); line < first; line++) before.push(show(line))
  const after: string[] = []
  for (let line = last + 1; line <= Math.min(starts.length - 1, last + plan.contextLines); line++) after.push(show(line))
  const shown: string[] = []
  for (let line = first; line <= last; line++) shown.push(show(line))
  return {
    path: redactText(item.relative),
    line: first + 1,
    end_line: last + 1,
    text: shown.join("\n"),
    matched_queries: plan.queries.filter((_, index) => (item.span.mask & (1 << index)) !== 0),
    context_before: before,
    context_after: after,
  }
}

function shorten(line: string, cut: { lines: number }): string {
  if (line.length <= SEARCH_MAX_LINE_CHARS) return line
  cut.lines++
  // Do not end on the first half of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(line.charAt(SEARCH_MAX_LINE_CHARS - 1)) ? SEARCH_MAX_LINE_CHARS - 1 : SEARCH_MAX_LINE_CHARS
  return line.slice(0, end) + CUT_MARKER
}

function checkQueries(raw: unknown): string[] {
  if (!Array.isArray(raw)) throw new MemoryError("invalid_argument", "queries must be a list of strings, such as [\"deploy\", \"staging\"].")
  if (raw.some((query) => typeof query !== "string")) throw new MemoryError("invalid_argument", "Every entry of queries must be a string.")
  const queries = [...new Set((raw as string[]).filter((query) => query.trim() !== ""))]
  if (queries.length === 0) throw new MemoryError("empty_query", "queries is empty or blank; pass at least one word or phrase to look for.")
  if (queries.length > SEARCH_MAX_QUERIES) {
    throw new MemoryError("invalid_argument", `At most ${SEARCH_MAX_QUERIES} queries per search (got ${queries.length}); split the search or drop some terms.`)
  }
  const multiline = queries.find((query) => /[\r\n]/.test(query))
  if (multiline !== undefined) {
    throw new MemoryError("invalid_argument", `Queries match within one line, so ${JSON.stringify(multiline)} can never match; pass its lines as separate queries with match_mode "all_within_lines".`)
  }
  return queries
}

/** One needle per distinct compared text; two queries that compare equal share one. */
function needlesOf(queries: readonly string[], variant: VariantKind): PlannedNeedle[] {
  const masks = new Map<string, number>()
  queries.forEach((query, index) => {
    const text = transformText(query, variant)
    if (text !== "") masks.set(text, (masks.get(text) ?? 0) | (1 << index))
  })
  if (masks.size === 0) {
    throw new MemoryError("empty_query", "With normalized set, only letters and digits are compared, and no query has any; add a word, or search without normalized.")
  }
  return [...masks].map(([text, mask]) => ({ text, mask, triples: tripleHashes(text) }))
}

function lineCountOf(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > SEARCH_MAX_LINE_COUNT) {
    throw new MemoryError("invalid_argument", `line_count must be a whole number from 1 to ${SEARCH_MAX_LINE_COUNT} (got ${JSON.stringify(value)}).`)
  }
  return value
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined || value === null) return false
  if (typeof value !== "boolean") throw new MemoryError("invalid_argument", `${name} must be true or false (got ${JSON.stringify(value)}).`)
  return value
}

function inTimeRange(relative: string, range: TimeRange): boolean {
  const time = nameTimestamp(relative.slice(relative.lastIndexOf("/") + 1))
  return time !== undefined && inRange(range, time)
}

function firstAtOrAfter(files: readonly Candidate[], relative: string): number {
  let low = 0
  let high = files.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (compareCodePoints(files[mid]!.relative, relative) < 0) low = mid + 1
    else high = mid
  }
  return low
}

function isPagedPast(relative: string, line: number, cursor: SearchCursor): boolean {
  return relative === cursor.path && line <= cursor.line
}
