// memory_search's ranked mode: the best documents first, by BM25 over the memory folder's Markdown
// blocks and the records no consolidation has taken in yet (store/search-index.ts), never text
// that is no longer in its file.
//
// Freshness is checked against the folder on every search, by file identity (inode, size, times,
// search-identity.ts), at a cost that stays small on a folder of thousands of files, in any
// process, the first search of a new one (a CLI call) included:
//   - a full check lists every folder and lstats every file; what it saw is kept in the index (the
//     sweep stamp: each folder's identity, and a digest of the rollout summaries' identities);
//   - every other search lstats the folders the stamp names: if one changed (a file was added,
//     removed or renamed, as the plugin writes every rollout summary), the check is a full one;
//   - every file that is not a rollout summary (MEMORY.md, the summary, skills, notes: what the
//     consolidator, the user and other agents edit in place) is lstat'ed every search;
//   - the rollout summaries, which the plugin alone writes and always by rename, are lstat'ed when
//     the last full check is FULL_SWEEP_MS old, whichever process made it (unchanged against the
//     digest, the stamp is renewed; else a full check runs), which bounds how long someone's
//     in-place edit of one goes unseen;
//   - every file a result comes from is lstat'ed before the result is shown: if it changed, it is
//     read again and the search runs again, so a result is always what the file says now;
//   - the records are compared with the version database's fingerprint of them every search.
// A file whose identity changed is read, split (ranked-docs.ts), redacted and replaced in the
// index in one transaction. An index that cannot be opened or read is deleted and rebuilt.
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { redactText } from "../redact/redact.js"
import type { SqlDatabase } from "../store/sqlite.js"
import { removeDatabase, SearchIndexStore, type FileIdentityRow, type IndexedChunk, type RankedRow } from "../store/search-index.js"
import { corruptionReason } from "../store/recovery.js"
import { MemoryError } from "./errors.js"
import { headerProject, projectFilter } from "./project-filter.js"
import { splitDocuments, type RankedDoc } from "./ranked-docs.js"
import { planRanked } from "./ranked-query.js"
import type { SearchMatch, SearchRequest, SearchResult } from "./requests.js"
import { encodeRankedCursor, decodeRankedCursor, fingerprintOf } from "./search-cursor.js"
import { identityOf, SETTLE_MS } from "./search-identity.js"
import { FolderCache, type Candidate, type ListedFolder } from "./search-walk.js"
import { resolveMemoryEntry, readFileNoFollow, splitRelative } from "./safe-path.js"
import { nameTimestamp, parseTimeRange } from "./timestamps.js"

/** A record no consolidation has taken in yet, as the version's database holds it (redacted). */
export interface RankedRecord {
  sessionId: string
  rawMemory: string
  rolloutSummary: string
  slug: string | null
  updatedAt: number
  projectKey: string | null
  projectName: string | null
}

export interface RankedIndexOptions {
  root: string
  /** The folder to index at each search, when it is not always `root` (LocalMemoryBackend's view). */
  view?: () => string
  /** The index file; ":memory:" keeps it in the process (tests, and a home whose file cannot be opened). */
  file: string
  /** The records not consolidated yet, with a fingerprint that changes whenever they do. */
  records?: () => { fingerprint: string; rows: () => readonly RankedRecord[] } | undefined
  /** Told when the index had to be deleted and built again, and why. */
  onRebuild?: (reason: string) => void
  connect?: (file: string) => SqlDatabase
  now?: () => number
  settleMs?: number
}

/** Results a ranked search returns unless asked for fewer (or more, up to the search maximum). */
export const RANKED_DEFAULT_RESULTS = 10
/**
 * The longest a rollout summary edited in place (not by the plugin, which writes them by rename)
 * can go unranked by a search of another process. Ten minutes, not seconds: each new process (a
 * CLI call) that finds the stamp older lstats every summary, about 100 ms on 4,096 of them, and a
 * person types commands minutes apart; what a result shows is checked before it is shown anyway.
 */
export const FULL_SWEEP_MS = 10 * 60_000
const ROLLOUT_SUMMARIES = "rollout_summaries/"
/** Regenerated for each consolidation and read by it alone: nothing a search should find. */
const NOT_INDEXED = new Set(["phase2_workspace_diff.md"])
/** A file larger than this is not indexed (memory_search does not search it either). */
const MAX_FILE_BYTES = 32 * 1024 * 1024
/** Searches run again at most this often when the files of their results keep changing. */
const MAX_ROUNDS = 3

