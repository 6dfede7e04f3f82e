// Recent warnings and errors, kept per instance for `memory_inspect` and sent to the host's log.
// Messages come from errors, hosts and models, so they are redacted before they are kept or sent.
import { GUARD } from "./constants.js"
import type { Host, LogLevel } from "./host.js"
import { redactDeep, redactText } from "./redact/redact.js"

export interface Diagnostic {
  time: number
  level: LogLevel
  /** What raised it: a hook name, "startup", "read-path", ... */
  source: string
  message: string
}

export class Diagnostics {
  constructor(
    private readonly host: Host,
    private readonly now: () => number = Date.now,
    private readonly limit: number = GUARD.MAX_DIAGNOSTICS,
    private readonly entries: Diagnostic[] = [],
    private readonly scope: string = "",
  ) {}

  /**
   * The same list and log, with every source named after `scope` ("v2/phase1"): with two
   * writers, each one's lines are told apart.
   */
  scoped(scope: string): Diagnostics {
    return new Diagnostics(this.host, this.now, this.limit, this.entries, `${this.scope}${scope}/`)
  }

  report(level: LogLevel, rawSource: string, rawMessage: string, rawExtra?: Record<string, unknown>): void {
    const source = this.scope + rawSource
    const message = redactText(rawMessage)
    const extra = rawExtra && (redactDeep(rawExtra) as Record<string, unknown>)
    if (level !== "debug") {
      this.entries.push({ time: this.now(), level, source, message })
      if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit)
    }
    // Fire and forget: a log call must never hold up the caller, and its failure has nowhere to go.
    this.host.log(level, `${source}: ${message}`, extra).catch(() => undefined)
  }

  error(source: string, error: unknown): void {
    this.report("error", source, errorMessage(error), { stack: error instanceof Error ? error.stack : undefined })
  }

  recent(): readonly Diagnostic[] {
    return this.entries
  }
}

/**
 * An error's message, naming its code when the message does not: SQLite says "database or disk is
 * full" and the code SQLITE_FULL is what a user (or a search) recognises.
 */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" && /^(SQLITE_|E[A-Z]+$)/.test(code) && !message.includes(code) ? `${message} (${code})` : message
}
