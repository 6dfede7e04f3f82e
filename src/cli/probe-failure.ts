// Why a probe of OpenCode failed, in words: doctor must never print an empty reason, and a probe
// killed at its timeout says so rather than echoing an empty stderr.

export interface ProbeRun {
  code: number | null
  signal?: NodeJS.Signals | null
  /** Set when the probe was killed at its time limit. */
  timedOutAfterMs?: number
  stdout: string
  stderr: string
  error?: Error
}

/** One line saying why the run failed: the timeout, else the first line it printed, else how it ended. */
export function probeFailure(run: ProbeRun): string {
  const said = firstLine(run.stderr) || firstLine(run.stdout)
  const printed = said ? `; it printed: ${said}` : ""
  if (run.timedOutAfterMs !== undefined) return `no answer within ${Math.round(run.timedOutAfterMs / 1000)} s, so it was stopped${printed}`
  if (run.error && !said) return errorReason(run.error)
  if (run.signal) return `ended by ${run.signal}${printed}`
  if (run.code !== null && run.code !== 0) return said ? `exit ${run.code}: ${said}` : `exit ${run.code}, printing nothing`
  return said || (run.error ? errorReason(run.error) : "it ended without a word")
}

/** An error's message, its cause's, or at least its name. */
export function errorReason(error: unknown): string {
  const own = error instanceof Error ? error.message.trim() : String(error ?? "").trim()
  const cause = error instanceof Error && error.cause !== undefined ? errorReason(error.cause) : ""
  if (own && cause && !own.includes(cause)) return `${own} (${cause})`
  if (own) return own
  if (cause) return cause
  return error instanceof Error ? `${error.name} with no message` : "an unnamed error"
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.trim().slice(0, 200) ?? ""
}
