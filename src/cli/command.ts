// What every command is: its name, usage line, flags and positionals, and a run that returns one
// JSON value (and, where a person reads it better, a text layout for --text).
import type { FlagSpec, Parsed } from "./args.js"
import type { CliEnv } from "./home.js"

export interface CommandContext {
  cli: CliEnv
  args: Parsed
  /** A file the command reads, at most MAX_INPUT_BYTES ("-" is standard input). */
  readInput(file: string): Promise<Buffer>
}

export interface CommandResult {
  json: unknown
  text?: string
  /** Non-zero for an answer that is itself a failure (doctor with a failed check). */
  exit?: number
}

export interface Command {
  name: string
  usage: string
  summary: string
  flags: FlagSpec
  positionals: { min: number; max: number }
  run(ctx: CommandContext): Promise<CommandResult>
}

/** Inputs larger than this are refused: archives and queries are far smaller. */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024
