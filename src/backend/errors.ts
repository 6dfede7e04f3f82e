// The one error type of the memory-folder backend. Its message goes to the model as is, so it says
// what was wrong with the call and how to make a better one, never a stack or an absolute path.

export type MemoryErrorKind = "invalid_path" | "not_found" | "invalid_argument" | "empty_query" | "exists" | "unknown_session" | "unavailable" | "io"

export class MemoryError extends Error {
  override readonly name = "MemoryError"

  constructor(
    readonly kind: MemoryErrorKind,
    message: string,
  ) {
    super(message)
  }
}

/** An unexpected file-system failure, worded for the model; `relative` is the memory path involved. */
export function ioError(relative: string, error: unknown): MemoryError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const where = relative === "" ? "the memory folder" : `"${relative}"`
  return new MemoryError("io", `Could not access ${where}${code ? ` (${code})` : ""}; try again, or use another path.`)
}
