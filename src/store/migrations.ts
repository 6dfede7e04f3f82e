// Numbered schema migrations. Append only: a shipped migration is never edited. Times are Unix
// milliseconds throughout. memory.db holds the catalog every version shares (session modes,
// version stamps, citation dedupe, the redaction audit) and Memory V1's outputs and jobs;
// memory_v2.db holds V2's outputs, jobs and consolidation progress (V2_MIGRATIONS).

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * Sessions whose learned records were deleted while the memory folder still held what was learned
 * from them: the next consolidation removes it, sooner than the learning cooldown (phase2-jobs.ts).
 * One per version database.
 */
const FORGET_QUEUE = `
      CREATE TABLE forget_queue (
        session_id TEXT PRIMARY KEY,
        queued_at  INTEGER NOT NULL
      );

      -- The sessions the last consolidation consumed, i.e. those the memory folder holds text of,
      -- kept even when their records are replaced (a compaction's segment) or dropped (nothing left
      -- to remember) before the next consolidation. Seeded from the records the last one selected.
      CREATE TABLE consolidated_sessions (session_id TEXT PRIMARY KEY);
      INSERT INTO consolidated_sessions (session_id)
        SELECT DISTINCT substr(session_id, 1, instr(session_id || '#', '#') - 1) FROM stage1_outputs WHERE selected_for_phase2 <> 0;`

/**
 * The budgets, in tokens, at which a job's last run found its request too large for the model, in
 * order (JSON, e.g. [9200,6133]): phase 1's transcript budgets, phase 2's input budgets. Each shrink
 * is written as it happens; the next claim clears it; NULL when the last run met no overflow.
 * One per version database.
 */
