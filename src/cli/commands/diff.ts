// diff --last (what the last consolidation changed, and why) and diff --pending (what the next
// one would be shown). Both redacted.
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"
import { versionFlag } from "./records.js"

export const diffCommand: Command = {
  name: "diff",
  usage: "diff --last | --pending [--version v1|v2] [--home DIR] [--text]",
  summary: "what the last consolidation changed, or what the next one will see",
  flags: { last: { type: "boolean" }, pending: { type: "boolean" }, version: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    const { last, pending } = args.values
    if (Boolean(last) === Boolean(pending)) throw new CliError("usage", "give exactly one of --last or --pending")
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const version = versionFlag(args.values.version, home.memory.options.version)
      if (last) {
        const review = home.memory.catalog.reviews?.list(1, version)[0]
        if (!review) return { json: { version, last: null }, text: `no consolidation of ${version} has been reviewed yet` }
        const json = { version, last: { finished_at: new Date(review.finishedAt).toISOString(), ...review.summary, diff: review.diff } }
        const list = (label: string, items: readonly string[]) => `${label}: ${items.length ? items.join(", ") : "none"}`
        const text = [
          `last consolidation of ${version}: ${json.last.finished_at}, ${review.summary.sessions} sessions`,
          list("inputs added", review.summary.inputsAdded),
          list("sessions forgotten", review.summary.inputsRemoved),
          list("notes folded in", review.summary.notes),
          list("changed", review.summary.changed),
          "",
          review.diff,
        ].join("\n")
        return { json, text }
      }
      const next = await home.memory.pipeline(version).pendingDiff()
      if (!next) throw new CliError("no_home", `memory ${version} has no database in ${home.paths.home}`)
      return { json: { version, pending: { changes: next.changes, diff: next.text } }, text: next.text }
    })
  },
}
