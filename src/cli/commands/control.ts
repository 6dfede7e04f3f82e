// pause, resume, mode and reset: the controls, from the command line. Pause and resume are a
// setting in memory.db that every OpenCode instance reads at the start of each background pass.
import type { MemoryMode } from "../../store/memory-store.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"

function pauseCommand(paused: boolean): Command {
  return {
    name: paused ? "pause" : "resume",
    usage: `${paused ? "pause" : "resume"} [--home DIR]`,
    summary: paused ? "pause background learning in every OpenCode instance (within one pass)" : "let background learning go on",
    flags: {},
    positionals: { min: 0, max: 0 },
    async run({ cli, args }) {
      return withHome(cli, args.values.home as string | undefined, async (home) => {
        const settings = home.memory.catalog.settings!
        const was = settings.setPaused(paused)
        const since = settings.pausedSince()
        return {
          json: { paused, changed: was !== paused, ...(since !== undefined ? { paused_since: new Date(since).toISOString() } : {}) },
          text: paused ? (was ? "learning was already paused" : "learning paused; running OpenCode instances stop starting work at their next pass") : was ? "learning resumed" : "learning was not paused",
        }
      }, { create: true })
    },
  }
}

export const pause = pauseCommand(true)
export const resume = pauseCommand(false)

export const modeCommand: Command = {
  name: "mode",
  usage: "mode SESSION_ID enabled|disabled [--home DIR]",
  summary: "let a session into memory, or keep it out",
  flags: {},
  positionals: { min: 2, max: 2 },
  async run({ cli, args }) {
    const [sessionId, mode] = args.positionals as [string, string]
    if (mode !== "enabled" && mode !== "disabled") throw new CliError("usage", `mode must be enabled or disabled; got ${JSON.stringify(mode)}`)
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const { previous } = home.memory.controls.setMode(sessionId, mode as MemoryMode)
      return { json: { session_id: sessionId, previous, mode }, text: previous === mode ? `${sessionId} stays ${mode}` : `${sessionId}: ${previous} -> ${mode}` }
    })
  },
}

export const resetCommand: Command = {
  name: "reset",
  usage: "reset --yes [--home DIR]",
  summary: "erase everything learned (refused while a consolidation runs)",
  flags: { yes: { type: "boolean" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    if (!args.values.yes) throw new CliError("usage", "reset erases every memory; confirm with --yes")
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const report = await home.memory.controls.reset()
      if (report.type === "refused") throw new CliError("consolidation_running", report.reason)
      return { json: { reset: true, outputs: report.outputs, jobs: report.jobs, files: report.files }, text: `memory erased: ${report.outputs} records, ${report.jobs} jobs, ${report.files} folder entries` }
    })
  },
}
