// The memory_inspect report: a pure rendering of a snapshot, so it can be tested byte for byte.
import type { Diagnostic } from "../diagnostics.js"
import type { HostRegistrations } from "../host.js"
import { DEFAULT_OPTIONS, type MemoryOptions } from "../options.js"
import { PRIVATE_SPAN_CLASS } from "../redact/private.js"
import { redactText } from "../redact/redact.js"
import type { SpendReport, SpendTotals } from "../store/ledger.js"
import type { CatalogCounts } from "../store/memory-store.js"
import type { Review } from "../store/reviews.js"
import type { JobRow, VersionCounts } from "../store/version-store.js"
import type { HomeSource, MemoryPaths, MemoryVersion } from "../util/paths.js"
import { describeIgnoredAgentKeys } from "../write/helpers/helper-agents.js"
import type { SummaryStats } from "./summary-stats.js"
import { describeDuplicates, type HandbookStats } from "../write/phase2/duplicates.js"

export interface StoreStatus {
  status: string
  driver?: string
  schemaVersion?: number
  error?: string
}

/** One memory version as memory_inspect shows it. */
export interface VersionSnapshot {
  version: MemoryVersion
  /** New sessions read this version. */
  selected: boolean
  /** This version learns (selected, or dual-write). */
  writes: boolean
  paths: MemoryPaths
  store: StoreStatus
  counts: VersionCounts | undefined
  phase2: JobRow | undefined
  summary: SummaryStats | undefined
  /** MEMORY.md's size and repeated entries, when there is one. */
  handbook?: HandbookStats
  /** The exchanges with other agents this version runs, one line each. */
  extensions?: string[]
  /** The window and transcript budget of this version's last extraction, when there was one. */
  extraction?: { model: string | undefined; window: number | undefined; transcriptTokens: number; refused?: readonly number[]; at: number }
  /** V2 only. */
  readiness?: {
    consolidatedSessions: number
    threshold: number
    summary: { valid: true } | { valid: false; reason: string } | undefined
    ready: boolean
  }
}

export interface InspectSnapshot {
  now: number
  home: { path: string; source: HomeSource }
  /** memory.db: the catalog every version shares. */
  catalog: { file: string; state: StoreStatus; counts: CatalogCounts | undefined }
  versions: VersionSnapshot[]
  jobErrors: Array<JobRow & { version?: MemoryVersion }>
  options: MemoryOptions
  warnings: readonly string[]
  diagnostics: readonly Diagnostic[]
  cooldownMs: number
  /** How soon after the last consolidation one that forgets may run. */
  forgetIntervalMs: number
  /** Secrets redaction replaced in extractions, by class (MemoryStore.redactionTotals); undefined until the database is open. */
  redactions?: Record<string, number>
  /** Models paused after a rate limit or quota error. */
  breakers?: ReadonlyArray<{ scope: string; until: number; reason: string }>
  /** Keys of the user's own helper-agent blocks that were dropped, per agent. */
  ignoredAgentKeys?: Readonly<Record<string, readonly string[]>>
  /** What a host that can say so reports (OpenCode 2): how sessions are found, and the panel's switches. */
  host?: { sessions: string; switches: { useMemories: boolean; generateMemories: boolean }; registrations?: HostRegistrations }
  /** Session checkpoints in the catalog; absent while it is not open. */
  checkpoints?: { sessions: number; frozen: number }
  /** Why background learning waits (paused, daily budget spent), if it does. */
  hold?: string
  /** What the helper sessions cost; absent while the catalog is not open. */
  spend?: SpendReport
  /** The newest consolidation review. */
  lastReview?: Review
  /** Sessions kept out of memory (mode disabled or polluted), newest change first. */
  keptOut?: ReadonlyArray<{ sessionId: string; mode: string; since: number }>
  /** When memory was last reset: only what was said after it is learned. */
  resetEpoch?: number
  /** After a failed write or open (a full disk): what waits to be tried again. */
  recovery?: Recovery
  /** Listed sessions not idle long enough yet, and the soonest few with when each becomes eligible. */
  idleWaiting?: { count: number; next: ReadonlyArray<{ sessionId: string; title: string | undefined; eligibleAt: number }> }
  /** The projects memory knows, most active first: listed sessions and the selected version's records in each. */
  projects?: ReadonlyArray<{ key: string; name: string; sessions: number; records: number }>
}

