// The memory_inspect report: a pure rendering of a snapshot, so it can be tested byte for byte.
import type { Diagnostic } from "../diagnostics.js"
import type { MemoryOptions } from "../options.js"
import { PRIVATE_SPAN_CLASS } from "../redact/private.js"
import { redactText } from "../redact/redact.js"
import type { JobRow, StoreCounts } from "../store/memory-store.js"
import type { MemoryPaths } from "../util/paths.js"
import { describeIgnoredAgentKeys } from "../write/helper-agents.js"

export interface InspectSnapshot {
  now: number
  paths: MemoryPaths
  store: { status: string; driver?: string; schemaVersion?: number; error?: string }
  counts: StoreCounts | undefined
  phase2: JobRow | undefined
  jobErrors: JobRow[]
  summary: { bytes: number; estimatedTokens: number; injected: boolean; capped: boolean } | undefined
  options: MemoryOptions
  warnings: readonly string[]
  diagnostics: readonly Diagnostic[]
  cooldownMs: number
  /** Secrets redaction replaced in extractions, by class (MemoryStore.redactionTotals); undefined until the database is open. */
  redactions?: Record<string, number>
  /** Models paused after a rate limit or quota error. */
  breakers?: ReadonlyArray<{ scope: string; until: number; reason: string }>
  /** Keys of the user's own helper-agent blocks that were dropped, per agent. */
  ignoredAgentKeys?: Readonly<Record<string, readonly string[]>>
}


export function renderInspect(s: InspectSnapshot): string {
  const lines: string[] = ["# Long-term memory", ""]
  lines.push(`home: ${s.paths.home} (from ${s.paths.homeSource})`, `memory folder: ${s.paths.memoryRoot}`)
  const store = s.store.status === "open" ? `open (${s.store.driver}, schema ${s.store.schemaVersion})` : s.store.status
  lines.push(`database: ${s.paths.db}: ${store}${s.store.error ? `: ${s.store.error}` : ""}`, "")

  lines.push("## Summary")
  if (!s.summary) lines.push("none yet: nothing is injected")
  else {
    const cap = s.summary.capped ? ", cut to 2,500 tokens when injected" : ""
    lines.push(`${s.summary.bytes} bytes, about ${s.summary.estimatedTokens} tokens${cap}; injected: ${s.summary.injected ? "yes" : "no"}`)
  }
  lines.push("")

  lines.push("## Learned")
  if (!s.counts) lines.push("unavailable until the database is open")
  else {
    const c = s.counts
    lines.push(`extracted sessions: ${c.outputs} (${c.outputsUsed} cited at least once)`)
    lines.push(`session modes: ${c.sessionsByMode.enabled} enabled, ${c.sessionsByMode.disabled} disabled, ${c.sessionsByMode.polluted} polluted (others are enabled)`)
    lines.push(`citations: ${c.citedParts} cited replies, ${c.citedFiles} files cited`)
    lines.push(`jobs: ${c.jobs.length ? c.jobs.map((j) => `${j.kind} ${j.status} ${j.count}`).join("; ") : "none"}`)
  }
  lines.push("")

  lines.push("## Consolidation (phase 2)")
  lines.push(describePhase2(s))
  lines.push("")

  lines.push("## Rate limits")
  const breakers = s.breakers ?? []
  lines.push(...(breakers.length ? breakers.map((b) => `${b.scope}: paused until ${iso(b.until)} (${redactText(b.reason)})`) : ["no model paused"]), "")

  lines.push("## Redactions")
  lines.push(...describeRedactions(s.redactions), "")

  lines.push("## Recent errors")
  // Errors are redacted when they are recorded; this also covers rows an older version wrote.
  const errors = [
    ...s.jobErrors.map((job) => `${job.kind} ${job.job_key}: ${redactText(job.last_error ?? "")}`),
    ...s.diagnostics.filter((d) => d.level === "error" || d.level === "warn").slice(-10).map((d) => `${new Date(d.time).toISOString()} ${d.level} ${d.source}: ${redactText(d.message)}`),
  ]
  lines.push(...(errors.length ? errors : ["none"]), "")

  const ignoredAgents = describeIgnoredAgentKeys(s.ignoredAgentKeys ?? {})
  if (ignoredAgents.length) lines.push("## Helper agents", ...ignoredAgents.map((sentence) => `- ${sentence}`), "")

  lines.push("## Options")
  for (const [key, value] of Object.entries(s.options)) lines.push(`${key}: ${JSON.stringify(value) ?? "unset"}`)
  if (s.warnings.length) lines.push("", "warnings:", ...s.warnings.map((w) => `- ${w}`))
  return lines.join("\n")
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

function describePhase2(s: InspectSnapshot): string {
  const job = s.phase2
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
