// The catalog in memory.db, shared by every memory version: session modes, the version each
// session reads, which reply parts were already counted as citations, cited files, and the
// redaction audit. What a version learned (outputs, jobs, readiness) is in its own database,
// behind VersionStore. Each method is one short transaction: SQLite calls are synchronous, so
// nothing here may hold a lock for long.
import { immediate } from "./database.js"
import type { SqlDatabase } from "./sqlite.js"
import type { MemoryVersion } from "../util/paths.js"

export type MemoryMode = "enabled" | "disabled" | "polluted"

/** Where redaction counts come from: the transcript sent to the extractor, or its answer. */
export type RedactionStage = "transcript" | "answer"

export interface CitedRange {
  path: string
  start: number
  end: number
}

/** One memory file and line range a session's replies cited: how often, and when last. */
export interface CitationReceipt {
  path: string
  start: number
  end: number
  count: number
  lastAt: number
}

/** Receipts kept per citing session; the oldest go first. */
export const CITATION_RECEIPTS_PER_SESSION = 200

export interface CatalogCounts {
  sessionsByMode: Record<MemoryMode, number>
  /** Sessions whose read version is frozen, by version. */
  sessionsByVersion: Record<MemoryVersion, number>
  citedParts: number
  citedFiles: number
}

export class MemoryStore {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** A session's memory mode; sessions never seen are enabled. */
  mode(sessionId: string): MemoryMode {
    const row = this.db.prepare("SELECT memory_mode FROM session_meta WHERE session_id = $id").get<{ memory_mode: MemoryMode }>({ id: sessionId })
    return row?.memory_mode ?? "enabled"
  }

  /** Sessions kept out of memory (disabled or polluted); every other session is enabled. */
  sessionsNotEnabled(): Set<string> {
    const rows = this.db.prepare("SELECT session_id FROM session_meta WHERE memory_mode <> 'enabled'").all<{ session_id: string }>()
    return new Set(rows.map((row) => row.session_id))
  }

  /**
   * Sets a session's mode and returns the one it had. Disabled and polluted are both "out": a
   * change that crosses the line moves the session's records into or out of every version's
   * consolidation inputs, so the caller queues each version's phase 2 (VersionStore.queueIfHasOutput).
   */
  setMode(sessionId: string, mode: MemoryMode): MemoryMode {
    return immediate(this.db, () => {
      const previous = this.mode(sessionId)
      this.db
        .prepare(
          `INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $now)
           ON CONFLICT (session_id) DO UPDATE SET memory_mode = excluded.memory_mode, updated_at = excluded.updated_at`,
        )
        .run({ id: sessionId, mode, now: this.now() })
      return previous
    })
  }

  /**
   * The version a session reads: the stamp it already has, else `version`, which becomes its
   * stamp. INSERT OR IGNORE then SELECT: when two processes stamp one session at once, both get
   * the first one's version.
   */
  stampVersion(sessionId: string, version: MemoryVersion): MemoryVersion {
    this.db
      .prepare("INSERT INTO memory_session_versions (session_id, version, stamped_at) VALUES ($id, $version, $now) ON CONFLICT (session_id) DO NOTHING")
      .run({ id: sessionId, version, now: this.now() })
    return this.stampedVersion(sessionId) ?? version
  }

  /** A session's stamp, if it has one; reading never stamps (memory_inspect peeks with this). */
  stampedVersion(sessionId: string): MemoryVersion | undefined {
    const row = this.db.prepare("SELECT version FROM memory_session_versions WHERE session_id = $id").get<{ version: MemoryVersion }>({ id: sessionId })
    return row?.version
  }

  /**
   * Records one citation block of one assistant text part, and the files it cites. Returns false
   * when that part was already counted (the same block is seen by several hooks, and on every
   * later turn); only a true answer should bump the cited sessions' usage (VersionStore.bumpUsage).
   */
  recordCitation(partId: string, citingSession: string | undefined, files: readonly CitedRange[]): boolean {
    return immediate(this.db, () => {
      const now = this.now()
      const inserted = this.db
        .prepare("INSERT INTO citation_parts (part_id, session_id, recorded_at) VALUES ($part, $session, $now) ON CONFLICT (part_id) DO NOTHING")
        .run({ part: partId, session: citingSession ?? null, now })
      if (inserted.changes === 0) return false
      const cite = this.db.prepare(
        `INSERT INTO cited_files (path, usage_count, last_usage, last_range) VALUES ($path, 1, $now, $range)
         ON CONFLICT (path) DO UPDATE SET usage_count = usage_count + 1, last_usage = excluded.last_usage, last_range = excluded.last_range`,
      )
      const seen = new Set<string>()
      for (const file of files) {
        if (seen.has(file.path)) continue
        seen.add(file.path)
        cite.run({ path: file.path, now, range: `${file.start}-${file.end}` })
      }
      if (citingSession !== undefined && files.length > 0) this.addReceipts(citingSession, files, now)
      return true
    })
  }