export interface Recovery {
  /** Tries to open the folders and databases that failed since the last success; 0 when all opened. */
  openFailures: number
  /** When the next open is tried (before a pass, or a tool that needs memory.db). */
  nextOpenAt: number
  /** Job outcomes whose write failed, kept by this process to record at its next pass. */
  unsettled: number
  /** Set when no SQLite driver loads in this runtime: memory is off in this process, and no try is repeated. */
  noDriver?: string
}

/** Kept-out sessions listed by name, at most; the rest are counted. */
const KEPT_OUT_SHOWN = 20

export function renderInspect(s: InspectSnapshot): string {
  const lines: string[] = ["# Long-term memory", ""]
  lines.push(`home: ${s.home.path} (from ${s.home.source})`)
  lines.push(`catalog: ${s.catalog.file}: ${describeStore(s.catalog.state)}`)
  lines.push(...describeRecovery(s), "")
  lines.push(...atAGlance(s), "")
  if (s.host) {
    const onOff = (on: boolean) => (on ? "on" : "off")
    lines.push("## Host", `sessions: ${s.host.sessions}`)
    lines.push(`switches: use memories ${onOff(s.host.switches.useMemories)}, generate memories ${onOff(s.host.switches.generateMemories)}`)
    const registrations = s.host.registrations
    if (registrations) {
      lines.push(`registered: ${registrations.registered.join(", ") || "nothing"}`)
      for (const failure of registrations.failed) lines.push(`REFUSED by the host: ${failure.name}: ${failure.message} (memory runs without it)`)
    }
    lines.push("")
  }

  for (const version of s.versions) lines.push(...describeVersion(s, version), "")

  lines.push("## Sessions")
  const c = s.catalog.counts
  if (!c) lines.push("unavailable until the database is open")
  else {
    lines.push(`modes: ${c.sessionsByMode.enabled} enabled, ${c.sessionsByMode.disabled} disabled, ${c.sessionsByMode.polluted} polluted (others are enabled)`)
    lines.push(`reading: ${c.sessionsByVersion.v1} stamped v1, ${c.sessionsByVersion.v2} stamped v2 (new sessions read ${s.options.version})`)
    lines.push(`citations: ${c.citedParts} cited replies, ${c.citedFiles} files cited`)
  }
  if (s.keptOut) {
    const shown = s.keptOut.slice(0, KEPT_OUT_SHOWN).map((entry) => `${entry.sessionId} (${entry.mode} since ${iso(entry.since)})`)
    const more = s.keptOut.length > KEPT_OUT_SHOWN ? `, +${s.keptOut.length - KEPT_OUT_SHOWN} more` : ""
    lines.push(`kept out: ${shown.length ? shown.join(", ") + more : "none"}`)
  }
  const checkpoint = s.options.checkpoint
  if (!checkpoint.enabled) lines.push("checkpoints: off")
  else if (s.checkpoints) lines.push(`checkpoints (${checkpoint.mode}): ${plural(s.checkpoints.sessions, "session")}, ${s.checkpoints.frozen} carrying the view of their last compaction`)
  lines.push("")

  lines.push("## Background learning")
  lines.push(s.hold ? `held: ${s.hold}` : "running")
  const forgetting = s.versions.filter((v) => v.writes && (v.counts?.forgetting ?? 0) > 0)
  if (forgetting.length) lines.push(`forgetting: ${forgetting.map((v) => `${plural(v.counts!.forgetting, "session")} waiting to be forgotten from ${v.version}`).join("; ")} (the next consolidation removes them, at most ${Math.round(s.forgetIntervalMs / 60_000)} minutes after the last one)`)
  if (s.resetEpoch !== undefined) lines.push(`last reset: ${iso(s.resetEpoch)}; only what was said after it is learned`)
  if (s.spend) {
    const t = (x: SpendTotals) => `${Math.round(x.tokens)} tokens (input ${Math.round(x.input)}, output ${Math.round(x.output)}, reasoning ${Math.round(x.reasoning)}, cache read ${Math.round(x.cacheRead)}, cache write ${Math.round(x.cacheWrite)}), cost ${x.cost.toFixed(4)}`
    const overflows = s.spend.today.overflows ? `; ${s.spend.today.overflows} ${s.spend.today.overflows === 1 ? "request" : "requests"} too large for the model, asked again with less` : ""
    lines.push(`spend today (UTC): ${t(s.spend.today)}, ${s.spend.today.sessions} helper sessions${overflows}`)
    lines.push(`spend last 7 days: ${t(s.spend.last7Days)}, ${s.spend.last7Days.sessions} helper sessions`)
    lines.push(`per helper session: ${s.spend.last7Days.sessions ? t(s.spend.perSession) : "no helper session in the last 7 days"}`)
    const budget = s.options.daily_token_budget
    lines.push(`daily_token_budget: ${budget > 0 ? `${budget} tokens (${Math.max(0, budget - s.spend.today.tokens)} left today)` : "off"}`)
  }
  if (s.lastReview) {
    const r = s.lastReview
    const list = (items: readonly string[]) => (items.length ? items.slice(0, 5).join(", ") + (items.length > 5 ? `, +${items.length - 5} more` : "") : "none")
    lines.push(`last consolidation (${r.version}, ${iso(r.finishedAt)}): ${plural(r.summary.sessions, "session")}; inputs added: ${list(r.summary.inputsAdded)}; forgotten: ${list(r.summary.inputsRemoved)}; notes folded in: ${list(r.summary.notes)}; changed: ${list(r.summary.changed)}`)
  }
  lines.push("")

  // Rate limits only when a model is paused: the report stays short on an ordinary day.
  const breakers = s.breakers ?? []
  if (breakers.length) lines.push("## Paused models", ...breakers.map((b) => `${b.scope}: paused until ${iso(b.until)} (${redactText(b.reason)})`), "")

  lines.push("## Redactions")
  lines.push(...describeRedactions(s.redactions), "")

  lines.push("## Recent errors")
  // Errors are redacted when they are recorded; this also covers rows an older version wrote.
  const errors = [
    ...s.jobErrors.map((job) => `${job.version ? `${job.version} ` : ""}${job.kind} ${job.job_key}: ${redactText(job.last_error ?? "")}`),
    ...s.diagnostics.filter((d) => d.level === "error" || d.level === "warn").slice(-10).map((d) => `${new Date(d.time).toISOString()} ${d.level} ${d.source}: ${redactText(d.message)}`),
  ]
  lines.push(...(errors.length ? errors : ["none"]), "")

  const ignoredAgents = describeIgnoredAgentKeys(s.ignoredAgentKeys ?? {})
  if (ignoredAgents.length) lines.push("## Helper agents", ...ignoredAgents.map((sentence) => `- ${sentence}`), "")

  // Only what differs from the defaults (the JSON report carries every option).
  const changed = Object.entries(s.options).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(DEFAULT_OPTIONS[key as keyof MemoryOptions]))
  lines.push(changed.length ? "## Options (the others are at their defaults)" : "## Options", ...(changed.length ? changed.map(([key, value]) => `${key}: ${JSON.stringify(value) ?? "unset"}`) : ["all at their defaults"]))
  if (s.warnings.length) lines.push("", "warnings:", ...s.warnings.map((w) => `- ${w}`))
  return lines.join("\n")
}

