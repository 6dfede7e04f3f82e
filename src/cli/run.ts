// The command-line tool: one JSON value on stdout per command (`--text` for a person), diagnostics
// on stderr, an exit code that means something (errors.ts), and a stable error shape
// `{ "error": { "code", "message" } }`. No network: it works on the memory home alone.
import fs from "node:fs"
import { parseCommand } from "./args.js"
import { MAX_INPUT_BYTES, type Command } from "./command.js"
import { exportCommand, importCommand } from "./commands/archive.js"
import { forgetCommand, modeCommand, modesCommand, pause, resetCommand, resume } from "./commands/control.js"
import { diffCommand } from "./commands/diff.js"
import { doctorCommand } from "./commands/doctor.js"
import { capabilitiesCommand, checkCompatibilityCommand } from "./commands/info.js"
import { recallCommand, viewCommand } from "./commands/records.js"
import { searchCommand } from "./commands/search.js"
import { statusCommand } from "./commands/status.js"
import { NoSqliteDriverError } from "../store/sqlite.js"
import { CliError, EXIT } from "./errors.js"
import type { CliEnv } from "./home.js"

export const COMMANDS: readonly Command[] = [
  capabilitiesCommand,
  checkCompatibilityCommand,
  statusCommand,
  viewCommand,
  recallCommand,
  searchCommand,
  diffCommand,
  pause,
  resume,
  modeCommand,
  modesCommand,
  forgetCommand,
  resetCommand,
  exportCommand,
  importCommand,
  doctorCommand,
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
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
      emit({ commands: COMMANDS.map((c) => ({ name: c.name, usage: c.usage, summary: c.summary })) }, usage())
      return EXIT.OK
    }
    const command = COMMANDS.find((c) => c.name === name)
    if (!command) throw new CliError("unknown_command", `unknown command ${JSON.stringify(name)}; run \`opencode-codex-memory help\` for the list`)
    const args = parseCommand(rest, command.flags, { ...command.positionals, usage: command.usage })
    if (args.values.help) {
      emit({ name: command.name, usage: command.usage, summary: command.summary }, `usage: opencode-codex-memory ${command.usage}\n${command.summary}`)
      return EXIT.OK
    }
    const result = await command.run({ cli: io, args, readInput: (file) => readInput(file, io) })
    emit(result.json, result.text)
    return result.exit ?? EXIT.OK
  } catch (error) {
    const failure = error instanceof CliError ? error : error instanceof NoSqliteDriverError ? new CliError("no_sqlite_driver", error.message) : new CliError("io", (error as Error)?.message ?? String(error))
    io.stderr(`opencode-codex-memory: ${failure.message}\n`)
    io.stdout(`${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n`)
    return failure.exitCode
  }
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
    "usage: opencode-codex-memory COMMAND [options]   (JSON on stdout; --text for people; --home DIR)",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "exit codes: 0 ok, 1 refused or failed, 2 bad usage, 3 bad data",
  ].join("\n")
}