const OVERFLOW_BUDGETS = `
      ALTER TABLE jobs ADD COLUMN overflow_budgets TEXT;`

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: "sessions, extraction outputs and jobs",
    sql: `
      -- Per-session memory mode, set by memory_mode or by external-context pollution.
      CREATE TABLE session_meta (
        session_id  TEXT PRIMARY KEY,
        memory_mode TEXT NOT NULL DEFAULT 'enabled' CHECK (memory_mode IN ('enabled', 'disabled', 'polluted')),
        updated_at  INTEGER NOT NULL
      );

      -- One phase-1 result per session (Codex: stage1_outputs).
      CREATE TABLE stage1_outputs (
        session_id        TEXT PRIMARY KEY,
        source_updated_at INTEGER NOT NULL,
        raw_memory        TEXT NOT NULL,
        rollout_summary   TEXT NOT NULL,
        rollout_slug      TEXT,
        cwd               TEXT,
        generated_at      INTEGER NOT NULL,
        usage_count       INTEGER NOT NULL DEFAULT 0,
        last_usage        INTEGER,
        selected_for_phase2 INTEGER NOT NULL DEFAULT 0,
        selected_for_phase2_source_updated_at INTEGER
      );
      CREATE INDEX stage1_outputs_by_recency ON stage1_outputs (source_updated_at DESC, session_id DESC);

      -- Leased jobs: one row per session for phase 1, one global row for phase 2 (Codex: jobs).
      CREATE TABLE jobs (
        kind            TEXT NOT NULL,
        job_key         TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
        worker_id       TEXT,
        ownership_token TEXT,
        started_at      INTEGER,
        finished_at     INTEGER,
        lease_until     INTEGER,
        retry_at        INTEGER,
        retry_remaining INTEGER NOT NULL,
        last_error      TEXT,
        input_watermark INTEGER,
        last_success_watermark INTEGER,
        PRIMARY KEY (kind, job_key)
      );
      CREATE INDEX jobs_by_state ON jobs (kind, status, retry_at, lease_until);
    `,
  },
  {
    version: 2,
    name: "citation usage",
    sql: `
      -- Each cited assistant text part counts once, whichever hook saw it first, in any process.
      CREATE TABLE citation_parts (
        part_id     TEXT PRIMARY KEY,
        session_id  TEXT,
        recorded_at INTEGER NOT NULL
      );

      -- Which memory files (and line ranges) citations pointed at, for retention and inspection.
      CREATE TABLE cited_files (
        path        TEXT PRIMARY KEY,
        usage_count INTEGER NOT NULL DEFAULT 0,
        last_usage  INTEGER NOT NULL,
        last_range  TEXT
      );
    `,
  },
  {
    version: 3,
    name: "phase-2 cooldown and queue",
    sql: `
      -- When the job last succeeded cleanly: phase 2's 6 h cooldown runs from it. finished_at cannot
      -- stand in for it, since failures set it too.
      ALTER TABLE jobs ADD COLUMN last_success_at INTEGER;

      -- Rows already done without an error (the reset's phase-2 row) succeeded when they finished.
      UPDATE jobs SET last_success_at = finished_at WHERE status = 'done' AND last_error IS NULL;
    `,
  },
  {
    version: 4,
    name: "redaction audit",
    sql: `
      -- What redaction replaced in each extraction, as counts by class (JSON: {"github-token": 2}).
      -- The secrets themselves are never stored. stage: 'transcript' (before the extraction
      -- model saw it) or 'answer' (what the model wrote back). Kept across memory resets.
      CREATE TABLE redaction_log (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,
        stage       TEXT NOT NULL,
        recorded_at INTEGER NOT NULL,
        counts      TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "lease owners",
    sql: `
      -- Who holds a running job's lease: a process id and the boot it ran on (lease-owner.ts). A
      -- lease whose owner is gone from this boot is taken over at once instead of after its hour.
      -- Rows claimed before this migration have neither and wait for their lease to expire.
      ALTER TABLE jobs ADD COLUMN owner_pid INTEGER;
      ALTER TABLE jobs ADD COLUMN owner_boot TEXT;
    `,
  },
  {
    version: 6,
    name: "session version stamps",
    sql: `
      -- The memory version a session reads, frozen at its first real use (injection, a memory
      -- tool, a note, a citation), so that changing the version option affects new sessions
      -- only. Kept across memory resets, like session modes.
      CREATE TABLE memory_session_versions (
        session_id TEXT PRIMARY KEY,
        version    TEXT NOT NULL CHECK (version IN ('v1', 'v2')),
        stamped_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: "session checkpoints",
    sql: `
      -- Each session's working state (src/checkpoint): the checkpoint_v1 projection as JSON, the
      -- view rendered for a compaction in progress, and the view frozen by the last compaction,
      -- which every later turn carries until the next. Session state, not memory: a reset keeps
      -- it; deleting the session deletes it.
      CREATE TABLE session_checkpoints (
        session_id   TEXT PRIMARY KEY,
        state        TEXT NOT NULL,
        updated_at   INTEGER NOT NULL,
        pending_view TEXT,
        frozen_view  TEXT,
        frozen_at    INTEGER,
        compactions  INTEGER NOT NULL DEFAULT 0
      );
    `,
  },
  {
    version: 8,
    name: "learning switch, spend ledger, consolidation reviews",
    sql: `
      -- Settings every process sharing the home honours, e.g. learning_paused = '1' (the CLI's
      -- pause). Read at the start of every background pass.
      CREATE TABLE settings (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      -- What the helper sessions cost, as OpenCode reported it, summed per UTC day and phase
      -- ('extraction' or 'consolidation'). Kept across memory resets.
      CREATE TABLE spend_ledger (
        day         TEXT NOT NULL,
        phase       TEXT NOT NULL,
        sessions    INTEGER NOT NULL DEFAULT 0,
        input       INTEGER NOT NULL DEFAULT 0,
        output      INTEGER NOT NULL DEFAULT 0,
        reasoning   INTEGER NOT NULL DEFAULT 0,
        cache_read  INTEGER NOT NULL DEFAULT 0,
        cache_write INTEGER NOT NULL DEFAULT 0,
        cost        REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (day, phase)
      );

      -- The last consolidations' redacted diffs of the memory folder, with what moved them.
      CREATE TABLE consolidation_reviews (
        id          INTEGER PRIMARY KEY,
        version     TEXT NOT NULL,
        finished_at INTEGER NOT NULL,
        summary     TEXT NOT NULL,
        diff        TEXT NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: "forgetting and who has the home open",
    sql: `
      -- The CLI's forget: messages of the session created before this time are never learned from.
      ALTER TABLE session_meta ADD COLUMN forgotten_before INTEGER;

      -- Which host a record or checkpoint came from ('opencode1', 'opencode2'; NULL: before this
      -- column, which only OpenCode 1 wrote): a host forgets only the sessions it can look up.
      ALTER TABLE stage1_outputs ADD COLUMN host TEXT;
      ALTER TABLE session_checkpoints ADD COLUMN host TEXT;

      ${FORGET_QUEUE}

      -- Plugin instances that have this home open (src/store/instances.ts): an import refuses to
      -- swap the databases under one. A row whose process is gone no longer counts.
      CREATE TABLE plugin_instances (
        instance_id TEXT PRIMARY KEY,
        pid         INTEGER NOT NULL,
        boot        TEXT NOT NULL,
        host        TEXT NOT NULL,
        started_at  INTEGER NOT NULL,
        seen_at     INTEGER NOT NULL
      );
    `,
  },
  {
    version: 10,
    name: "record git branches",
    sql: `
      -- The git branch the session's folder had when the record was made (Codex: git_branch), or
      -- NULL: not a repository, or recorded before this column.
      ALTER TABLE stage1_outputs ADD COLUMN git_branch TEXT;
    `,
  },
  {
    version: 11,
    name: "session catalog",
    sql: `
      -- The root sessions phase 1's listings showed (src/store/session-catalog.ts), for the
      -- \`sessions\` command and the waiting list: when each was last active, so when it becomes
      -- eligible. Title and folder are cleaned like every host string, and kept only while the
      -- session may be learned from (enabled, active since its last reset or forget). A session
      -- OpenCode deleted loses its row with the rest of its traces.
      CREATE TABLE session_catalog (
        session_id TEXT PRIMARY KEY,
        title      TEXT,
        directory  TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        listed_at  INTEGER NOT NULL
      );
      CREATE INDEX session_catalog_by_activity ON session_catalog (updated_at DESC, session_id DESC);
    `,
  },
  {
    version: 12,
    name: "record projects",
    sql: `
      -- The project the session's folder belongs to when the record was made
      -- (src/write/phase1/project-identity.ts): a stable key (a repository's common git folder,
      -- the host's own identity, a mapping, or the folder) and a name people read, both cleaned
      -- like the folder. NULL: no project (home, temp, memory folders) or recorded before this.
      ALTER TABLE stage1_outputs ADD COLUMN project_key TEXT;
      ALTER TABLE stage1_outputs ADD COLUMN project_name TEXT;
      -- The same for listed sessions, for \`sessions\` and \`status\` to group by; hidden with the
      -- title and folder.
      ALTER TABLE session_catalog ADD COLUMN project_key TEXT;
      ALTER TABLE session_catalog ADD COLUMN project_name TEXT;
    `,
  },
  {
    version: 13,
    name: "overflow shrinks",
    sql: `
      ${OVERFLOW_BUDGETS}
      -- Requests the model refused as too large for its window, per day and phase, each asked
      -- again at once with less (src/write/helpers/overflow.ts).
      ALTER TABLE spend_ledger ADD COLUMN overflows INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 14,
    name: "citation receipts",
    sql: `
      -- What each session's replies cited: one row per cited file and line range of a counted
      -- part, for \`recall\` and the viewer's session page. The path is redacted before it is
      -- stored; at most CITATION_RECEIPTS_PER_SESSION rows a session, the oldest dropped; deleted
      -- when the session is forgotten and by a reset (memory-store.ts).
      CREATE TABLE citation_receipts (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,
        path        TEXT NOT NULL,
        line_start  INTEGER NOT NULL,
        line_end    INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL
      );
      CREATE INDEX citation_receipts_by_session ON citation_receipts (session_id, id);
    `,
  },
])

