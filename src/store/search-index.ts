// The ranked search's index of one memory version: SQLite FTS5 (BM25) over the blocks of the
// memory folder's Markdown files and over the records no consolidation has taken in yet, in a
// database file of its own (memory_index.db, memory_v2_index.db) beside the plugin's others,
// never in the memory folder, which the consolidator and git see. Everything in it is derived:
// each file's blocks are keyed by the file's identity (inode, size, times) when it was read, so
// src/backend/ranked-search.ts can tell what is stale, and an index that cannot be trusted is
// deleted and built again. The text is stored redacted; the caller redacts before it writes.
import fs from "node:fs"
import { immediate, openDatabase } from "./database.js"
import type { Migration } from "./migrations.js"
import type { SqlDatabase, SqlStatement } from "./sqlite.js"

/** See paddingDocuments(). */
const PAD_DOCUMENTS = 64
const PAD_WORDS = 24
const PAD_WORD = "zzpaddingzz"

export const INDEX_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: "ranked search index",
    sql: `
      -- Each indexed file as it was when read: a file whose identity differs is read again.
      CREATE TABLE indexed_files (
        path     TEXT PRIMARY KEY,
        ino      INTEGER NOT NULL,
        dev      INTEGER NOT NULL,
        size     INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        ctime_ms REAL NOT NULL,
        -- 0: changed too recently to trust its times (search-identity.ts); read again every search.
        settled  INTEGER NOT NULL
      );
      -- One row per document: a block of a file, or of a record ('record:<session id>', field).
      CREATE TABLE chunks (
        id           INTEGER PRIMARY KEY,
        source       TEXT NOT NULL,
        field        TEXT,
        start_line   INTEGER NOT NULL,
        end_line     INTEGER NOT NULL,
        -- Of the context and body as stored: a block found unchanged in a file that changed
        -- keeps its row and words, and only its lines are updated.
        hash         TEXT NOT NULL,
        context      TEXT NOT NULL,
        body         TEXT NOT NULL,
        -- The project a rollout summary's header or a record names (the search's project filter).
        project_key  TEXT,
        project_name TEXT,
        -- The time in a time-stamped file's name, or a record's last activity (since/until).
        stamp        INTEGER
      );
      CREATE INDEX chunks_by_source ON chunks (source);
      -- The words only; the text is in chunks. Porter stemming, so "deploying" finds "deploys".
      CREATE VIRTUAL TABLE chunks_fts USING fts5(
        context, body,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TABLE index_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      -- Bumped by every change, so a process re-reads indexed_files only when someone changed it.
      INSERT INTO index_state (key, value) VALUES ('generation', '0');
      ${paddingDocuments()}
    `,
  },
  {
    version: 2,
    name: "documents split again",
    sql: `
      -- ranked-docs.ts cuts rollout summaries by section, with their opening as context: what was
      -- split by the rules before is dropped, so every file and record is split again.
      DELETE FROM chunks;
      DELETE FROM indexed_files;
      DELETE FROM index_state WHERE key <> 'generation';
      UPDATE index_state SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation';
      INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all');
      ${paddingDocuments()}
    `,
  },
])

/**
 * FTS5's BM25 gives a word in half the documents or more no weight at all (its idf is clamped at
 * a millionth), which in a young memory of a dozen blocks is every word. So the index starts with
 * documents of one word no query can hold, about as long as a memory block: with them, a word
 * rare among the real documents weighs more than a common one from the first day, and document
 * lengths compare as before. They have no row in chunks (negative rowids), so no search returns them.
 */
function paddingDocuments(): string {
  const body = Array.from({ length: PAD_WORDS }, () => PAD_WORD).join(" ")
  return Array.from({ length: PAD_DOCUMENTS }, (_, i) => `INSERT INTO chunks_fts (rowid, context, body) VALUES (${-(i + 1)}, '', '${body}');`).join("\n")
}


export interface FileIdentityRow {
  ino: number
  dev: number
  size: number
  mtimeMs: number
  ctimeMs: number
  settled: boolean
}

export interface IndexedChunk {
  field?: string | undefined
  startLine: number
  endLine: number
  /** Of context and body (the caller's digest): equal hashes mean equal words. */
  hash: string
  /** The caller found this hash in the index and left context and body empty: reuse the stored row. */
  kept?: boolean
  context: string
  body: string
  projectKey?: string | undefined
  projectName?: string | undefined
  stamp?: number | undefined
}

