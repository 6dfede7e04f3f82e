// pause, resume, mode and reset: the controls, from the command line. Pause and resume are a
// setting in memory.db that every OpenCode instance reads at the start of each background pass.
import { MemoryError } from "../../backend/errors.js"
import type { MemoryMode } from "../../store/memory-store.js"
import type { Parsed } from "../args.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { locateHome, withHome, type CliEnv } from "../home.js"
import { opencodeHasSession } from "../opencode-sessions.js"

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

/** The checks `mode` and `forget` make of a session id memory knows nothing of: OpenCode is asked. */
function sessionCheck(cli: CliEnv, args: Parsed, env: Readonly<Record<string, string | undefined>>) {
  const binary = (args.values.opencode as string | undefined) ?? "opencode"
  return (sessionId: string) => opencodeHasSession(sessionId, { binary, env, homedir: cli.homedir })
}

/** A session the core refused (unknown to memory and to OpenCode) is the caller's mistake: exit 1. */
async function checked<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof MemoryError && error.kind === "unknown_session") throw new CliError("unknown_session", error.message)
    throw error
  }
}

export const modeCommand: Command = {
  name: "mode",
  usage: "mode SESSION_ID enabled|disabled [--opencode PATH] [--home DIR]",
  summary: "let a session into memory, or keep it out (and forget what was learned from it)",
  flags: { opencode: { type: "string" } },
  positionals: { min: 2, max: 2 },
  async run({ cli, args }) {
    const [sessionId, mode] = args.positionals as [string, string]
    if (mode !== "enabled" && mode !== "disabled") throw new CliError("usage", `mode must be enabled or disabled; got ${JSON.stringify(mode)}`)
    const target = locateHome(cli, args.values.home as string | undefined)
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const { previous, forgotten } = await checked(() => home.memory.controls.setMode(sessionId, mode as MemoryMode))
      const waiting = forgotten?.queued.length ? `; the next consolidation removes it from ${forgotten.queued.join(" and ")} within minutes` : ""
      const learned = mode === "disabled" ? (forgotten?.versions.length ? `; forgot what was learned from it${waiting}` : "; nothing had been learned from it") : ""
      return {
        json: { session_id: sessionId, previous, mode, forgotten_from: forgotten?.versions ?? [], forgetting_queued: forgotten?.queued ?? [] },
        text: `${previous === mode ? `${sessionId} stays ${mode}` : `${sessionId}: ${previous} -> ${mode}`}${learned}`,
      }
    }, { sessionExists: sessionCheck(cli, args, target.env) })
  },
}

export const forgetCommand: Command = {
  name: "forget",
  usage: "forget SESSION_ID [--opencode PATH] [--home DIR]",
  summary: "forget what was learned from a session; only what it says from now on is learned",
  flags: { opencode: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run({ cli, args }) {
    const [sessionId] = args.positionals as [string]
    const target = locateHome(cli, args.values.home as string | undefined)
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const report = await checked(() => home.memory.controls.forget(sessionId))
      const waiting = report.queued.length ? `; the next consolidation removes it from ${report.queued.join(" and ")} within minutes (status shows it until then)` : ""
      return {
        json: { session_id: sessionId, forgotten_from: report.versions, forgetting_queued: report.queued },
        text: `${report.versions.length ? `forgot what was learned from ${sessionId}` : `nothing had been learned from ${sessionId}`}${waiting}; what it says from now on can be learned again (\`mode ${sessionId} disabled\` keeps it out for good)`,
      }
    }, { sessionExists: sessionCheck(cli, args, target.env) })
  },
}

export const modesCommand: Command = {
  name: "modes",
  usage: "modes [--home DIR] [--text]",
  summary: "list the sessions kept out of memory (disabled or polluted)",
  flags: {},
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const sessions = home.memory.controls.keptOut().map((entry) => ({ session_id: entry.sessionId, mode: entry.mode, since: new Date(entry.since).toISOString() }))
      return {
        json: { sessions },
        text: sessions.length ? sessions.map((entry) => `${entry.session_id}  ${entry.mode}  since ${entry.since}`).join("\n") : "no session is kept out of memory",
      }
    })
  },
}

/** What a reset keeps (control/reset.ts): the user's choices and records that hold no learned text. */
const RESET_KEEPS = ["session modes", "version stamps", "forget times", "the pause", "the spend ledger", "the redaction counts"]

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
      return {
        json: { reset: true, outputs: report.outputs, jobs: report.jobs, files: report.files, checkpoints: report.checkpoints, kept: RESET_KEEPS },
        text: `memory erased: ${report.outputs} records, ${report.jobs} jobs, ${report.checkpoints} checkpoints, ${report.files} folder entries; only what is said from now on is learned. Kept: ${RESET_KEEPS.join(", ")}`,
      }
    })
  },
}