  /** The receipts of one counted part: each distinct range once, then the session's oldest beyond the cap dropped. */
  private addReceipts(sessionId: string, files: readonly CitedRange[], now: number): void {
    const add = this.db.prepare("INSERT INTO citation_receipts (session_id, path, line_start, line_end, recorded_at) VALUES ($session, $path, $start, $end, $now)")
    const seen = new Set<string>()
    for (const file of files) {
      const key = `${file.path}\0${file.start}\0${file.end}`
      if (seen.has(key)) continue
      seen.add(key)
      add.run({ session: sessionId, path: file.path, start: file.start, end: file.end, now })
    }
    this.db
      .prepare(
        `DELETE FROM citation_receipts WHERE session_id = $session AND id NOT IN
           (SELECT id FROM citation_receipts WHERE session_id = $session ORDER BY id DESC LIMIT $cap)`,
      )
      .run({ session: sessionId, cap: CITATION_RECEIPTS_PER_SESSION })
  }

  /** What a session's replies cited, per file and line range: how many times and when last, most recent first. */
  receiptsOf(sessionId: string): CitationReceipt[] {
    return this.db
      .prepare(
        `SELECT path, line_start, line_end, COUNT(*) AS n, MAX(recorded_at) AS last_at FROM citation_receipts
         WHERE session_id = $id GROUP BY path, line_start, line_end ORDER BY last_at DESC, path, line_start, line_end`,
      )
      .all<{ path: string; line_start: number; line_end: number; n: number; last_at: number }>({ id: sessionId })
      .map((row) => ({ path: row.path, start: Number(row.line_start), end: Number(row.line_end), count: Number(row.n), lastAt: Number(row.last_at) }))
  }

  /** The sessions kept out of memory, newest change first: what `modes` and memory_inspect list. */
  keptOut(): Array<{ sessionId: string; mode: MemoryMode; since: number }> {
    return this.db
      .prepare("SELECT session_id, memory_mode, updated_at FROM session_meta WHERE memory_mode <> 'enabled' ORDER BY updated_at DESC, session_id")
      .all<{ session_id: string; memory_mode: MemoryMode; updated_at: number }>()
      .map((row) => ({ sessionId: row.session_id, mode: row.memory_mode, since: Number(row.updated_at) }))
  }

  /**
   * The CLI's forget: the session's messages created before `at` are never learned from again
   * (extraction leaves them out, whatever happens in the session later). Its mode is unchanged.
   */
  forgetBefore(sessionId: string, at: number): void {
    this.db
      .prepare(
        `INSERT INTO session_meta (session_id, memory_mode, updated_at, forgotten_before) VALUES ($id, 'enabled', $now, $at)
         ON CONFLICT (session_id) DO UPDATE SET forgotten_before = MAX(COALESCE(forgotten_before, 0), excluded.forgotten_before)`,
      )
      .run({ id: sessionId, now: this.now(), at })
  }

  /** Sessions with a forget time, and that time (small: one row per session forgotten by hand). */
  forgottenBefore(): Map<string, number> {
    const rows = this.db.prepare("SELECT session_id, forgotten_before FROM session_meta WHERE forgotten_before IS NOT NULL").all<{ session_id: string; forgotten_before: number }>()
    return new Map(rows.map((row) => [row.session_id, Number(row.forgotten_before)]))
  }

