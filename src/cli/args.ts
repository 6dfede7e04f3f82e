// Argument parsing with node:util's parseArgs: strict (an unknown flag is an error), no
// dependency, and the same behaviour on every Node the CLI supports. Each command declares its
// flags; the global ones are added to every command.
import { parseArgs, type ParseArgsConfig } from "node:util"
import { CliError } from "./errors.js"

export type FlagSpec = NonNullable<ParseArgsConfig["options"]>

export const GLOBAL_FLAGS = {
  home: { type: "string" },
  text: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies FlagSpec

export interface Parsed {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
}

export function parseCommand(args: readonly string[], flags: FlagSpec, positionals: { min: number; max: number; usage: string }): Parsed {
  let parsed: { values: Record<string, unknown>; positionals: string[] }
  const options = { ...GLOBAL_FLAGS, ...flags }
  try {
    parsed = parseArgs({ args: joinDashValues(args, options), options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new CliError("usage", `${(error as Error).message.replace(/\. To specify a positional argument.*$/s, "")}; usage: ${positionals.usage}`)
  }
  if (!parsed.values.help && (parsed.positionals.length < positionals.min || parsed.positionals.length > positionals.max)) {
    throw new CliError("usage", `expected ${positionals.min === positionals.max ? positionals.min : `${positionals.min} to ${positionals.max}`} argument(s); usage: ${positionals.usage}`)
  }
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals }
}

/**
 * `--limit -1` as `--limit=-1`: parseArgs takes a value that starts with a dash for a flag and
 * answers with its own advice; joined, the value reaches the command's check, which says what
 * the flag accepts.
 */
function joinDashValues(args: readonly string[], options: FlagSpec): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const next = args[i + 1]
    const name = arg.startsWith("--") ? arg.slice(2) : undefined
    if (name && options[name]?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else out.push(arg)
  }
  return out
}

/** A whole number flag within bounds, or the default. */
export function intFlag(value: string | boolean | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError("usage", `--${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`)
  return n
}
