// The viewer's pages, rendered from the JSON the command-line tool answers (the same contract, so
// a page shows what `status`, `sessions` or `recall` would say). Pure: the same data gives the
// same bytes. Every value is escaped by `html` (html.ts); memory's own Markdown goes through the
// sanitizing renderer (markdown.ts). No page carries a script.
import { groupByProject } from "../control/session-list.js"
import { html, query, raw, type Part, type Raw } from "./html.js"

export type Version = "v1" | "v2"

export interface PageContext {
  /** The memory version the page is about; links keep it. */
  version: Version
  /** The Markdown renderer for memory content (markdown.ts). */
  markdown: (text: string) => string
}

export const NAV: ReadonlyArray<[string, string]> = [
  ["/", "Overview"],
  ["/summary", "Summary"],
  ["/memory", "Handbook"],
  ["/sessions", "Sessions"],
  ["/history", "History"],
  ["/cost", "Cost"],
  ["/jobs", "Jobs"],
  ["/search", "Search"],
  ["/controls", "Controls"],
]

/** The frame of every page: navigation, the version switch, the content. */
export function layout(title: string, ctx: Pick<PageContext, "version">, current: string, body: Part): string {
  const link = (href: string, label: string) => html`<a href="${href}${query({ version: ctx.version })}"${href === current ? raw(' aria-current="page"') : ""}>${label}</a>`
  const versions = (["v1", "v2"] as const).map((v) => html`<a href="${current}${query({ version: v })}"${v === ctx.version ? raw(' aria-current="true"') : ""}>${v}</a>`)
  return `<!doctype html>
${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · codex memory</title><link rel="stylesheet" href="/assets/viewer.css"></head>
<body><a class="skip" href="#main">Skip to content</a><header><nav aria-label="Pages">${NAV.map(([href, label]) => link(href, label))}</nav><nav class="versions" aria-label="Memory version">Version: ${versions}</nav></header>
<main id="main"><h1>${title}</h1>${body}</main><footer>Local viewer of opencode-codex-memory: served on 127.0.0.1 only, to this browser only.</footer></body></html>`.html}
`
}

export function errorPage(ctx: Pick<PageContext, "version">, status: number, message: string): string {
  return layout(status === 404 ? "Not found" : "Something went wrong", ctx, "", html`<p class="error" role="alert">${message}</p>`)
}

// ---- Read pages ---------------------------------------------------------------------------

interface StatusJson {
  home: string
  learning: { held: boolean; reason?: string }
  versions: Array<{ version: Version; last_consolidation: string | null; cooldown_left_ms: number; waiting_to_be_forgotten: string[]; leases: Array<{ kind: string; key: string; lease_until: number | null; owner_pid: number | null; owner_alive: string }> }>
  report: {
    versions: Array<{ version: Version; selected: boolean; writes: boolean; counts?: { outputs: number; unconsolidated: number; forgetting: number; jobs: Array<{ kind: string; status: string; count: number }> }; summary?: { bytes: number; estimatedTokens: number; capped: boolean } }>
    spend?: { today: { tokens: number; cost: number; sessions: number }; byDay: Array<{ day: string; phase: string; tokens: number; cost: number; sessions: number }> }
    jobErrors?: Array<{ kind: string; job_key: string; status: string; last_error: string | null; version?: string }>
    projects?: Array<{ name: string; sessions: number; records: number }>
  }
}

export function overviewPage(ctx: PageContext, status: StatusJson, summaryCap: number): string {
  const column = (v: StatusJson["report"]["versions"][number]) => {
    const job = status.versions.find((x) => x.version === v.version)
    return html`<section class="card" aria-labelledby="v-${v.version}"><h2 id="v-${v.version}">${v.version}${v.selected ? " (read by new sessions)" : ""}${v.writes ? ", learning" : ""}</h2>