  /** Whether memory holds any trace of the session: a mode, a stamp, a checkpoint, a citation or an audit row. */
  knows(sessionId: string): boolean {
    const row = this.db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM session_meta WHERE session_id = $id)
             OR EXISTS (SELECT 1 FROM memory_session_versions WHERE session_id = $id)
             OR EXISTS (SELECT 1 FROM session_checkpoints WHERE session_id = $id)
             OR EXISTS (SELECT 1 FROM citation_parts WHERE session_id = $id)
             OR EXISTS (SELECT 1 FROM redaction_log WHERE session_id = $id) AS known`,
      )
      .get<{ known: number }>({ id: sessionId })
    return Number(row?.known ?? 0) === 1
  }

  /**
   * The catalog's share of forgetting a session, in one transaction: its checkpoint (unless
   * `keepCheckpoint`: a polluted session keeps its working state), its redaction audit rows and its
   * citation receipts; for
   * a session OpenCode deleted (`deleted`), also its mode, version stamp and counted citation parts,
   * which mean nothing once the session is gone.
   */
  forgetSession(sessionId: string, options: { deleted: boolean; keepCheckpoint?: boolean }): void {
    immediate(this.db, () => {
      const id = { id: sessionId }
      if (!options.keepCheckpoint) this.db.prepare("DELETE FROM session_checkpoints WHERE session_id = $id").run(id)
      this.db.prepare("DELETE FROM redaction_log WHERE session_id = $id").run(id)
      // What its replies cited goes with what was learned from it, whatever the reason.
      this.db.prepare("DELETE FROM citation_receipts WHERE session_id = $id").run(id)
      if (!options.deleted) return
      this.db.prepare("DELETE FROM session_meta WHERE session_id = $id").run(id)
      this.db.prepare("DELETE FROM memory_session_versions WHERE session_id = $id").run(id)
      this.db.prepare("DELETE FROM citation_parts WHERE session_id = $id").run(id)
    })
  }

  counts(): CatalogCounts {
    const one = (sql: string) => Number(this.db.prepare(sql).get<{ n: number }>()?.n ?? 0)
    const sessionsByMode: Record<MemoryMode, number> = { enabled: 0, disabled: 0, polluted: 0 }
    for (const row of this.db.prepare("SELECT memory_mode AS mode, COUNT(*) AS n FROM session_meta GROUP BY memory_mode").all<{ mode: MemoryMode; n: number }>()) {
      sessionsByMode[row.mode] = Number(row.n)
    }
    const sessionsByVersion: Record<MemoryVersion, number> = { v1: 0, v2: 0 }
    for (const row of this.db.prepare("SELECT version, COUNT(*) AS n FROM memory_session_versions GROUP BY version").all<{ version: MemoryVersion; n: number }>()) {
      sessionsByVersion[row.version] = Number(row.n)
    }
    return {
      sessionsByMode,
      sessionsByVersion,
      citedParts: one("SELECT COUNT(*) AS n FROM citation_parts"),
      citedFiles: one("SELECT COUNT(*) AS n FROM cited_files"),
    }
  }

  /** Records what redaction replaced in one extraction stage; empty counts record nothing. */
  recordRedactions(sessionId: string, counts: Readonly<Record<string, number>>, stage: RedactionStage = "transcript"): void {
    const clean = Object.fromEntries(Object.entries(counts).filter(([, count]) => Number.isInteger(count) && count > 0))
    if (!Object.keys(clean).length) return
    this.db
      .prepare("INSERT INTO redaction_log (session_id, stage, recorded_at, counts) VALUES ($session, $stage, $now, $counts)")
      .run({ session: sessionId, stage, now: this.now(), counts: JSON.stringify(clean) })
  }

  /** What redaction replaced for one session, summed by stage and class. */
  redactionsOf(sessionId: string): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {}
    for (const row of this.db.prepare("SELECT stage, counts FROM redaction_log WHERE session_id = $id").all<{ stage: string; counts: string }>({ id: sessionId })) {
      addLogged((out[row.stage] ??= {}), row.counts)
    }
    return out
  }

  /** Everything redaction ever replaced before or after extraction, summed by class. */
  redactionTotals(): Record<string, number> {
    const totals: Record<string, number> = {}
    for (const row of this.db.prepare("SELECT counts FROM redaction_log").all<{ counts: string }>()) addLogged(totals, row.counts)
    return totals
  }

  /**
   * The reset's share of the catalog: which parts were counted and which files were cited. Modes,
   * version stamps and the redaction audit stay (the user's choices, and a record of what was
   * kept out).
   */
  clearCitations(): void {
    immediate(this.db, () => {
      this.db.prepare("DELETE FROM citation_parts").run()
      this.db.prepare("DELETE FROM cited_files").run()
      this.db.prepare("DELETE FROM citation_receipts").run()
    })
  }
}

/** Adds one logged counts object (JSON text) into `into`; a row that does not parse adds nothing. */
function addLogged(into: Record<string, number>, text: string): void {
  let counts: unknown
  try {
    counts = JSON.parse(text)
  } catch {
    return
  }
  if (typeof counts !== "object" || counts === null) return
  for (const [name, count] of Object.entries(counts)) if (typeof count === "number") into[name] = (into[name] ?? 0) + count
}
