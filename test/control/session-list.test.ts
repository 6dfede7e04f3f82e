// Which state each session is in, and when it becomes eligible: pure, over hand-made traces.
import { describe, expect, it } from "vitest"
import { listSessions, waitingToGoIdle, type SessionListInput } from "../../src/control/session-list.js"
import type { SessionTrace } from "../../src/store/version-store.js"

const HOUR = 3_600_000
const NOW = Date.UTC(2026, 11, 1, 12)

const row = (id: string, updatedAt: number) => ({ session_id: id, title: `t ${id}`, directory: "/p", created_at: updatedAt, updated_at: updatedAt, listed_at: NOW })
const trace = (over: Partial<SessionTrace>): SessionTrace => ({ records: 0, recordUpdatedAt: undefined, unconsolidated: 0, consolidated: false, forgetting: false, job: undefined, ...over })
const job = (status: string, lastError: string | null, retriesLeft: number, retryAt: number | null = null) => ({ status, lastError, retryAt, retriesLeft })

function input(over: Partial<SessionListInput>): SessionListInput {
  return { catalog: [], traces: new Map(), modes: new Map(), forgottenBefore: new Map(), resetEpoch: undefined, now: NOW, minIdleHours: 6, maxAgeDays: 30, ...over }
}

describe("listSessions", () => {
  it("gives every state its session, newest activity first", () => {
    const listed = listSessions(
      input({
        catalog: [row("ses_wait", NOW - HOUR), row("ses_due", NOW - 7 * HOUR), row("ses_old", NOW - 40 * 24 * HOUR), row("ses_reset", NOW - 9 * HOUR), row("ses_forgot", NOW - 10 * HOUR), row("ses_off", NOW - 11 * HOUR), row("ses_retry", NOW - 12 * HOUR), row("ses_failed", NOW - 13 * HOUR), row("ses_none", NOW - 14 * HOUR), row("ses_run", NOW - 15 * HOUR)],
        traces: new Map([
          ["ses_retry", trace({ job: job("failed", "HTTP 500: model not found", 2, NOW + HOUR) })],
          ["ses_failed", trace({ job: job("failed", "HTTP 500", 0) })],
          ["ses_none", trace({ job: job("done", null, 3) })],
          ["ses_run", trace({ job: job("running", null, 3) })],
          ["ses_gone", trace({ forgetting: true })],
          ["ses_kept", trace({ records: 1, recordUpdatedAt: NOW - 20 * HOUR, consolidated: true })],
        ]),
        modes: new Map([["ses_off", "disabled"]]),
        forgottenBefore: new Map([["ses_forgot", NOW - HOUR]]),
        resetEpoch: NOW - 8 * HOUR,
      }),
    )
    const states = Object.fromEntries(listed.map((s) => [s.sessionId, s.state]))
    expect(states).toEqual({
      ses_wait: "waiting",
      ses_due: "waiting",
      ses_old: "too_old",
      ses_reset: "before_reset",
      ses_forgot: "forgotten",
      ses_off: "off",
      ses_retry: "retrying",
      ses_failed: "failed",
      ses_none: "nothing_learned",
      ses_run: "extracting",
      ses_gone: "forgetting",
      ses_kept: "consolidated",
    })
    expect(listed.map((s) => s.sessionId).slice(0, 2)).toEqual(["ses_wait", "ses_due"])
    const byId = new Map(listed.map((s) => [s.sessionId, s]))
    expect(byId.get("ses_wait")!.eligibleAt).toBe(NOW + 5 * HOUR)
    expect(byId.get("ses_retry")).toMatchObject({ eligibleAt: NOW + HOUR, error: "HTTP 500: model not found" })
    // Only the one still to go idle waits for idleness; the due one goes at the next pass.
    expect(waitingToGoIdle(listed, NOW).map((s) => s.sessionId)).toEqual(["ses_wait"])
  })

  it("says when a record its session outgrew is learned again, and not for a session kept out", () => {
    const listed = listSessions(
      input({
        catalog: [row("ses_grown", NOW - HOUR), row("ses_out", NOW - HOUR)],
        traces: new Map([
          ["ses_grown", trace({ records: 1, recordUpdatedAt: NOW - 20 * HOUR, unconsolidated: 1 })],
          ["ses_out", trace({ records: 1, recordUpdatedAt: NOW - 20 * HOUR })],
        ]),
        modes: new Map([["ses_out", "polluted"]]),
      }),
    )
    expect(listed.find((s) => s.sessionId === "ses_grown")).toMatchObject({ state: "extracted", eligibleAt: NOW + 5 * HOUR })
    expect(listed.find((s) => s.sessionId === "ses_out")).toMatchObject({ state: "consolidated", eligibleAt: undefined })
  })
})
