// sessions: every session memory knows, with its title, project, folder, mode, state in one memory
// version and when it becomes eligible for learning, grouped by project. Read-only; the list comes from the session catalog
// the plugin keeps from OpenCode's listings, and from what each version holds.
import { groupByProject, type SessionListing, type SessionState } from "../../control/session-list.js"
import { intFlag } from "../args.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"
import { versionFlag } from "./records.js"

const STATES: readonly SessionState[] = ["waiting", "extracting", "retrying", "failed", "extracted", "consolidated", "nothing_learned", "forgetting", "forgotten", "off", "too_old", "before_reset"]
const PAGE_DEFAULT = 50
const PAGE_MAX = 1_000

export const sessionsCommand: Command = {
  name: "sessions",
  usage: "sessions [--state STATE] [--limit N] [--offset N] [--version v1|v2] [--home DIR] [--text]",
  summary: "every session memory knows, by project: title, folder, mode, state, and when it becomes eligible",
  flags: { state: { type: "string" }, limit: { type: "string" }, offset: { type: "string" }, version: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    const v = args.values
    const limit = intFlag(v.limit, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    const offset = intFlag(v.offset, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
    const state = v.state === undefined ? undefined : STATES.find((s) => s === v.state)
    if (v.state !== undefined && !state) throw new CliError("usage", `--state must be one of ${STATES.join(", ")}; got ${JSON.stringify(v.state)}`)
    return withHome(cli, v.home as string | undefined, async (home) => {
      const version = versionFlag(v.version, home.memory.options.version)
      const now = (cli.now ?? Date.now)()
      const all = home.memory.controls.sessions(version)
      const counts: Partial<Record<SessionState, number>> = {}
      for (const s of all) counts[s.state] = (counts[s.state] ?? 0) + 1
      const chosen = state ? all.filter((s) => s.state === state) : all
      const page = chosen.slice(offset, offset + limit)
      const next = chosen.length > offset + limit ? offset + limit : null
      const json = { version, total: chosen.length, counts, offset, limit, sessions: page.map(sessionJson), next_offset: next }
      return { json, text: renderSessions(page, counts, now, next) }
    })
  },
}

function sessionJson(s: SessionListing) {
  return {
    session_id: s.sessionId,
    title: s.title ?? null,
    project: s.project ?? null,
    folder: s.directory ?? null,
    mode: s.mode,
    state: s.state,
    updated_at: iso(s.updatedAt),
    eligible_at: iso(s.eligibleAt),
    records: s.records,
    error: s.error ?? null,
  }
}

/**
 * One block per project (a repository's checkouts, worktrees and subfolders are one), a line per
 * session: what a person scans for "when will this be learned". A session's folder is shown where
 * its project spans more than one.
 */
export function renderSessions(sessions: readonly SessionListing[], counts: Partial<Record<SessionState, number>>, now: number, next: number | null): string {
  if (sessions.length === 0) return "no sessions known yet: the plugin lists OpenCode's sessions at its first learning pass"
  const lines = [Object.entries(counts).map(([state, n]) => `${n} ${state.replace("_", " ")}`).join(", ")]
  for (const group of groupByProject(sessions, (s) => ({ project: s.project, folder: s.directory }))) {
    lines.push("", `## ${group.heading}`)
    for (const s of group.items) {
      const folder = group.folders > 1 && s.directory ? ` in ${s.directory}` : ""
      lines.push(`- ${s.sessionId} ${describe(s, now)}${s.title ? ` ${JSON.stringify(s.title)}` : ""}${folder}`)
    }
  }
  if (next !== null) lines.push("", `(more: --offset ${next})`)
  return lines.join("\n")
}

function describe(s: SessionListing, now: number): string {
  const mode = s.mode === "enabled" ? "" : ` (mode ${s.mode})`
  const when = s.eligibleAt === undefined ? "" : s.eligibleAt > now ? `, eligible ${iso(s.eligibleAt)}` : ", due at the next pass"
  const error = s.error ? `: ${s.error.length > 120 ? `${s.error.slice(0, 119)}…` : s.error}` : ""
  return `${s.state.replace("_", " ")}${when}${mode}${error}`
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString()
}