function describeVersion(s: InspectSnapshot, v: VersionSnapshot): string[] {
  const role = [v.selected ? "read by new sessions" : "read only by sessions stamped with it", v.writes ? "learning" : "not learning"].join("; ")
  const lines = [`## Memory ${v.version.toUpperCase()} (${role})`]
  lines.push(`folder: ${v.paths.memoryRoot}`)
  lines.push(`database: ${v.paths.db}: ${v.store.status === "absent" ? "not created (this version never learned)" : describeStore(v.store)}`)
  if (!v.summary) lines.push("summary: none yet: nothing is injected")
  else {
    const cap = v.summary.capped ? ", cut to 2,500 tokens when injected" : ""
    lines.push(`summary: ${v.summary.bytes} bytes, about ${v.summary.estimatedTokens} tokens${cap}; injected: ${v.summary.injected ? "yes" : "no"}`)
  }
  if (v.handbook) lines.push(`handbook: MEMORY.md ${v.handbook.lines.toLocaleString("en-US")} lines, ${v.handbook.bytes.toLocaleString("en-US")} bytes (budget ${budgetOf(s.options.memory_max_lines, "lines")}, ${budgetOf(s.options.memory_max_bytes, "bytes")}); ${describeDuplicates(v.handbook.duplicates)}`)
  if (v.counts) {
    lines.push(`extracted sessions: ${v.counts.outputs} (${v.counts.outputsUsed} cited at least once)`)
    lines.push(`jobs: ${v.counts.jobs.length ? v.counts.jobs.map((j) => `${j.kind} ${j.status} ${j.count}`).join("; ") : "none"}`)
  }
  if (v.extraction) {
    const e = v.extraction
    const model = e.model ?? "OpenCode's default model"
    // Which window the budget came from: the one OpenCode reports for the model, else none, and then the default budget.
    const window = e.window ? `a window of ${e.window.toLocaleString("en-US")} tokens as OpenCode reports it` : "a window OpenCode does not report"
    const budget = `transcripts budgeted at ${e.transcriptTokens.toLocaleString("en-US")} tokens${e.window ? "" : ", the default for a window not known"}`
    // After an overflow the budget shown is the shrunk one: which budgets the model refused first.
    const shrunk = e.refused?.length ? `, after the model refused ${e.refused.map((n) => n.toLocaleString("en-US")).join(" and ")} as too large` : ""
    lines.push(`extraction: ${model}, ${window}; ${budget}${shrunk} (last extraction ${iso(e.at)})`)
  }
  lines.push(`consolidation: ${describePhase2(s, v.phase2)}`)
  lines.push(`last success: ${v.phase2?.last_success_at ? iso(v.phase2.last_success_at) : "never"}`)
  if (v.readiness) {
    const r = v.readiness
    const summary = r.summary === undefined ? "no summary" : r.summary.valid ? "summary valid" : `summary invalid: ${r.summary.reason}`
    lines.push(`readiness: ${r.ready ? "ready" : "not ready"} (${r.consolidatedSessions} of ${r.threshold} sessions in one consolidation; ${summary})`)
  }
  for (const line of v.extensions ?? []) lines.push(`exchange: ${redactText(line)}`)
  return lines
}