export class RankedIndex {
  private store: SearchIndexStore | undefined
  private readonly folders: FolderCache
  /** The plugin changed the folder: the next search makes a full check whatever the stamp says. */
  private fullCheckDue = false
  private readonly now: () => number
  private readonly settleMs: number

  constructor(private readonly options: RankedIndexOptions) {
    this.now = options.now ?? (() => Date.now())
    this.settleMs = options.settleMs ?? SETTLE_MS
    this.folders = new FolderCache({ now: this.now, settleMs: this.settleMs })
  }

  search(request: SearchRequest, maxResults: number): SearchResult {
    const plan = planRanked(checkQueries(request.queries))
    if (!plan.match) throw new MemoryError("empty_query", "queries hold no word to rank by; pass the words you are looking for, such as [\"deploy staging\"].")
    for (const flag of ["case_sensitive", "normalized", "line_count", "context_lines"] as const) {
      if (request[flag] !== undefined && request[flag] !== null) throw new MemoryError("invalid_argument", `${flag} does not apply to match_mode "ranked"; leave it out, or use a substring mode.`)
    }
    const scope = request.path ? splitRelative(request.path).join("/") : ""
    if (scope) resolveMemoryEntry(this.root(), scope)
    const range = parseTimeRange(request.since, request.until)
    const project = projectFilter(request.project)
    const fingerprint = fingerprintOf(["ranked", plan.terms, scope, range?.from ?? null, range?.to ?? null, project ?? null])
    const offset = request.cursor === undefined || request.cursor === null ? 0 : decodeRankedCursor(request.cursor, fingerprint)
    const filter = {
      scope,
      project,
      from: range && Number.isFinite(range.from) ? range.from : undefined,
      to: range && Number.isFinite(range.to) ? range.to : undefined,
      records: scope === "",
    }
    return this.withStore((store) => {
      // The files read during this search: their text in the index is what they hold now.
      const read = new Set<string>()
      const scanned = this.refresh(store, false, read)
      let rows: RankedRow[] = []
      for (let round = 0; ; round++) {
        rows = store.query(plan.match!, filter, maxResults + 1, offset)
        // A result is shown only as its file is now: a file that changed since it was indexed is
        // read again and the search repeated; one that still changed after that is left out.
        const stale = this.staleSources(store, rows, read)
        if (stale.length === 0) break
        if (round === MAX_ROUNDS - 1) {
          rows = rows.filter((row) => !stale.includes(row.source))
          break
        }
        for (const source of stale) this.refreshFile(store, { relative: source, absolute: this.absolute(source) }, store.file(source), read)
      }
      const page = rows.slice(0, maxResults)
      const result: SearchResult = { matches: page.map((row) => present(row, plan.terms)), files_scanned: scanned, terms: plan.terms }
      if (rows.length > maxResults) result.next_cursor = encodeRankedCursor(fingerprint, offset + maxResults)
      return result
    })
  }

  /** Brings the whole index up to date now (after the plugin itself rewrote the folder); returns the files indexed. */
  refreshNow(): number {
    return this.withStore((store) => this.refresh(store, true, new Set()))
  }

  /** Brings only the records up to date now (a session was forgotten). */
  refreshRecordsNow(): void {
    this.withStore((store) => this.refreshRecords(store))
  }

  /** Files and documents the index holds. */
  counts(): { files: number; chunks: number } {
    return this.withStore((store) => store.counts())
  }

  /** The plugin changed the folder: the next search checks every file. */
  invalidate(): void {
    this.fullCheckDue = true
    this.folders.clear()
  }

  close(): void {
    this.store?.close()
    this.store = undefined
  }

  /** Runs `fn` on the open index; an index that cannot be opened or read is deleted, built again, and `fn` run once more. */
  private withStore<T>(fn: (store: SearchIndexStore) => T): T {
    try {
      return fn(this.open())
    } catch (error) {
      const reason = untrusted(error)
      if (reason === undefined) throw error
      this.close()
      if (this.options.file !== ":memory:") removeDatabase(this.options.file)
      this.invalidate()
      this.options.onRebuild?.(`the search index could not be read (${reason}); it was deleted and is built again`)
      return fn(this.open())
    }
  }

  private open(): SearchIndexStore {
    this.store ??= SearchIndexStore.open(this.options.file, this.options.connect ? { connect: this.options.connect } : {})
    return this.store
  }