/** The schema of one version's own outputs and jobs: V1's tables as migrations 1, 3 and 5 left them. */
const VERSION_TABLES = `
  CREATE TABLE stage1_outputs (
    session_id        TEXT PRIMARY KEY,
    source_updated_at INTEGER NOT NULL,
    raw_memory        TEXT NOT NULL,
    rollout_summary   TEXT NOT NULL,
    rollout_slug      TEXT,
    cwd               TEXT,
    generated_at      INTEGER NOT NULL,
    usage_count       INTEGER NOT NULL DEFAULT 0,
    last_usage        INTEGER,
    selected_for_phase2 INTEGER NOT NULL DEFAULT 0,
    selected_for_phase2_source_updated_at INTEGER
  );
  CREATE INDEX stage1_outputs_by_recency ON stage1_outputs (source_updated_at DESC, session_id DESC);

  CREATE TABLE jobs (
    kind            TEXT NOT NULL,
    job_key         TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    worker_id       TEXT,
    ownership_token TEXT,
    started_at      INTEGER,
    finished_at     INTEGER,
    lease_until     INTEGER,
    retry_at        INTEGER,
    retry_remaining INTEGER NOT NULL,
    last_error      TEXT,
    input_watermark INTEGER,
    last_success_watermark INTEGER,
    last_success_at INTEGER,
    owner_pid       INTEGER,
    owner_boot      TEXT,
    PRIMARY KEY (kind, job_key)
  );
  CREATE INDEX jobs_by_state ON jobs (kind, status, retry_at, lease_until);
`

/** memory_v2.db: Memory V2's own outputs, jobs and readiness progress (Codex: memories_v2_1.sqlite). */
export const V2_MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: "V2 extraction outputs and jobs", sql: VERSION_TABLES },
  {
    version: 2,
    name: "V2 consolidation progress",
    sql: `
      -- One row: the most distinct sessions any successful V2 consolidation consumed. V2 counts
      -- as ready once this reaches the readiness threshold (Codex: max_thread_count).
      CREATE TABLE consolidation_progress (
        id                INTEGER PRIMARY KEY CHECK (id = 1),
        max_session_count INTEGER NOT NULL,
        updated_at        INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "V2 forget queue and record hosts",
    sql: `
      -- Which host a record came from, as in memory.db's migration 9.
      ALTER TABLE stage1_outputs ADD COLUMN host TEXT;
      ${FORGET_QUEUE}
    `,
  },
  {
    version: 4,
    name: "V2 record git branches",
    sql: `
      -- As in memory.db's migration 10.
      ALTER TABLE stage1_outputs ADD COLUMN git_branch TEXT;
    `,
  },
  {
    version: 5,
    name: "V2 record projects",
    sql: `
      -- As in memory.db's migration 12.
      ALTER TABLE stage1_outputs ADD COLUMN project_key TEXT;
      ALTER TABLE stage1_outputs ADD COLUMN project_name TEXT;
    `,
  },
  {
    version: 6,
    name: "V2 overflow shrinks",
    sql: `
      -- As in memory.db's migration 13 (V2 keeps no ledger of its own).
      ${OVERFLOW_BUDGETS}
    `,
  },
])