/** What memory holds, what waits and until when, and what learning cost today: the first things a user asks. */
function budgetOf(limit: number, unit: string): string {
  return limit > 0 ? `${limit.toLocaleString("en-US")} ${unit}` : `no ${unit} limit`
}

function atAGlance(s: InspectSnapshot): string[] {
  const versions = s.versions.filter((v) => v.writes || v.selected)
  const holds = versions.map((v) => {
    const summary = v.summary ? `a summary of about ${v.summary.estimatedTokens} tokens` : "no summary yet"
    return `${v.version}: ${v.counts ? `${plural(v.counts.outputs, "extracted session")}, ` : ""}${summary}`
  })
  const waiting: string[] = []
  for (const v of versions) {
    if (!v.counts) continue
    if (v.counts.unconsolidated) waiting.push(`${v.version}: ${plural(v.counts.unconsolidated, "record")} for the next consolidation, ${nextConsolidation(s, v.phase2, v.counts.forgetting > 0)}`)
    if (v.counts.forgetting) waiting.push(`${v.version}: ${plural(v.counts.forgetting, "session")} to forget, at most ${Math.round(s.forgetIntervalMs / 60_000)} minutes after the last consolidation`)
  }
  if (s.idleWaiting?.count) {
    const next = s.idleWaiting.next.map((w) => `${w.title ? JSON.stringify(w.title) : w.sessionId} at ${iso(w.eligibleAt)}`).join(", ")
    waiting.push(`${plural(s.idleWaiting.count, "session")} to go idle (eligible: ${next}${s.idleWaiting.count > s.idleWaiting.next.length ? ", …" : ""})`)
  }
  const idle = s.options.min_rollout_idle_hours
  const cost = s.spend ? `${Math.round(s.spend.today.tokens)} tokens, cost ${s.spend.today.cost.toFixed(4)}, ${plural(s.spend.today.sessions, "helper session")}` : "unknown until the database is open"
  return [
    "## At a glance",
    `holds: ${holds.join("; ") || "nothing"}`,
    ...projectsLine(s),
    `waiting: ${waiting.length ? waiting.join("; ") : "no record or forgetting"}${s.hold ? ` (learning held: ${s.hold})` : ""}; a session is learned once idle ${idle} ${idle === 1 ? "hour" : "hours"}`,
    `learning cost today (UTC): ${cost}`,
  ]
}