  /** Checks the folder (see the header) and the records; reindexes what changed. Returns the files looked at. */
  private refresh(store: SearchIndexStore, full: boolean, read: Set<string>): number {
    const looked = full || this.fullCheckDue ? undefined : this.refreshStamped(store, read)
    const result = looked ?? this.refreshAll(store, read)
    this.refreshRecords(store)
    return result
  }

  /**
   * The check a stamp allows: its folders, the files others edit in place, and the rollout
   * summaries once the stamp is FULL_SWEEP_MS old. Undefined when it does not hold: a full check is due.
   */
  private refreshStamped(store: SearchIndexStore, read: Set<string>): number | undefined {
    const stamp = parseStamp(store.sweepStamp())
    if (!stamp) return undefined
    // The root once: view() looks for a consolidation's copy on disk at every call.
    const root = this.root()
    const absolute = (relative: string) => absoluteIn(root, relative)
    for (const [relative, identity] of stamp.folders) {
      const stat = lstatOrUndefined(absolute(relative))
      if (!stat?.isDirectory() || identityKey(stat) !== identity) return undefined
    }
    // Every folder is as the stamp's check listed it, so the files are those it indexed.
    let looked = 0
    for (const [relative, known] of store.filesOutside(ROLLOUT_SUMMARIES)) {
      looked++
      this.refreshFile(store, { relative, absolute: absolute(relative) }, known, read)
    }
    const now = this.now()
    if (now >= stamp.at && now - stamp.at < FULL_SWEEP_MS) return looked
    const paths = store.pathsUnder(ROLLOUT_SUMMARIES)
    if (digestOf(paths, (relative) => lstatOrUndefined(absolute(relative))) !== stamp.digest) return undefined
    store.setSweepStamp(JSON.stringify({ ...stamp, at: now }))
    return looked + paths.length
  }

  /** Lists every folder, checks every file, drops what is gone, and stamps what it saw. */
  private refreshAll(store: SearchIndexStore, read: Set<string>): number {
    const root = this.root()
    const startedAt = this.now()
    const rootStat = fs.lstatSync(root, { throwIfNoEntry: false })
    const indexed = store.files()
    let files: readonly Candidate[] = []
    let folders: readonly ListedFolder[] = []
    if (rootStat?.isDirectory()) {
      files = this.folders.walk({ relative: "", absolute: root }, rootStat).files
      folders = this.folders.listed("")
    }
    // Each file the walk names (in byte order), with the identity the index holds for it after the check.
    const seen = new Map<string, FileIdentityRow | undefined>()
    for (const file of files) {
      if (!isIndexed(file.relative)) continue
      seen.set(file.relative, this.refreshFile(store, file, indexed.get(file.relative), read))
    }
    // A walk of the whole folder names every file there is: what it does not name is gone.
    for (const path of indexed.keys()) if (!seen.has(path)) store.replaceFile(path, undefined, [])
    this.fullCheckDue = false
    store.setSweepStamp(stampOf(startedAt, folders, seen))
    return seen.size
  }

  /**
   * Reads the file again unless its identity is the one indexed (and was trusted then); `read`
   * collects what was read. Returns the identity the index now holds for it, if any.
   */
  private refreshFile(store: SearchIndexStore, file: Candidate, known: FileIdentityRow | undefined, readNow: Set<string>): FileIdentityRow | undefined {
    const stat = fs.lstatSync(file.absolute, { throwIfNoEntry: false })
    if (!stat?.isFile()) {
      if (known) store.replaceFile(file.relative, undefined, [])
      readNow.add(file.relative)
      return undefined
    }
    if (known && sameFile(known, stat)) return known
    readNow.add(file.relative)
    const readAt = this.now()
    let text = ""
    let read = stat
    if (stat.size <= MAX_FILE_BYTES) {
      try {
        const opened = readFileNoFollow(file.absolute, file.relative, stat)
        read = opened.stat
        text = opened.bytes.includes(0) ? "" : opened.bytes.toString("utf8")
      } catch {
        // Gone or swapped while it was read: the next search looks again.
        return known
      }
    }
    const identity = identityOf(read, readAt, this.settleMs)
    return store.replaceFile(file.relative, { ino: identity.ino, dev: identity.dev, size: identity.size, mtimeMs: identity.mtimeMs, ctimeMs: identity.ctimeMs, settled: identity.settled }, fileChunks(file.relative, text, store.hashesOf(file.relative)))
  }

