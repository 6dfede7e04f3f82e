// The CLI's one error type and its exit codes. Every failure leaves as `{ "error": { code,
// message } }` on stdout and a line on stderr, with an exit code a script can branch on:
//   0 success · 1 refused or failed · 2 bad usage · 3 bad data (corrupt database, bad archive)
export const EXIT = Object.freeze({ OK: 0, FAILED: 1, USAGE: 2, DATA: 3 })

export type CliErrorCode =
  | "usage"
  | "unknown_command"
  | "input_too_large"
  | "no_home"
  | "not_found"
  | "refused"
  | "consolidation_running"
  | "incompatible"
  | "corrupt_database"
  | "newer_database"
  | "invalid_archive"
  | "newer_archive"
  | "too_large"
  | "home_not_empty"
  | "unknown_session"
  | "opencode_running"
  | "forgetting_pending"
  | "no_sqlite_driver"
  | "io"

const EXIT_OF: Readonly<Record<CliErrorCode, number>> = {
  usage: EXIT.USAGE,
  unknown_command: EXIT.USAGE,
  input_too_large: EXIT.USAGE,
  no_home: EXIT.FAILED,
  not_found: EXIT.FAILED,
  refused: EXIT.FAILED,
  consolidation_running: EXIT.FAILED,
  incompatible: EXIT.FAILED,
  home_not_empty: EXIT.FAILED,
  unknown_session: EXIT.FAILED,
  opencode_running: EXIT.FAILED,
  forgetting_pending: EXIT.FAILED,
  no_sqlite_driver: EXIT.FAILED,
  io: EXIT.FAILED,
  corrupt_database: EXIT.DATA,
  newer_database: EXIT.DATA,
  invalid_archive: EXIT.DATA,
  newer_archive: EXIT.DATA,
  too_large: EXIT.DATA,
}

export class CliError extends Error {
  override readonly name = "CliError"

  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message)
  }

  get exitCode(): number {
    return EXIT_OF[this.code]
  }
}