export interface ChunkFilter {
  /** Only documents of this file or of files under this folder; "" for all. */
  scope: string
  /** Lowercased project filter (backend/project-filter.ts rules). */
  project?: string | undefined
  from?: number | undefined
  to?: number | undefined
  /** Whether records belong in the answer (a search of the whole folder). */
  records: boolean
}

export interface RankedRow {
  id: number
  source: string
  field: string | null
  start_line: number
  end_line: number
  context: string
  body: string
  project_key: string | null
  project_name: string | null
  stamp: number | null
  score: number
}

/** Context (the nearest heading), body: a word in the heading above a block says a little more. */
export const COLUMN_WEIGHTS = [1.5, 1.0] as const

export class SearchIndexStore {
  private readonly statements = new Map<string, SqlStatement>()
  /** indexed_files as last read, with the generation it was read at. */
  private known: { generation: string; files: Map<string, FileIdentityRow> } | undefined

  private constructor(readonly db: SqlDatabase) {}

  /**
   * Opens (or creates) the index file. An index found damaged is deleted and started afresh: it
   * is all derived, so nothing is lost. `":memory:"` gives a private index that lives with the process.
   */
  static open(file: string, options: { connect?: (file: string) => SqlDatabase } = {}): SearchIndexStore {
    // The header and schema only (database.ts): damage met during a search has the index rebuilt.
    const opened = openDatabase(file, { migrations: INDEX_MIGRATIONS, check: "header", ...options })
    if (opened.recovered) removeDatabase(opened.recovered.movedTo)
    return new SearchIndexStore(opened.db)
  }

  close(): void {
    this.statements.clear()
    this.db.close()
  }

  /** Every indexed file with the identity it had when read (read again only after a change, by any process). */
  files(): ReadonlyMap<string, FileIdentityRow> {
    const generation = this.statement("SELECT value FROM index_state WHERE key = 'generation'").get<{ value: string }>()?.value ?? ""
    if (this.known?.generation === generation) return this.known.files
    const files = new Map(this.statement("SELECT * FROM indexed_files").all<IdentityRow>().map((row) => [row.path, identityOfRow(row)]))
    this.known = { generation, files }
    return files
  }

  /** One indexed file's identity, without reading every row as files() does (a new process's first search). */
  file(path: string): FileIdentityRow | undefined {
    const row = this.statement("SELECT * FROM indexed_files WHERE path = $path").get<IdentityRow>({ path })
    return row ? identityOfRow(row) : undefined
  }

  /** The indexed files outside the folder `prefix` ("name/"), with their identities. */
  filesOutside(prefix: string): Map<string, FileIdentityRow> {
    const rows = this.statement("SELECT * FROM indexed_files WHERE path < $low OR path >= $high").all<IdentityRow>(prefixRange(prefix))
    return new Map(rows.map((row) => [row.path, identityOfRow(row)]))
  }

  /** The paths of the indexed files in the folder `prefix` ("name/") and under it, in byte order. */
  pathsUnder(prefix: string): string[] {
    return this.statement("SELECT path FROM indexed_files WHERE path >= $low AND path < $high ORDER BY path").all<{ path: string }>(prefixRange(prefix)).map((row) => row.path)
  }

  /** What the last full check of the folder saw (backend/ranked-search.ts writes and reads it). */
  sweepStamp(): string | undefined {
    return this.statement("SELECT value FROM index_state WHERE key = 'sweep'").get<{ value: string }>()?.value
  }