  private refreshRecords(store: SearchIndexStore): void {
    const records = this.options.records?.()
    const fingerprint = records?.fingerprint ?? ""
    if (store.recordsFingerprint() === fingerprint) return
    const rows = records?.rows() ?? []
    store.replaceRecords(fingerprint, rows.map((record) => ({ sessionId: record.sessionId, chunks: recordChunks(record) })))
  }

  /** The files of `rows` not read during this search whose identity is not the one indexed. */
  private staleSources(store: SearchIndexStore, rows: readonly RankedRow[], read: ReadonlySet<string>): string[] {
    const sources = [...new Set(rows.filter((row) => row.field === null && !read.has(row.source)).map((row) => row.source))]
    return sources.filter((source) => {
      const known = store.file(source)
      const stat = fs.lstatSync(this.absolute(source), { throwIfNoEntry: false })
      return !known || !stat?.isFile() || !sameFile(known, stat)
    })
  }

  private absolute(relative: string): string {
    return absoluteIn(this.root(), relative)
  }

  private root(): string {
    return this.options.view?.() ?? this.options.root
  }
}

/**
 * Why an index that failed this way cannot be trusted, or undefined when the failure is the
 * moment's (busy, full, unreadable disk) and a rebuild would not help: a damaged file, or a schema
 * this code does not know (written by another version of the plugin).
 */
function untrusted(error: unknown): string | undefined {
  const corrupt = corruptionReason(error)
  if (corrupt !== undefined) return corrupt
  const code = String((error as { code?: unknown })?.code ?? "")
  const message = String((error as Error)?.message ?? "")
  if (code === "SQLITE_ERROR" || /schema version \d+, newer than/.test(message)) return message || code
  return undefined
}

/** What a full check saw (see the header); kept in the index as JSON. */
interface SweepStamp {
  /** When the check began. */
  at: number
  /** Every folder it listed: relative path, then identityKey() before it was read. */
  folders: Array<[string, string]>
  /** digestOf() the rollout summaries, as indexed. */
  digest: string
}

/**
 * The stamp of a full check, or undefined when one could not vouch for the folder: no folder, one
 * listed within the settle time, or a file left unindexed (unreadable) or a rollout summary not
 * trusted as indexed (read within the settle time); those are checked again by every search until
 * they settle. `seen` is in byte order, as SearchIndexStore.pathsUnder() gives the paths.
 */
function stampOf(at: number, folders: readonly ListedFolder[], seen: ReadonlyMap<string, FileIdentityRow | undefined>): string | undefined {
  if (folders.length === 0 || folders.some((folder) => !folder.identity.settled)) return undefined
  const summaries: string[] = []
  for (const [relative, known] of seen) {
    if (!known) return undefined
    if (!relative.startsWith(ROLLOUT_SUMMARIES)) continue
    if (!known.settled) return undefined
    summaries.push(relative)
  }
  const stamp: SweepStamp = { at, folders: folders.map((folder) => [folder.relative, identityKey(folder.identity)]), digest: digestOf(summaries, (relative) => seen.get(relative)) }
  return JSON.stringify(stamp)
}

function parseStamp(value: string | undefined): SweepStamp | undefined {
  if (value === undefined) return undefined
  try {
    const stamp = JSON.parse(value) as SweepStamp
    return typeof stamp.at === "number" && Array.isArray(stamp.folders) && typeof stamp.digest === "string" ? stamp : undefined
  } catch {
    return undefined
  }
}

