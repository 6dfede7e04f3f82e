// Limits and timings, grouped by the part of the pipeline that owns them.
// Each value carries the Codex constant it mirrors, where Codex has one.

export const PLUGIN_ID = "opencode-codex-memory"
/** Service name used for `client.app.log`. */
export const LOG_SERVICE = "codex-memory"

export const READ_PATH = Object.freeze({
  /** MEMORY_TOOL_DEVELOPER_INSTRUCTIONS_SUMMARY_TOKEN_LIMIT */
  SUMMARY_TOKEN_LIMIT: 2_500,
  /** APPROX_BYTES_PER_TOKEN: Codex estimates tokens from UTF-8 bytes, not characters. */
  BYTES_PER_TOKEN: 4,
  /** OpenCode's title agent prompt opens with this sentence; such calls get no memory. */
  TITLE_PROMPT_PREFIX: "You are a title generator",
})

export const STORE = Object.freeze({
  FILE: "memory.db",
  /** Codex's SQLite pool waits 5 s on a locked database. */
  BUSY_TIMEOUT_MS: 5_000,
  /** A database that could not be opened (a full disk) is tried again this long after, then twice as long each time... */
  REOPEN_FIRST_DELAY_MS: 30_000,
  /** ...up to this pause between tries. */
  REOPEN_MAX_DELAY_MS: 10 * 60_000,
})

export const GUARD = Object.freeze({
  /** Upper bound a hook may add to the user's turn before it is abandoned. */
  HOOK_TIMEOUT_MS: 2_000,
  /** Diagnostics kept in memory for `memory_inspect`. */
  MAX_DIAGNOSTICS: 100,
})

export const JOBS = Object.freeze({
  /** Codex job kinds: one row per session for phase 1, one global row for phase 2. */
  STAGE1: "memory_stage1",
  PHASE2: "memory_consolidate_global",
  /** Not Codex's: sessions whose compaction closed a segment still to be learned from (segment-captures.ts). */
  CAPTURE: "memory_segment_capture",
  PHASE2_KEY: "global",
  /** PHASE2_SUCCESS_COOLDOWN_SECONDS */
  PHASE2_COOLDOWN_MS: 6 * 60 * 60 * 1000,
  /** DEFAULT_RETRY_REMAINING */
  RETRIES: 3,
  /** Not Codex's: a consolidation that forgets a session may run this soon after the last one. */
  FORGET_INTERVAL_MS: 5 * 60 * 1000,
})

/**
 * Every tool this plugin offers (tools/): what they answer is memory's own text, which extraction
 * leaves out (src/write/transcript/own-output.ts). A test keeps the list equal to the tool set.
 */
export const MEMORY_TOOL_NAMES: readonly string[] = Object.freeze([
  "memory_read",
  "memory_search",
  "memory_list",
  "memory_add_note",
  "memory_inspect",
  "memory_mode",
  "memory_reset",
  "memory_checkpoint",
])

/** Ad-hoc notes. The read, list and search limits sit with their code in src/backend/. */
export const TOOLS = Object.freeze({
  NOTE_MAX_CHARS: 4_000,
  /** AD_HOC_NOTE_SLUG_MAX_BYTES */
  NOTE_SLUG_MAX: 80,
  NOTES_DIR: "extensions/ad_hoc/notes",
})

