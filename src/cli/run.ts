// The command-line tool: one JSON value on stdout per command (`--text` for a person), diagnostics
// on stderr, an exit code that means something (errors.ts), and a stable error shape
// `{ "error": { "code", "message" } }`. No network: it works on the memory home alone.
import fs from "node:fs"
import path from "node:path"
import { packageRoot } from "../util/package-root.js"
import { GLOBAL_FLAGS, parseCommand } from "./args.js"
import { MAX_INPUT_BYTES, type Command } from "./command.js"
import { exportCommand, importCommand } from "./commands/archive.js"
import { forgetCommand, modeCommand, modesCommand, pause, resetCommand, resume } from "./commands/control.js"
import { diffCommand } from "./commands/diff.js"
import { doctorCommand } from "./commands/doctor.js"
import { capabilitiesCommand, checkCompatibilityCommand } from "./commands/info.js"
import { recallCommand, viewCommand } from "./commands/records.js"
import { notesCommand } from "./commands/notes.js"
import { searchCommand } from "./commands/search.js"
import { sessionsCommand } from "./commands/sessions.js"
import { statusCommand } from "./commands/status.js"
import { uiCommand } from "./commands/ui.js"
import { corruptionReason } from "../store/recovery.js"
import { NoSqliteDriverError } from "../store/sqlite.js"
import { CliError, EXIT } from "./errors.js"
import { nearest } from "../util/nearest.js"
import type { CliEnv } from "./home.js"

export const COMMANDS: readonly Command[] = [
  capabilitiesCommand,
  checkCompatibilityCommand,
  statusCommand,
  sessionsCommand,
  viewCommand,
  recallCommand,
  searchCommand,
  diffCommand,
  pause,
  resume,
  modeCommand,
  modesCommand,
  forgetCommand,
  notesCommand,
  resetCommand,
  exportCommand,
  importCommand,
  doctorCommand,
  uiCommand,
]

export interface CliIo extends CliEnv {
  stdout: (text: string) => void
  stderr: (text: string) => void
  stdin?: () => Promise<Buffer>
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const text = argv.includes("--text")
  const emit = (value: unknown, human?: string) => io.stdout(`${text && human !== undefined ? human : JSON.stringify(value, null, text ? 2 : undefined)}\n`)
  try {
    const [name, ...rest] = argv
    // Help is for people: text, unless --json asks for the listing a script reads.
    const json = argv.includes("--json")
    if (name === undefined || name === "--help" || name === "-h" || (name === "help" && rest.filter((arg) => arg !== "--json").length === 0)) {
      io.stdout(`${json ? JSON.stringify({ commands: COMMANDS.map((c) => ({ name: c.name, usage: c.usage, summary: c.summary, flags: flagNames(c) })) }) : usage()}\n`)
      return EXIT.OK
    }
    if (name === "--version" || name === "-V" || name === "version") {
      const version = packageVersion(io.packageDir)
      io.stdout(`${json ? JSON.stringify({ version }) : `opencode-codex-memory ${version}`}\n`)
      return EXIT.OK
    }
    const asked = name === "help" ? rest.find((arg) => !arg.startsWith("-"))! : name
    const command = COMMANDS.find((c) => c.name === asked)
    if (!command) {
      const near = nearest(asked, COMMANDS.map((c) => c.name))
      throw new CliError("unknown_command", `unknown command ${JSON.stringify(asked)}${near ? `; did you mean \`${near}\`?` : ""} Run \`opencode-codex-memory help\` for the list`)
    }
    const args = parseCommand(name === "help" ? ["--help"] : rest, command.flags, { ...command.positionals, usage: command.usage })
    if (args.values.help) {
      io.stdout(`${json ? JSON.stringify({ name: command.name, usage: command.usage, summary: command.summary, flags: flagNames(command) }) : commandHelp(command)}\n`)
      return EXIT.OK
    }
    const result = await command.run({ cli: io, args, readInput: (file) => readInput(file, io) })
    emit(result.json, result.text)
    return result.exit ?? EXIT.OK
  } catch (error) {
    const failure = error instanceof CliError ? error : error instanceof NoSqliteDriverError ? new CliError("no_sqlite_driver", error.message) : damaged(error) ?? new CliError("io", (error as Error)?.message ?? String(error))
    io.stderr(`opencode-codex-memory: ${failure.message}\n`)
    io.stdout(`${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n`)
    return failure.exitCode
  }
}

/**
 * A database found damaged during a command, past the header and schema the open checked
 * (home.ts): reported as the open would have, and left where it is.
 */
function damaged(error: unknown): CliError | undefined {
  const reason = corruptionReason(error)
  if (reason === undefined) return undefined
  return new CliError("corrupt_database", `a memory database is damaged (${reason}); run \`opencode-codex-memory doctor\`. OpenCode with the plugin moves a damaged database aside and starts a new one`)
}

async function readInput(file: string, io: CliIo): Promise<Buffer> {
  if (file === "-") {
    const data = io.stdin ? await io.stdin() : Buffer.alloc(0)
    if (data.length > MAX_INPUT_BYTES) throw new CliError("input_too_large", `standard input is larger than ${MAX_INPUT_BYTES} bytes`)
    return data
  }
  let size: number
  try {
    size = fs.statSync(file).size
  } catch (error) {
    throw new CliError("not_found", `${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`)
  }
  if (size > MAX_INPUT_BYTES) throw new CliError("input_too_large", `${file} is ${size} bytes; inputs are limited to ${MAX_INPUT_BYTES} bytes`)
  return fs.readFileSync(file)
}

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length))
  return [
    "usage: opencode-codex-memory COMMAND [options]",
    "",
    "Long-term memory for OpenCode: look at it, control it, carry it. Answers are JSON on stdout;",
    "add --text for a layout for people. --home DIR picks the memory home (default: as the plugin finds it).",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "opencode-codex-memory help COMMAND   a command's usage and flags",
    "opencode-codex-memory --version      the installed version",
    "",
    "exit codes: 0 ok, 1 refused or failed, 2 bad usage, 3 bad data",
  ].join("\n")
}

function commandHelp(command: Command): string {
  const flags = flagNames(command)
  return [`usage: opencode-codex-memory ${command.usage}`, "", command.summary, "", `flags: ${flags.join(", ")}`].join("\n")
}

/** Every flag a command takes, the global ones included. */
function flagNames(command: Command): string[] {
  return Object.entries({ ...command.flags, ...GLOBAL_FLAGS }).map(([flag, spec]) => `--${flag}${spec.type === "string" ? " VALUE" : ""}`)
}

function packageVersion(packageDir: string | undefined): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(packageDir ?? packageRoot(), "package.json"), "utf8")) as { version: string }).version
  } catch {
    return "unknown"
  }
}

