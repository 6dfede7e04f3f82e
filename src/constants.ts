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
})

export const GUARD = Object.freeze({
  /** Upper bound a hook may add to the user's turn before it is abandoned. */
  HOOK_TIMEOUT_MS: 2_000,
  /** Diagnostics kept in memory for `memory_inspect`. */
  MAX_DIAGNOSTICS: 100,
})
