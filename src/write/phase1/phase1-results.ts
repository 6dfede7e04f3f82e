// What a phase-1 pass and each of its extraction jobs report. Types only, so the pass
// (phase1.ts) and the job (extraction-job.ts) share them without importing each other.

/**
 * `unsettled`: the outcome could not be written (a full disk); the process settles it at its next
 * pass. `session_gone`: OpenCode no longer has the session (deleted since it was listed): it is
 * forgotten, its job with it, and never retried.
 */
export type JobResult = { sessionId: string; outcome: "stored" | "nothing_to_remember" | "failed" | "released" | "lost_ownership" | "unsettled" | "session_gone"; detail?: string }

export type PassReport =
  | { type: "skipped"; reason: "disabled" | "disposed" | "in_flight" | "gate" | "no_store" | "rate_limited" | "held" }
  | { type: "discovery_failed"; error: string }
  /** Something other than discovery threw (a full disk failing a claim): logged, the pass is over. */
  | { type: "failed"; error: string }
  | { type: "done"; eligible: number; claimed: number; results: JobResult[] }