/** Phase-1 job timings; the retry budget is JOBS.RETRIES. */
export const STAGE_ONE = Object.freeze({
  /** stage_one::JOB_LEASE_SECONDS: a claim expires after 1 h, and another process may take it over. */
  JOB_LEASE_MS: 60 * 60 * 1000,
  /** stage_one::JOB_RETRY_DELAY_SECONDS: backoff after a failure. */
  RETRY_DELAY_MS: 60 * 60 * 1000,
  /** Bounds a job row's last_error; not a Codex constant. */
  LAST_ERROR_MAX_CHARS: 4_000,
  /** Anti-stampede: a process starts no new pass within 30 s of one that claimed work. */
  PASS_GATE_MS: 30_000,
  /** Session listings are reused this long. */
  DISCOVERY_CACHE_MS: 30_000,
  /** A listing that takes longer skips the pass. */
  DISCOVERY_TIMEOUT_MS: 15_000,
  /** session.status idle and session.idle arrive together; one is enough. */
  IDLE_DEDUPE_MS: 5_000,
  /** Loading, prompting and storing one session, at most. */
  EXTRACTION_TIMEOUT_MS: 10 * 60 * 1000,
  /** CONTEXT_WINDOW_PERCENT: share of the model's window given to the transcript. */
  CONTEXT_WINDOW_PERCENT: 70,
  /** DEFAULT_ROLLOUT_TOKEN_LIMIT: the transcript budget when the model's window is unknown. */
  DEFAULT_TRANSCRIPT_TOKENS: 150_000,
  /** Room kept for the instructions around the transcript. */
  PROMPT_RESERVE_TOKENS: 4_000,
  /** Reading a helper session's messages for the spend ledger, at most. */
  USAGE_TIMEOUT_MS: 10_000,
})

/** Phase-2 job timings; the cooldown is JOBS.PHASE2_COOLDOWN_MS. */
export const STAGE_TWO = Object.freeze({
  /** stage_two::JOB_LEASE_SECONDS: a consolidation lease lasts 1 h unless heartbeated. */
  JOB_LEASE_MS: 60 * 60 * 1000,
  /** stage_two::JOB_HEARTBEAT_SECONDS: how often a running consolidator extends its lease. */
  HEARTBEAT_MS: 90_000,
  /** stage_two::JOB_RETRY_DELAY_SECONDS: backoff after a failure. */
  RETRY_DELAY_MS: 60 * 60 * 1000,
  /**
   * Not in Codex: the raw memories and rollout summaries one consolidation is given, at most, in
   * estimated tokens (src/util/token-estimate.ts), when the consolidation model's window is not
   * known: what the earlier 1,000,000-byte budget meant (some 48 records at their caps, hundreds
   * at the usual size). The records over it are the least used and oldest; they wait for a later run.
   */
  DEFAULT_INPUT_TOKENS: 250_000,
  /**
   * With the window known, the inputs get this share of it, less AGENT_RESERVE_TOKENS (and never
   * less than MIN_INPUT_WINDOW_PERCENT of it): the consolidator is an agent whose context also
   * holds its prompt, OpenCode's tool definitions, the workspace diff (which repeats what changed
   * in the inputs), the memory files it reads and every edit it writes, step after step.
   */
  INPUT_WINDOW_PERCENT: 60,
  /** The consolidation prompt and agent prompt (some 2,000 tokens), the tool definitions, and room for the agent's own reading and writing. */
  AGENT_RESERVE_TOKENS: 20_000,
  /** A small window still gets a quarter of itself for inputs, rather than none. */
  MIN_INPUT_WINDOW_PERCENT: 25,
  /** PRUNE_BATCH_SIZE: stale outputs deleted per retention pass, at most. */
  PRUNE_BATCH: 200,
  /** The same bound on a job row's last_error as phase 1's. */
  LAST_ERROR_MAX_CHARS: STAGE_ONE.LAST_ERROR_MAX_CHARS,
  /** The consolidation agent's whole run, at most; the lease is heartbeaten meanwhile. */
  AGENT_TIMEOUT_MS: 30 * 60 * 1000,
  /** Comparing memory with the host's sessions before a consolidation, at most. */
  RECONCILE_TIMEOUT_MS: 60_000,
})

/**
 * Not in Codex: a request the model refused as too large for its window (src/write/helpers/overflow.ts)
 * is asked again at once with two thirds of its budget (phase 1's transcript, phase 2's inputs), at
 * most MAX_SHRINKS times, spending no retry; only then does the job fail with the usual backoff.
 */
export const OVERFLOW = Object.freeze({
  MAX_SHRINKS: 3,
  SHRINK_NUMERATOR: 2,
  SHRINK_DENOMINATOR: 3,
})
