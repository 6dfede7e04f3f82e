// memory_search's since/until filter works on file names: rollout summaries, extension notes and
// extension resources are named from the UTC time they describe, "YYYY-MM-DDTHH-MM-SS..." (Codex
// derives these names with chrono's Utc), so filtering needs neither a stat nor a read, and a
// file's mtime (which changes whenever it is rewritten) plays no part.
// Bounds without a zone are read as UTC, like the names. Both bounds are inclusive, and a bound
// given as a date alone covers that whole day.
import { MemoryError } from "./errors.js"

export interface TimeRange {
  /** Inclusive, in milliseconds since the epoch. */
  from: number
  to: number
}

const NAME_PREFIX = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})/
// Date, then optionally a time (":" or, as in file names, "-" between its parts) and a zone.
const BOUND = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2})[:-](\d{2})(?:[:-](\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/
const DAY_MS = 86_400_000

/** The UTC time a file name starts with, or undefined when it does not start with one. */
export function nameTimestamp(name: string): number | undefined {
  const m = NAME_PREFIX.exec(name)
  if (!m) return undefined
  return utc(m.slice(1, 7).map(Number), 0)
}

/** The range the since/until arguments describe, or undefined when neither is given. */
export function parseTimeRange(since: string | undefined, until: string | undefined): TimeRange | undefined {
  const hasSince = since !== undefined && since !== null
  const hasUntil = until !== undefined && until !== null
  if (!hasSince && !hasUntil) return undefined
  const from = hasSince ? parseBound(since, "since").start : Number.NEGATIVE_INFINITY
  const to = hasUntil ? parseBound(until, "until").end : Number.POSITIVE_INFINITY
  if (from > to) throw new MemoryError("invalid_argument", `since (${since}) is later than until (${until}); swap them or widen the range.`)
  return { from, to }
}

export function inRange(range: TimeRange, time: number): boolean {
  return time >= range.from && time <= range.to
}

/** The first and last millisecond a bound stands for: a whole day for a date, else one instant. */
function parseBound(value: string, name: string): { start: number; end: number } {
  const m = typeof value === "string" ? BOUND.exec(value.trim()) : null
  const parts = m?.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part)))
  const fraction = m?.[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"))
  const start = m && parts ? utc(parts, fraction, zoneOffsetMinutes(m[8])) : undefined
  if (start === undefined) {
    throw new MemoryError(
      "invalid_argument",
      `${name} must be an ISO date or date-time such as "2026-03-01" or "2026-03-01T14:30:00Z" (got ${JSON.stringify(value)}); times without a zone are UTC.`,
    )
  }
  const dateOnly = m?.[4] === undefined
  return { start, end: dateOnly ? start + DAY_MS - 1 : start }
}

function zoneOffsetMinutes(zone: string | undefined): number {
  if (!zone || zone === "Z" || zone === "z") return 0
  const digits = zone.slice(1).replace(":", "")
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0")
  return zone.startsWith("-") ? -minutes : minutes
}

/** UTC milliseconds of [year, month, day, hour, minute, second], or undefined for an impossible time. */
function utc(parts: number[], millisecond: number, offsetMinutes = 0): number | undefined {
  const [year, month, day, hour, minute, second] = parts as [number, number, number, number, number, number]
  const time = Date.UTC(year, month - 1, day, hour, minute, second, millisecond)
  const check = new Date(time)
  // Date.UTC rolls 2026-02-30 over to March; a round trip catches such dates.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  return time - offsetMinutes * 60_000
}