  /** Undefined removes it: the next search makes a full check. */
  setSweepStamp(value: string | undefined): void {
    if (value === undefined) this.statement("DELETE FROM index_state WHERE key = 'sweep'").run()
    else this.statement("INSERT INTO index_state (key, value) VALUES ('sweep', $value) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run({ value })
  }

  private changed(): void {
    this.statement("UPDATE index_state SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'").run()
    this.known = undefined
  }

  /**
   * Replaces a file's documents and identity in one transaction (undefined identity: the file is
   * gone). A block whose hash is unchanged keeps its row and its words; only its lines move.
   * Returns the identity stored (settled only if every block is in), undefined for a file gone.
   */
  replaceFile(path: string, identity: FileIdentityRow | undefined, chunks: readonly IndexedChunk[]): FileIdentityRow | undefined {
    return immediate(this.db, () => {
      this.changed()
      if (!identity) {
        this.dropSource(path)
        this.statement("DELETE FROM indexed_files WHERE path = $path").run({ path })
        return undefined
      }
      const old = new Map<string, Array<{ id: number; start: number; end: number; projectKey: string | null; projectName: string | null; stamp: number | null }>>()
      for (const row of this.statement("SELECT id, hash, start_line, end_line, project_key, project_name, stamp FROM chunks WHERE source = $source ORDER BY id").all<ChunkPlace>({ source: path })) {
        const place = { id: Number(row.id), start: Number(row.start_line), end: Number(row.end_line), projectKey: row.project_key, projectName: row.project_name, stamp: row.stamp === null ? null : Number(row.stamp) }
        old.set(row.hash, [...(old.get(row.hash) ?? []), place])
      }
      const added: IndexedChunk[] = []
      // A block the caller took for kept whose row another process removed meanwhile: the file is
      // then not trusted as indexed, so the next search reads it again.
      let incomplete = false
      for (const chunk of chunks) {
        const kept = old.get(chunk.hash)?.shift()
        if (kept === undefined) {
          if (chunk.kept) incomplete = true
          else added.push(chunk)
          continue
        }
        const fields = lineFields(chunk)
        const same = kept.start === fields.start && kept.end === fields.end && kept.projectKey === fields.projectKey && kept.projectName === fields.projectName && kept.stamp === fields.stamp
        if (!same) this.statement("UPDATE chunks SET start_line = $start, end_line = $end, project_key = $projectKey, project_name = $projectName, stamp = $stamp WHERE id = $id").run({ id: kept.id, ...fields })
      }
      for (const places of old.values()) for (const place of places) this.dropChunk(place.id)
      this.insert(path, added)
      this.statement(
        `INSERT INTO indexed_files (path, ino, dev, size, mtime_ms, ctime_ms, settled) VALUES ($path, $ino, $dev, $size, $mtime, $ctime, $settled)
         ON CONFLICT (path) DO UPDATE SET ino = excluded.ino, dev = excluded.dev, size = excluded.size, mtime_ms = excluded.mtime_ms, ctime_ms = excluded.ctime_ms, settled = excluded.settled`,
      ).run({ path, ino: identity.ino, dev: identity.dev, size: identity.size, mtime: identity.mtimeMs, ctime: identity.ctimeMs, settled: identity.settled && !incomplete ? 1 : 0 })
      return { ...identity, settled: identity.settled && !incomplete }
    })
  }

  /** How many documents of a file have each hash: blocks a change left as they were need no new words. */
  hashesOf(path: string): Map<string, number> {
    const counts = new Map<string, number>()
    for (const { hash } of this.statement("SELECT hash FROM chunks WHERE source = $source").all<{ hash: string }>({ source: path })) counts.set(hash, (counts.get(hash) ?? 0) + 1)
    return counts
  }

  /** The fingerprint of the records last indexed, or undefined when none were. */
  recordsFingerprint(): string | undefined {
    return this.statement("SELECT value FROM index_state WHERE key = 'records'").get<{ value: string }>()?.value
  }

  /** Replaces every record's documents, and the fingerprint they were made from, in one transaction. */
  replaceRecords(fingerprint: string, records: ReadonlyArray<{ sessionId: string; chunks: readonly IndexedChunk[] }>): void {
    immediate(this.db, () => {
      this.changed()
      for (const { id } of this.statement("SELECT id FROM chunks WHERE source >= 'record:' AND source < 'record;'").all<{ id: number }>()) this.dropChunk(id)
      for (const record of records) this.insert(`record:${record.sessionId}`, record.chunks)
      this.statement("INSERT INTO index_state (key, value) VALUES ('records', $value) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run({ value: fingerprint })
    })
  }

  /**
   * The best `limit` documents after `offset` for an FTS5 expression, best first, with the filter
   * applied. FTS5 ranks first and alone (joining every match to its row before sorting cost more
   * than the ranking); the filter then reads only the rows ranked, and asks for more while the
   * filter left too few and the ranking had more to give.
   */
  query(match: string, filter: ChunkFilter, limit: number, offset: number): RankedRow[] {
    const [context, body] = COLUMN_WEIGHTS
    const ranked = this.statement(`SELECT rowid AS id, bm25(chunks_fts, ${context}, ${body}) AS score FROM chunks_fts WHERE chunks_fts MATCH $match ORDER BY score, rowid LIMIT $k`)
    const rowsOf = this.statement("SELECT * FROM chunks WHERE id IN (SELECT value FROM json_each($ids))")
    const wanted = offset + limit
    const filtered = filter.scope !== "" || !filter.records || filter.project !== undefined || filter.from !== undefined || filter.to !== undefined
    for (let k = filtered ? Math.max(64, wanted * 8) : wanted; ; k *= 8) {
      const top = ranked.all<{ id: number; score: number }>({ match, k })
      const rows = new Map(rowsOf.all<Omit<RankedRow, "score">>({ ids: JSON.stringify(top.map((row) => row.id)) }).map((row) => [Number(row.id), row]))
      const kept: RankedRow[] = []
      for (const { id, score } of top) {
        const row = rows.get(Number(id))
        if (row && keeps(row, filter)) kept.push({ ...row, score: Number(score) })
      }
      if (kept.length >= wanted || top.length < k) return kept.slice(offset, wanted)
    }
  }

  /** Files and documents held (the benchmark prints them). */
  counts(): { files: number; chunks: number } {
    const files = this.statement("SELECT COUNT(*) AS n FROM indexed_files").get<{ n: number }>()?.n ?? 0
    const chunks = this.statement("SELECT COUNT(*) AS n FROM chunks").get<{ n: number }>()?.n ?? 0
    return { files: Number(files), chunks: Number(chunks) }
  }

  private insert(source: string, chunks: readonly IndexedChunk[]): void {
    const row = this.statement(
      `INSERT INTO chunks (source, field, start_line, end_line, hash, context, body, project_key, project_name, stamp)
       VALUES ($source, $field, $start, $end, $hash, $context, $body, $projectKey, $projectName, $stamp)`,
    )
    const words = this.statement("INSERT INTO chunks_fts (rowid, context, body) VALUES ($id, $context, $body)")
    const last = this.statement("SELECT last_insert_rowid() AS id")
    for (const chunk of chunks) {
      row.run({ source, field: chunk.field ?? null, hash: chunk.hash, context: chunk.context, body: chunk.body, ...lineFields(chunk) })
      words.run({ id: last.get<{ id: number }>()!.id, context: chunk.context, body: chunk.body })
    }
  }

  private dropSource(source: string): void {
    for (const { id } of this.statement("SELECT id FROM chunks WHERE source = $source").all<{ id: number }>({ source })) this.dropChunk(id)
  }

  private dropChunk(id: number): void {
    this.statement("DELETE FROM chunks_fts WHERE rowid = $id").run({ id })
    this.statement("DELETE FROM chunks WHERE id = $id").run({ id })
  }

  private statement(sql: string): SqlStatement {
    let statement = this.statements.get(sql)
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)))
    return statement
  }
}