/** The projects with the most sessions and records, a handful: `sessions` lists every one. */
function projectsLine(s: InspectSnapshot): string[] {
  const projects = s.projects ?? []
  if (!projects.length) return []
  const shown = projects.slice(0, PROJECTS_SHOWN).map((p) => `${p.name} (${plural(p.sessions, "session")}, ${plural(p.records, "record")})`)
  const more = projects.length > PROJECTS_SHOWN ? `, and ${projects.length - PROJECTS_SHOWN} more` : ""
  return [`projects: ${shown.join(", ")}${more}`]
}

const PROJECTS_SHOWN = 6

/**
 * When the next consolidation may run: after the cooldown since the last one that took in new
 * records, or minutes after it while a session waits to be forgotten (that run takes the records too).
 */
function nextConsolidation(s: InspectSnapshot, job: JobRow | undefined, forgetting: boolean): string {
  if (job?.status === "running" && (job.lease_until ?? 0) > s.now) return "running now"
  const success = job?.last_success_at ?? null
  const wait = forgetting ? s.forgetIntervalMs : s.cooldownMs
  if (success && success + wait > s.now) return `${forgetting ? "with the forgetting" : "after the cooldown"}, at ${iso(success + wait)}`
  return "at the next pass"
}

function describeRecovery(s: InspectSnapshot): string[] {
  const r = s.recovery
  if (!r) return []
  const lines: string[] = []
  if (r.noDriver) lines.push(`disabled: ${r.noDriver}`)
  if (r.openFailures) {
    const next = r.nextOpenAt <= s.now ? "at the next pass" : `at ${new Date(r.nextOpenAt).toISOString()} or later`
    lines.push(`reopening: ${r.openFailures} try(s) to open memory failed; the next is ${next} (learning resumes by itself once it opens)`)
  }
  if (r.unsettled) lines.push(`unsettled: ${r.unsettled} job outcome(s) could not be written (a full disk?); this process records them at its next pass`)
  return lines
}

function describeStore(state: StoreStatus): string {
  const status = state.status === "open" ? `open (${state.driver}${state.schemaVersion === undefined ? "" : `, schema ${state.schemaVersion}`})` : state.status
  return `${status}${state.error ? `: ${state.error}` : ""}`
}

function describeRedactions(totals: Record<string, number> | undefined): string[] {
  if (!totals) return ["unavailable until the database is open"]
  const secrets = Object.entries(totals).filter(([name, count]) => name !== PRIVATE_SPAN_CLASS && count > 0)
  const spans = totals[PRIVATE_SPAN_CLASS] ?? 0
  const lines: string[] = []
  if (!secrets.length) lines.push("no secrets found in extracted sessions so far")
  else {
    const total = secrets.reduce((sum, [, count]) => sum + count, 0)
    lines.push(`secrets replaced by a marker before extraction or storage: ${total}`)
    secrets.sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    lines.push(...secrets.map(([name, count]) => `- ${name}: ${count}`))
  }
  if (spans) lines.push(`<private> spans kept out of extraction: ${spans}`)
  return lines
}

function describePhase2(s: InspectSnapshot, job: JobRow | undefined): string {
  if (!job) return "never run"
  if (job.status === "running" && (job.lease_until ?? 0) > s.now) return `running, lease until ${iso(job.lease_until)}`
  const parts = [`last state: ${job.status}`]
  if (job.finished_at) parts.push(`finished ${iso(job.finished_at)}`)
  // The cooldown counts from the last real consolidation; a check that found nothing only delays
  // the next look that no queued change asks for.
  const success = job.last_success_at ?? null
  if (success && success + s.cooldownMs > s.now) parts.push(`cooldown until ${iso(success + s.cooldownMs)}`)
  else if (job.status === "done" && job.finished_at && job.finished_at + s.cooldownMs > s.now) {
    parts.push(`nothing to do; next look without new input at ${iso(job.finished_at + s.cooldownMs)}`)
  }
  if (job.retry_at && job.retry_at > s.now) parts.push(`retry at ${iso(job.retry_at)}`)
  if (job.last_error) parts.push(`last error: ${redactText(job.last_error)}`)
  return parts.join(", ")
}

const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : "-")

/** "1 session", "2 sessions". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`
}
