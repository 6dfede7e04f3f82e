// What a phase-1 pass and each of its extraction jobs report. Types only, so the pass
// (phase1.ts) and the job (extraction-job.ts) share them without importing each other.

export type JobResult = { sessionId: string; outcome: "stored" | "nothing_to_remember" | "failed" | "released" | "lost_ownership"; detail?: string }

export type PassReport =
  | { type: "skipped"; reason: "disabled" | "disposed" | "in_flight" | "gate" | "no_store" | "rate_limited" | "held" }
  | { type: "discovery_failed"; error: string }
  | { type: "done"; eligible: number; claimed: number; results: JobResult[] }