function identityKey(identity: { ino: number; dev: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${identity.ino}:${identity.dev}:${identity.size}:${identity.mtimeMs}:${identity.ctimeMs}`
}

/** One digest of the files' identities, in the order given; a file without one counts as such. */
function digestOf(paths: readonly string[], identity: (relative: string) => { ino: number; dev: number; size: number; mtimeMs: number; ctimeMs: number } | undefined): string {
  // One update of the whole text: an update per file costs more than the hashing.
  let text = ""
  for (const relative of paths) {
    const known = identity(relative)
    text += `${relative}\u0000${known ? identityKey(known) : "-"}\n`
  }
  return createHash("sha1").update(text).digest("base64url")
}

function absoluteIn(root: string, relative: string): string {
  if (relative === "") return root
  // Plain concatenation where the separator allows: path.join per file costs more than its lstat.
  return path.sep === "/" ? `${root}/${relative}` : path.join(root, ...relative.split("/"))
}

function lstatOrUndefined(absolute: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(absolute, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

function isIndexed(relative: string): boolean {
  return relative.toLowerCase().endsWith(".md") && !NOT_INDEXED.has(relative)
}

function sameFile(known: FileIdentityRow, stat: fs.Stats): boolean {
  return known.settled && known.ino === stat.ino && known.dev === stat.dev && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs
}

/**
 * A file's documents, redacted; a rollout summary's carry the project its header names. `known`
 * counts the hashes the index already holds for this file: those blocks keep their stored words,
 * so only new blocks are redacted (the rest only need their lines).
 */
export function fileChunks(relative: string, text: string, known: ReadonlyMap<string, number> = new Map()): IndexedChunk[] {
  const project = relative.startsWith(ROLLOUT_SUMMARIES) ? headerProject(text) : {}
  const stamp = nameTimestamp(relative.slice(relative.lastIndexOf("/") + 1))
  return redactedChunks(relative, text, known).map((chunk) => ({ ...chunk, projectKey: project.key, projectName: project.name, stamp }))
}

/** A record's documents: each of its two texts split like a file. */
function recordChunks(record: RankedRecord): IndexedChunk[] {
  return (["raw_memory", "rollout_summary"] as const).flatMap((field) =>
    redactedChunks(field, field === "raw_memory" ? record.rawMemory : record.rolloutSummary, new Map()).map((chunk) => ({
      ...chunk,
      field,
      projectKey: record.projectKey ?? undefined,
      projectName: record.projectName ?? undefined,
      stamp: record.updatedAt,
    })),
  )
}

type BaseChunk = Pick<IndexedChunk, "startLine" | "endLine" | "hash" | "kept" | "context" | "body">

/**
 * The documents of a text, hashed as written and redacted before anything of them is stored.
 * Blocks whose hash the index holds (as often as it holds it) are not redacted again: their
 * stored words are kept. When most blocks are new, the whole text is redacted in one pass (far
 * cheaper than one per block) and split after, if that keeps every block's lines (a redaction that
 * turned a key block of several lines into one marker would not); otherwise block by block.
 */
function redactedChunks(relative: string, text: string, known: ReadonlyMap<string, number>): BaseChunk[] {
  const docs = splitDocuments(relative, text)
  const hashes = docs.map(hashOf)
  const left = new Map(known)
  const fresh = hashes.map((hash) => {
    const count = left.get(hash) ?? 0
    if (count > 0) left.set(hash, count - 1)
    return count === 0
  })
  const freshCount = fresh.filter(Boolean).length
  let whole: RankedDoc[] | undefined
  if (freshCount > docs.length / 2) {
    const redacted = splitDocuments(relative, redactText(text))
    if (redacted.length === docs.length && redacted.every((doc, i) => doc.startLine === docs[i]!.startLine && doc.endLine === docs[i]!.endLine)) whole = redacted
  }
  return docs.map((doc, i) => {
    const hash = hashes[i]!
    // A kept block's words are not written again, so its text here is never stored.
    if (!fresh[i]) return { startLine: doc.startLine, endLine: doc.endLine, hash, kept: true, context: "", body: "" }
    const clean = whole?.[i] ?? { context: redactText(doc.context), body: redactText(doc.body) }
    return { startLine: doc.startLine, endLine: doc.endLine, hash, context: clean.context, body: clean.body }
  })
}

function hashOf(doc: RankedDoc): string {
  return createHash("sha1").update(doc.context).update("\u0000").update(doc.body).digest("base64url")
}

function present(row: RankedRow, terms: readonly string[]): SearchMatch {
  const lower = row.body.toLowerCase()
  const match: SearchMatch = {
    // The text is stored redacted; the name is redacted as every tool shows it (search.ts).
    path: row.field === null ? redactText(row.source) : row.source,
    line: Number(row.start_line),
    end_line: Number(row.end_line),
    text: row.body,
    matched_queries: terms.filter((term) => lower.includes(term)),
    context_before: [],
    context_after: [],
    score: Math.round(-Number(row.score) * 1000) / 1000,
  }
  if (row.field !== null) match.record = { session_id: row.source.slice("record:".length), field: row.field as "raw_memory" | "rollout_summary" }
  return match
}

function checkQueries(raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.some((query) => typeof query !== "string")) throw new MemoryError("invalid_argument", "queries must be a list of strings, such as [\"how do we deploy to staging\"].")
  return raw as string[]
}