<dl>
<dt>Summary</dt><dd>${v.summary ? `${v.summary.estimatedTokens} of ${summaryCap} tokens${v.summary.capped ? " (cut in the middle when injected)" : ""}` : "none yet"}</dd>
<dt>Extracted sessions</dt><dd>${v.counts?.outputs ?? 0}</dd>
<dt>Waiting for a consolidation</dt><dd>${v.counts?.unconsolidated ?? 0} records, ${v.counts?.forgetting ?? 0} sessions to forget</dd>
<dt>Last consolidation</dt><dd>${job?.last_consolidation ?? "never"}</dd>
</dl>
<p><a href="/summary${query({ version: v.version })}">Summary</a> · <a href="/sessions${query({ version: v.version })}">Sessions</a></p></section>`
  }
  const spend = status.report.spend
  const projects = status.report.projects ?? []
  return layout("Overview", ctx, "/", [
    html`<p>Memory home: <code>${status.home}</code>. Learning is ${status.learning.held ? `held (${status.learning.reason ?? "paused"})` : "on"}.</p>`,
    html`<div class="columns">${status.report.versions.map(column)}</div>`,
    spend ? html`<p>Learning cost today (UTC): ${spend.today.tokens} tokens, ${spend.today.cost.toFixed(4)}, ${spend.today.sessions} helper sessions. <a href="/cost${query({ version: ctx.version })}">Per day</a></p>` : "",
    projects.length ? html`<h2>Projects</h2><ul>${projects.map((p) => html`<li>${p.name}: ${p.sessions} sessions, ${p.records} records</li>`)}</ul>` : "",
  ])
}

export function summaryPage(ctx: PageContext, view: { injected: boolean; block: string | null; summary_file: string }, stats: { bytes: number; estimatedTokens: number; capped: boolean } | undefined, cap: number): string {
  const size = stats ? html`<p>${stats.bytes} bytes, about ${stats.estimatedTokens} tokens of the ${cap} the read path injects${stats.capped ? "; the middle is cut when injected" : ""}.</p>` : ""
  const body = view.block === null ? html`<p>Nothing is injected yet: <code>${view.summary_file}</code> does not exist.</p>` : html`<p>Exactly what a conversation's model call gets, instructions and summary:</p><pre class="block">${view.block}</pre>`
  return layout(`Summary (${ctx.version})`, ctx, "/summary", [size, body])
}

export function markdownPage(ctx: PageContext, title: string, current: string, file: string, text: string | undefined, aside: Part = ""): string {
  const body = text === undefined ? html`<p><code>${file}</code> does not exist yet.</p>` : html`<p class="file"><code>${file}</code></p><article class="markdown">${raw(ctx.markdown(text))}</article>`
  return layout(title, ctx, current, [aside, body])
}

/** Skills by the name shown; `skill`, the folder to link, only where that name may be in a URL. */
export function skillsList(ctx: PageContext, skills: ReadonlyArray<{ label: string; skill?: string }>): Raw {
  if (!skills.length) return html``
  const item = (s: { label: string; skill?: string }) => (s.skill === undefined ? html`<li>${s.label} <small>(not linked: its folder name looks like a secret)</small></li>` : html`<li><a href="/memory${query({ version: ctx.version, skill: s.skill })}">${s.label}</a></li>`)
  return html`<nav class="skills" aria-label="Skills"><h2>Skills</h2><ul>${skills.map(item)}</ul></nav>`
}

interface SessionJson {
  session_id: string
  title: string | null
  project: { key: string; name: string } | null
  folder: string | null
  mode: string
  state: string
  updated_at: string | null
  eligible_at: string | null
  records: number
  error: string | null
}

export function sessionsPage(ctx: PageContext, data: { total: number; counts: Record<string, number>; sessions: SessionJson[] }): string {
  const groups = groupByProject(data.sessions, (s) => ({ project: s.project, folder: s.folder }))
  const counts = Object.entries(data.counts).map(([state, n]) => `${n} ${state.replace("_", " ")}`).join(", ")
  const table = (rows: SessionJson[]) => html`<table><thead><tr><th scope="col">Session</th><th scope="col">Title</th><th scope="col">Folder</th><th scope="col">Mode</th><th scope="col">State</th><th scope="col">Eligible</th></tr></thead><tbody>${rows.map(
    (s) => html`<tr><td><a href="/session${query({ version: ctx.version, id: s.session_id })}">${s.session_id}</a></td><td>${s.title ?? "—"}</td><td>${s.folder ?? "—"}</td><td>${s.mode}</td><td>${s.state.replace("_", " ")}${s.error ? html` <span class="error">${s.error}</span>` : ""}</td><td>${s.eligible_at ?? "—"}</td></tr>`,
  )}</tbody></table>`
  return layout(`Sessions (${ctx.version})`, ctx, "/sessions", [
    html`<p>${data.total} sessions: ${counts || "none yet"}.</p>`,
    groups.map((group) => html`<section><h2>${group.heading}</h2><div class="scroll">${table(group.items)}</div></section>`),
  ])
}

