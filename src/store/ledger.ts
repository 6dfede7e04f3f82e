// The spend ledger: the tokens and cost OpenCode reported for the plugin's own helper sessions,
// summed per UTC day and phase in memory.db. A report, never a secret: only numbers are kept.
import type { HelperUsage } from "../host.js"
import type { SqlDatabase } from "./sqlite.js"

export type SpendPhase = "extraction" | "consolidation"

/** One helper session's tokens and cost; cost in the currency OpenCode reports (USD for models.dev prices). */
export interface Usage extends HelperUsage {
  /**
   * Requests of this call the model refused as too large for its window (write/helpers/overflow.ts):
   * each is asked again at once with less, so the count says how often budgets were too generous.
   */
  overflows?: number
  /** Helper sessions this entry counts: 1 unless said (0: a refused completion, which had no session). */
  sessions?: number
}

export interface SpendTotals extends HelperUsage {
  sessions: number
  /** input + output + reasoning + cache reads and writes: what daily_token_budget counts. */
  tokens: number
  /** Requests refused as too large for the model's window (and asked again with less). */
  overflows: number
}

export interface SpendReport {
  today: SpendTotals
  last7Days: SpendTotals
  /** The last 7 days divided by their helper sessions; zeros when there were none. */
  perSession: SpendTotals
  byDay: Array<{ day: string; phase: SpendPhase } & SpendTotals>
}

const DAY_MS = 86_400_000

/** The UTC day of a time, as YYYY-MM-DD. */
export function utcDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10)
}

export class SpendLedger {
  constructor(
    readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds one helper session's usage (and the overflows it met) to today's row of its phase. */
  record(phase: SpendPhase, usage: Usage): void {
    this.db
      .prepare(
        `INSERT INTO spend_ledger (day, phase, sessions, input, output, reasoning, cache_read, cache_write, cost, overflows)
         VALUES ($day, $phase, $sessions, $input, $output, $reasoning, $cacheRead, $cacheWrite, $cost, $overflows)
         ON CONFLICT (day, phase) DO UPDATE SET
           sessions = sessions + excluded.sessions, input = input + excluded.input, output = output + excluded.output,
           reasoning = reasoning + excluded.reasoning, cache_read = cache_read + excluded.cache_read,
           cache_write = cache_write + excluded.cache_write, cost = cost + excluded.cost, overflows = overflows + excluded.overflows`,
      )
      .run({ day: utcDay(this.now()), phase, ...clean(usage) })
  }

  /** Today's tokens across both phases, for the daily budget. */
  tokensToday(): number {
    return this.totals(utcDay(this.now()), utcDay(this.now())).tokens
  }

  report(): SpendReport {
    const today = utcDay(this.now())
    const weekStart = utcDay(this.now() - 6 * DAY_MS)
    const last7Days = this.totals(weekStart, today)
    const per = (value: number) => (last7Days.sessions ? value / last7Days.sessions : 0)
    const byDay = this.db
      .prepare("SELECT * FROM spend_ledger WHERE day >= $from ORDER BY day DESC, phase ASC")
      .all<Row>({ from: weekStart })
      .map((row) => ({ day: row.day, phase: row.phase as SpendPhase, ...toTotals(row) }))
    return {
      today: this.totals(today, today),
      last7Days,
      perSession: {
        sessions: last7Days.sessions ? 1 : 0,
        input: per(last7Days.input),
        output: per(last7Days.output),
        reasoning: per(last7Days.reasoning),
        cacheRead: per(last7Days.cacheRead),
        cacheWrite: per(last7Days.cacheWrite),
        cost: per(last7Days.cost),
        tokens: per(last7Days.tokens),
        overflows: per(last7Days.overflows),
      },
      byDay,
    }
  }

  private totals(from: string, to: string): SpendTotals {
    const row = this.db
      .prepare(
        `SELECT COALESCE(SUM(sessions), 0) AS sessions, COALESCE(SUM(input), 0) AS input, COALESCE(SUM(output), 0) AS output,
                COALESCE(SUM(reasoning), 0) AS reasoning, COALESCE(SUM(cache_read), 0) AS cache_read,
                COALESCE(SUM(cache_write), 0) AS cache_write, COALESCE(SUM(cost), 0) AS cost,
                COALESCE(SUM(overflows), 0) AS overflows
         FROM spend_ledger WHERE day >= $from AND day <= $to`,
      )
      .get<Row>({ from, to })
    return toTotals(row)
  }
}

interface Row {
  day: string
  phase: string
  sessions: number
  input: number
  output: number
  reasoning: number
  cache_read: number
  cache_write: number
  cost: number
  overflows: number
}

function toTotals(row: Partial<Row> | undefined): SpendTotals {
  const n = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : Number(value ?? 0) || 0)
  const totals = {
    sessions: n(row?.sessions),
    input: n(row?.input),
    output: n(row?.output),
    reasoning: n(row?.reasoning),
    cacheRead: n(row?.cache_read),
    cacheWrite: n(row?.cache_write),
    cost: n(row?.cost),
  }
  return { ...totals, tokens: totals.input + totals.output + totals.reasoning + totals.cacheRead + totals.cacheWrite, overflows: n(row?.overflows) }
}

/** Non-negative whole token counts and a finite cost: a host's odd number never corrupts a sum. */
function clean(usage: Usage): Record<keyof Usage, number> {
  const count = (value: number | undefined) => (value !== undefined && Number.isFinite(value) && value > 0 ? Math.round(value) : 0)
  return {
    sessions: usage.sessions === undefined ? 1 : count(usage.sessions),
    overflows: count(usage.overflows),
    input: count(usage.input),
    output: count(usage.output),
    reasoning: count(usage.reasoning),
    cacheRead: count(usage.cacheRead),
    cacheWrite: count(usage.cacheWrite),
    cost: Number.isFinite(usage.cost) && usage.cost > 0 ? usage.cost : 0,
  }
}
