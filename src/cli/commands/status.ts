// status: the same report as memory_inspect, plus the leases with their owners and whether each
// owner is alive, and how long phase 2's cooldown has left. Read-only.
import { JOBS } from "../../constants.js"
import { leaseOwners } from "../../store/lease-owner.js"
import type { Command } from "../command.js"
import { withHome } from "../home.js"

export const statusCommand: Command = {
  name: "status",
  usage: "status [--home DIR] [--text]",
  summary: "counts, jobs and leases, last consolidation, cooldown, spend, readiness, warnings",
  flags: {},
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const { memory } = home
      const now = (cli.now ?? Date.now)()
      const owners = leaseOwners()
      const report = memory.controls.inspect()
      const hold = memory.learningHold()
      const versions = [...memory.pipelines.values()].map((pipeline) => {
        const store = pipeline.store()
        const phase2 = store?.phase2Job()
        const lastSuccess = phase2?.last_success_at ?? undefined
        // Sessions waiting to be forgotten let the next consolidation come minutes after the last.
        const forgetting = pipeline.writes ? (store?.forgetQueue() ?? []) : []
        const wait = forgetting.length ? JOBS.FORGET_INTERVAL_MS : JOBS.PHASE2_COOLDOWN_MS
        return {
          version: pipeline.version,
          leases: (store?.runningJobs() ?? []).map((job) => ({
            kind: job.kind,
            key: job.job_key,
            lease_until: job.lease_until,
            owner_pid: job.owner_pid ?? null,
            // Only an owner on this machine can be checked; others are "unknown".
            owner_alive: job.owner_pid == null ? "unknown" : owners.isGone(job.owner_pid, job.owner_boot) ? "no" : job.owner_boot === owners.self.boot ? "yes" : "unknown",
          })),
          last_consolidation: lastSuccess ? new Date(lastSuccess).toISOString() : null,
          cooldown_left_ms: lastSuccess ? Math.max(0, lastSuccess + wait - now) : 0,
          waiting_to_be_forgotten: forgetting,
        }
      })
      const json = {
        home: home.paths.home,
        home_source: home.paths.homeSource,
        // Held for any reason (the pause, the daily budget); paused says whether the user paused it.
        learning: { ...(hold ? { held: true, reason: hold } : { held: false }), paused: memory.catalog.settings?.pausedSince() !== undefined },
        kept_out: memory.controls.keptOut().map((entry) => ({ session_id: entry.sessionId, mode: entry.mode, since: new Date(entry.since).toISOString() })),
        versions,
        // Opened by any process sharing the home, as recorded in memory.db.
        rate_limit_breakers: (memory.catalog.settings?.openBreakers() ?? []).map((b) => ({ scope: b.scope, until: new Date(b.until).toISOString(), reason: b.reason })),
        report: report.data,
      }
      const leaseLines = versions.flatMap((v) => v.leases.map((l) => `- ${v.version} ${l.kind} ${l.key}: until ${l.lease_until ? new Date(l.lease_until).toISOString() : "?"}, owner ${l.owner_pid ?? "?"} (alive: ${l.owner_alive})`))
      const breakerLines = json.rate_limit_breakers.map((b) => `- ${b.scope}: paused until ${b.until} (${b.reason})`)
      const text = [report.text, "", "## Leases", ...(leaseLines.length ? leaseLines : ["none"]), "", "## Paused models (every process)", ...(breakerLines.length ? breakerLines : ["none"]), "", ...versions.map((v) => `${v.version} cooldown left: ${Math.ceil(v.cooldown_left_ms / 60_000)} min`)].join("\n")
      return { json, text }
    })
  },
}