interface RecallJson {
  session_id: string
  mode: string
  reads_version: string | null
  /** By stage (transcript, answer...), then by class of secret. */
  redactions: Record<string, Record<string, number>>
  versions: Array<{ version: Version; records: Array<{ session_id: string; updated_at: string; rollout_summary: string; raw_memory: string; usage_count: number; last_usage: string | null; consolidated: boolean }>; jobs: Array<{ kind: string; key: string; status: string; last_error: string | null }>; last_consolidation: string | null }>
  /** What the session's replies cited (absent from an older CLI's answer). */
  cited?: Array<{ path: string; start_line: number; end_line: number; count: number; last_cited: string; heading: string | null }>
}

/** Skill folder names the file view opens (server.ts's SKILL_NAME). */
const CITED_SKILL = /^skills\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/SKILL\.md$/

/** The file view of a cited path, for the version the session reads, when the viewer has one for it. */
function citedHref(path: string, version: Version): string | undefined {
  if (path === "MEMORY.md" && version === "v1") return `/memory${query({ version })}`
  if (path === "memory_summary.md" && version === "v2") return `/memory${query({ version })}`
  const skill = CITED_SKILL.exec(path)?.[1]
  return skill ? `/memory${query({ version, skill })}` : undefined
}

function citedSection(recall: RecallJson, version: Version): Part {
  const cited = recall.cited ?? []
  if (!cited.length) return html`<h2>Cited memory</h2><p>No reply of this session cited memory.</p>`
  const items = cited.map((c) => {
    const href = citedHref(c.path, version)
    const where = `${c.path}:${c.start_line}-${c.end_line}`
    return html`<li>${href ? html`<a href="${href}">${where}</a>` : where}${c.heading ? html` <q>${c.heading}</q>` : ""}: cited ${c.count} ${c.count === 1 ? "time" : "times"}, last ${c.last_cited}</li>`
  })
  return html`<h2>Cited memory</h2><p>What this session's replies cited, most recent first.</p><ul class="cited">${items}</ul>`
}

export function sessionPage(ctx: PageContext, recall: RecallJson): string {
  const id = recall.session_id
  const versions = recall.versions.map(
    (v) => html`<section><h2>${v.version}</h2>${v.records.length ? "" : html`<p>No record.</p>`}${v.records.map(
      (r) => html`<article class="record"><h3>${r.session_id} <small>${r.updated_at}, cited ${r.usage_count} times${r.last_usage ? ` (last ${r.last_usage})` : ""}${r.consolidated ? ", consolidated" : ", not consolidated yet"}</small></h3>
<h4>Rollout summary</h4><div class="markdown">${raw(ctx.markdown(r.rollout_summary))}</div>${r.raw_memory ? html`<h4>Raw memory</h4><div class="markdown">${raw(ctx.markdown(r.raw_memory))}</div>` : ""}</article>`,
    )}${v.jobs.length ? html`<h3>Jobs</h3><ul>${v.jobs.map((j) => html`<li>${j.kind} ${j.key}: ${j.status}${j.last_error ? html` <span class="error">${j.last_error}</span>` : ""}</li>`)}</ul>` : ""}</section>`,
  )
  const stages = Object.entries(recall.redactions)
  const redactions = stages.length
    ? html`<dl>${stages.map(([stage, counts]) => html`<dt>${stage}</dt><dd>${Object.entries(counts).map(([kind, n]) => `${kind} ×${n}`).join(", ")}</dd>`)}</dl>`
    : html`<p>Nothing was redacted from it.</p>`
  return layout(`Session ${id}`, ctx, "/sessions", [
    html`<p>Mode: ${recall.mode}${recall.reads_version ? `; reads memory ${recall.reads_version}` : ""}.</p>`,
    html`<p class="actions"><a class="button" href="/action/forget${query({ version: ctx.version, session: id })}">Forget what was learned from it</a> <a class="button" href="/action/mode${query({ version: ctx.version, session: id, mode: "disabled" })}">Keep it out of memory</a> <a class="button" href="/action/mode${query({ version: ctx.version, session: id, mode: "enabled" })}">Let it back in</a></p>`,
    versions,
    citedSection(recall, recall.reads_version === "v1" || recall.reads_version === "v2" ? recall.reads_version : ctx.version),
    html`<h2>Secrets kept out of it</h2>${redactions}`,
  ])
}