interface IdentityRow {
  path: string
  ino: number
  dev: number
  size: number
  mtime_ms: number
  ctime_ms: number
  settled: number
}

function identityOfRow(row: IdentityRow): FileIdentityRow {
  return { ino: Number(row.ino), dev: Number(row.dev), size: Number(row.size), mtimeMs: Number(row.mtime_ms), ctimeMs: Number(row.ctime_ms), settled: Number(row.settled) === 1 }
}

/** Paths in a folder and under it: from "name/" up to, not including, "name0" ("0" follows "/"). */
function prefixRange(prefix: string): { low: string; high: string } {
  return { low: prefix, high: prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1) }
}

interface ChunkPlace {
  id: number
  hash: string
  start_line: number
  end_line: number
  project_key: string | null
  project_name: string | null
  stamp: number | null
}

function lineFields(chunk: IndexedChunk) {
  return { start: chunk.startLine, end: chunk.endLine, projectKey: chunk.projectKey ?? null, projectName: chunk.projectName ?? null, stamp: chunk.stamp ?? null }
}

/** The filter's rules (backend/project-filter.ts for the project), on one ranked row. */
function keeps(row: Omit<RankedRow, "score">, filter: ChunkFilter): boolean {
  if (filter.scope && row.source !== filter.scope && !row.source.startsWith(`${filter.scope}/`)) return false
  if (!filter.records && row.field !== null) return false
  if (filter.project !== undefined) {
    const key = row.project_key?.toLowerCase()
    const name = row.project_name?.toLowerCase()
    if (key !== filter.project && name !== filter.project && !name?.endsWith(`/${filter.project}`)) return false
  }
  const stamp = row.stamp === null ? undefined : Number(row.stamp)
  if (filter.from !== undefined && (stamp === undefined || stamp < filter.from)) return false
  if (filter.to !== undefined && (stamp === undefined || stamp > filter.to)) return false
  return true
}

/** Deletes an index file with the files SQLite keeps beside it. */
export function removeDatabase(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${file}${suffix}`, { force: true })
}
