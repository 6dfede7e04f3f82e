// The one error type of memory archives. Its message is read by a person at a terminal (the CLI
// prints it as is), so it says what was wrong and what to do about it.

export type ArchiveErrorCode = "invalid_archive" | "newer_archive" | "too_large" | "home_not_empty" | "consolidation_running" | "opencode_running" | "forgetting_pending" | "no_home" | "io"

export class ArchiveError extends Error {
  override readonly name = "ArchiveError"

  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message)
  }
}

/** An unexpected file-system or database failure while doing `what`; `outcome` says what it left. */
export function archiveIoError(what: string, error: unknown, outcome: string): ArchiveError {
  const detail = (error as Error | undefined)?.message ?? String(error)
  return new ArchiveError("io", `Could not ${what} (${detail}). ${outcome}`)
}