export function historyPage(ctx: PageContext, reviews: ReadonlyArray<{ finishedAt: number; summary: { inputsAdded: string[]; inputsRemoved: string[]; notes: string[]; changed: string[]; sessions: number }; diff: string }>): string {
  const list = (label: string, items: readonly string[]) => html`<dt>${label}</dt><dd>${items.length ? items.join(", ") : "none"}</dd>`
  return layout(`Consolidations (${ctx.version})`, ctx, "/history", [
    reviews.length ? "" : html`<p>No consolidation has been reviewed yet.</p>`,
    reviews.map(
      (r) => html`<section><h2>${new Date(r.finishedAt).toISOString()}: ${r.summary.sessions} sessions</h2><dl>${list("Inputs added", r.summary.inputsAdded)}${list("Sessions forgotten", r.summary.inputsRemoved)}${list("Notes folded in", r.summary.notes)}${list("Files changed", r.summary.changed)}</dl><details><summary>The diff (redacted)</summary><pre class="diff">${r.diff}</pre></details></section>`,
    ),
  ])
}

/** Tokens per UTC day as bars drawn in SVG: no script, nothing loaded. */
export function costPage(ctx: PageContext, byDay: ReadonlyArray<{ day: string; phase: string; tokens: number; cost: number; sessions: number }>): string {
  const days = [...new Set(byDay.map((row) => row.day))].sort()
  const totals = days.map((day) => ({ day, extraction: sum(byDay, day, "extraction"), consolidation: sum(byDay, day, "consolidation"), cost: byDay.filter((r) => r.day === day).reduce((n, r) => n + r.cost, 0) }))
  const max = Math.max(1, ...totals.map((t) => t.extraction + t.consolidation))
  const width = 640
  const barWidth = days.length ? Math.max(8, Math.floor((width - 40) / days.length) - 6) : 0
  const bars = totals.map((t, i) => {
    const x = 40 + i * (barWidth + 6)
    const h1 = Math.round((t.extraction / max) * 180)
    const h2 = Math.round((t.consolidation / max) * 180)
    return html`<g><title>${t.day}: ${t.extraction} tokens extracting, ${t.consolidation} consolidating</title><rect class="extraction" x="${x}" y="${200 - h1}" width="${barWidth}" height="${h1}"></rect><rect class="consolidation" x="${x}" y="${200 - h1 - h2}" width="${barWidth}" height="${h2}"></rect></g>`
  })
  const chart = days.length
    ? html`<figure><svg viewBox="0 0 ${width} 220" role="img" aria-label="Tokens per day, extraction and consolidation"><line x1="36" y1="200" x2="${width}" y2="200" class="axis"></line><text x="0" y="14" class="label">${max}</text><text x="0" y="200" class="label">0</text>${bars}</svg><figcaption><span class="key extraction"></span> extraction <span class="key consolidation"></span> consolidation (tokens per UTC day)</figcaption></figure>`
    : html`<p>Nothing spent yet.</p>`
  return layout("What learning cost", ctx, "/cost", [
    chart,
    html`<div class="scroll"><table><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Extraction tokens</th><th scope="col">Consolidation tokens</th><th scope="col">Cost</th></tr></thead><tbody>${totals.map((t) => html`<tr><td>${t.day}</td><td>${t.extraction}</td><td>${t.consolidation}</td><td>${t.cost.toFixed(4)}</td></tr>`)}</tbody></table></div>`,
  ])
}

function sum(rows: ReadonlyArray<{ day: string; phase: string; tokens: number }>, day: string, phase: string): number {
  return rows.filter((r) => r.day === day && r.phase === phase).reduce((n, r) => n + r.tokens, 0)
}

