// Rate-limit circuit breaker: when a provider answers with a rate limit or an exhausted quota,
// background work on that model stops for an hour instead of retrying into the same wall and
// spending the user's budget. A breaker is scoped to one model (or to a phase's default model).

export const BREAKER_OPEN_MS = 60 * 60 * 1000

export interface OpenBreaker {
  scope: string
  until: number
  reason: string
}

const QUOTA = /\b(rate[ _-]?limit|too many requests|quota|insufficient[_ ]quota|resource[_ ]exhausted|usage limit)/i

/** True for an HTTP 429, or an error whose text says rate limit or quota. */
export function isRateLimit(error: { status?: number; name?: string; message?: string }): boolean {
  return error.status === 429 || QUOTA.test(`${error.name ?? ""} ${error.message ?? ""}`)
}

export class RateLimitBreaker {
  private readonly open = new Map<string, OpenBreaker>()

  constructor(
    private readonly now: () => number,
    /** Told of every trip (the instance records it in memory.db, so the CLI's status can show it). */
    private readonly onTrip?: (breaker: OpenBreaker) => void,
  ) {}

  trip(scope: string, reason: string): OpenBreaker {
    const breaker = { scope, until: this.now() + BREAKER_OPEN_MS, reason: reason.slice(0, 300) }
    this.open.set(scope, breaker)
    try {
      this.onTrip?.(breaker)
    } catch {
      // Recording is for display only; the breaker itself is open either way.
    }
    return breaker
  }

  /** The open breaker for this scope, if any; an expired one is forgotten. */
  check(scope: string): OpenBreaker | undefined {
    const breaker = this.open.get(scope)
    if (breaker && breaker.until <= this.now()) {
      this.open.delete(scope)
      return undefined
    }
    return breaker
  }

  list(): OpenBreaker[] {
    return [...this.open.keys()].flatMap((scope) => this.check(scope) ?? [])
  }
}

/** The breaker scope of a phase's model: the model itself, or the phase's default when unset. */
export function breakerScope(model: { providerID: string; modelID: string } | undefined, phase: "extraction" | "consolidation"): string {
  return model ? `${model.providerID}/${model.modelID}` : `${phase}:default-model`
}