export function jobsPage(ctx: PageContext, status: StatusJson): string {
  const versions = status.report.versions.map((v) => {
    const leases = status.versions.find((x) => x.version === v.version)?.leases ?? []
    return html`<section><h2>${v.version}</h2><h3>Jobs</h3><ul>${(v.counts?.jobs ?? []).map((j) => html`<li>${j.kind}: ${j.count} ${j.status}</li>`)}</ul><h3>Leases</h3>${leases.length ? html`<ul>${leases.map((l) => html`<li>${l.kind} ${l.key}: until ${l.lease_until ? new Date(l.lease_until).toISOString() : "?"}, owner ${l.owner_pid ?? "?"} (alive: ${l.owner_alive})</li>`)}</ul>` : html`<p>None.</p>`}</section>`
  })
  const errors = status.report.jobErrors ?? []
  return layout("Jobs and leases", ctx, "/jobs", [html`<div class="columns">${versions}</div>`, errors.length ? html`<h2>Recent failures</h2><ul>${errors.map((e) => html`<li>${e.version ?? ""} ${e.kind} ${e.job_key}: <span class="error">${e.last_error ?? ""}</span></li>`)}</ul>` : ""])
}

export interface SearchView {
  q: string
  mode: string
  results?: Array<{ where: string; href?: string; score?: number; text: string }>
  error?: string
}

export function searchPage(ctx: PageContext, view: SearchView): string {
  const modes = ["ranked", "any", "all_on_same_line", "all_within_lines"]
  const form = html`<form method="get" action="/search" role="search"><input type="hidden" name="version" value="${ctx.version}"><label for="q">Search memory</label> <input id="q" name="q" type="search" value="${view.q}" required> <label for="mode">Mode</label> <select id="mode" name="mode">${modes.map((m) => html`<option value="${m}"${m === view.mode ? raw(" selected") : ""}>${m}</option>`)}</select> <button type="submit">Search</button></form>`
  const results = view.error
    ? html`<p class="error" role="alert">${view.error}</p>`
    : view.results === undefined
      ? ""
      : view.results.length
        ? html`<ol class="results">${view.results.map((r) => html`<li><p>${r.href ? html`<a href="${r.href}">${r.where}</a>` : r.where}${r.score !== undefined ? html` <small>score ${r.score}</small>` : ""}</p><pre>${r.text}</pre></li>`)}</ol>`
        : html`<p>No matches.</p>`
  return layout(`Search (${ctx.version})`, ctx, "/search", [form, results])
}

export function controlsPage(ctx: PageContext, state: { paused: boolean; notes: ReadonlyArray<{ path: string; title: string }> }): string {
  return layout("Controls", ctx, "/controls", [
    html`<section><h2>Learning</h2><p>Background learning is ${state.paused ? "paused" : "on"} in every OpenCode window.</p><p><a class="button" href="/action/${state.paused ? "resume" : "pause"}${query({ version: ctx.version })}">${state.paused ? "Resume learning" : "Pause learning"}</a></p></section>`,
    html`<section><h2>Notes (${ctx.version})</h2>${state.notes.length ? html`<ul>${state.notes.map((n) => html`<li>${n.title} <small><code>${n.path}</code></small> <a href="/action/delete-note${query({ version: ctx.version, path: n.path })}">Delete…</a></li>`)}</ul>` : html`<p>No notes.</p>`}</section>`,
    html`<section><h2>Reset</h2><p><a class="button danger" href="/action/reset${query({ version: ctx.version })}">Erase everything learned…</a></p></section>`,
  ])
}

/** A change, shown before it is made, with the form that makes it (its token bound to this preview). */
export function previewPage(ctx: PageContext, preview: { title: string; action: string; params: Readonly<Record<string, string>>; lines: readonly Part[]; token: string; danger?: boolean }): string {
  const hidden = Object.entries(preview.params).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  return layout(preview.title, ctx, "/controls", [
    html`<section class="preview"><h2>What will change</h2><ul>${preview.lines.map((line) => html`<li>${line}</li>`)}</ul></section>`,
    html`<form method="post" action="/action/${preview.action}"><input type="hidden" name="token" value="${preview.token}"><input type="hidden" name="version" value="${ctx.version}">${hidden}<button type="submit" class="${preview.danger ? "danger" : ""}">${preview.title}</button> <a href="/controls${query({ version: ctx.version })}">Cancel</a></form>`,
  ])
}

export function donePage(ctx: PageContext, title: string, message: string, ok: boolean): string {
  return layout(title, ctx, "/controls", html`<p class="${ok ? "done" : "error"}" role="${ok ? "status" : "alert"}">${message}</p><p><a href="/${query({ version: ctx.version })}">Back to the overview</a></p>`)
}
