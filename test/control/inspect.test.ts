import { describe, expect, it } from "vitest"
import { renderInspect, type InspectSnapshot, type VersionSnapshot } from "../../src/control/inspect.js"
import { DEFAULT_OPTIONS } from "../../src/options.js"
import { memoryPaths } from "../../src/util/paths.js"
import { expectGolden } from "../golden/golden.js"

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)

const HOME = "/home/u/.local/share/opencode"
const PHASE2 = { kind: "memory_consolidate_global", job_key: "global", status: "done", lease_until: null, retry_at: null, retry_remaining: 3, last_error: null, started_at: NOW - 3_600_000, finished_at: NOW - 3_000_000, last_success_at: NOW - 3_000_000 }

function v1(overrides: Partial<VersionSnapshot> = {}): VersionSnapshot {
  return {
    version: "v1",
    selected: true,
    writes: true,
    paths: memoryPaths(HOME, "xdg-data", "v1"),
    store: { status: "open", driver: "bun:sqlite" },
    counts: {
      outputs: 12,
      outputsUsed: 4,
      jobs: [
        { kind: "memory_consolidate_global", status: "done", count: 1 },
        { kind: "memory_stage1", status: "done", count: 11 },
        { kind: "memory_stage1", status: "failed", count: 1 },
      ],
      forgetting: 1,
      unconsolidated: 3,
    },
    phase2: PHASE2,
    summary: { bytes: 12_345, estimatedTokens: 3_087, injected: true, capped: true },
    ...overrides,
  }
}

function v2(overrides: Partial<VersionSnapshot> = {}): VersionSnapshot {
  return {
    version: "v2",
    selected: false,
    writes: true,
    paths: memoryPaths(HOME, "xdg-data", "v2"),
    store: { status: "open", driver: "bun:sqlite", schemaVersion: 2 },
    counts: { outputs: 9, outputsUsed: 0, jobs: [{ kind: "memory_stage1", status: "done", count: 9 }], forgetting: 0, unconsolidated: 0 },
    phase2: { ...PHASE2, last_success_at: NOW - 86_400_000, finished_at: NOW - 86_400_000 },
    summary: { bytes: 4_100, estimatedTokens: 1_025, injected: true, capped: false },
    readiness: { consolidatedSessions: 9, threshold: 20, summary: { valid: true }, ready: false },
    ...overrides,
  }
}

function snapshot(overrides: Partial<InspectSnapshot> = {}): InspectSnapshot {
  return {
    now: NOW,
    home: { path: HOME, source: "xdg-data" },
    catalog: {
      file: `${HOME}/memory.db`,
      state: { status: "open", driver: "bun:sqlite", schemaVersion: 6 },
      counts: { sessionsByMode: { enabled: 3, disabled: 1, polluted: 2 }, sessionsByVersion: { v1: 5, v2: 1 }, citedParts: 7, citedFiles: 3 },
    },
    versions: [v1(), v2()],
    jobErrors: [{ kind: "memory_stage1", job_key: "ses_bad", status: "failed", lease_until: null, retry_at: NOW + 1, retry_remaining: 2, last_error: "invalid JSON from the extractor", started_at: NOW - 10, finished_at: NOW - 5, version: "v1" }],
    options: { ...DEFAULT_OPTIONS, max_unused_days: 365, dual_write: true },
    warnings: ['option "max_unused_days" = 999 adjusted to 365 (allowed: whole numbers 0 to 365)'],
    diagnostics: [{ time: NOW - 1_000, level: "warn", source: "read-path", message: "memory summary is a symlink; not injected" }],
    cooldownMs: 6 * 3_600_000,
    forgetIntervalMs: 10 * 60_000,
    breakers: [{ scope: "openai/gpt-5-mini", until: NOW + 1_800_000, reason: "APIError: Rate limit reached" }],
    ignoredAgentKeys: { memorize: ["permission", "tools"], "memorize-extract": [] },
    checkpoints: { sessions: 4, frozen: 1 },
    spend: {
      today: { sessions: 2, input: 1200, output: 300, reasoning: 50, cacheRead: 400, cacheWrite: 100, cost: 0.0123, tokens: 2050 },
      last7Days: { sessions: 4, input: 2400, output: 600, reasoning: 100, cacheRead: 800, cacheWrite: 200, cost: 0.0246, tokens: 4100 },
      perSession: { sessions: 1, input: 600, output: 150, reasoning: 25, cacheRead: 200, cacheWrite: 50, cost: 0.00615, tokens: 1025 },
      byDay: [],
    },
    lastReview: {
      id: 3,
      version: "v1",
      finishedAt: NOW - 3_600_000,
      summary: { inputsAdded: ["rollout_summaries/a.md"], inputsRemoved: ["rollout_summaries/gone.md"], notes: [], changed: ["MEMORY.md", "memory_summary.md"], sessions: 9 },
      diff: "",
    },
    ...overrides,
  }
}

describe("renderInspect", () => {
  it("renders a full report byte for byte", () => {
    expectGolden("inspect.txt", renderInspect(snapshot()))
  })

  it("leads with what memory holds, what waits and until when, and what learning cost today", () => {
    const glance = renderInspect(snapshot()).split("\n## ")[1]!
    expect(glance).toContain("holds: v1: 12 extracted sessions, a summary of about 3087 tokens; v2: 9 extracted sessions")
    // A session waits to be forgotten, so the run minutes after the last one (50 minutes ago) takes the records too.
    expect(glance).toContain("v1: 3 records for the next consolidation, at the next pass")
    const recent = renderInspect(snapshot({ versions: [v1({ phase2: { ...PHASE2, finished_at: NOW - 120_000, last_success_at: NOW - 120_000 } })] }))
    expect(recent).toContain(`v1: 3 records for the next consolidation, with the forgetting, at ${new Date(NOW - 120_000 + 10 * 60_000).toISOString()}`)
    const noForget = renderInspect(snapshot({ versions: [v1({ counts: { ...v1().counts!, forgetting: 0 } })] }))
    expect(noForget).toContain(`v1: 3 records for the next consolidation, after the cooldown, at ${new Date(NOW - 3_000_000 + 6 * 3_600_000).toISOString()}`)
    expect(glance).toContain("v1: 1 session to forget")
    expect(glance).toContain("learning cost today (UTC): 2050 tokens, cost 0.0123, 2 helper sessions")
    const idle = renderInspect(snapshot({ versions: [v1({ counts: { outputs: 0, outputsUsed: 0, jobs: [], forgetting: 0, unconsolidated: 0 }, summary: undefined })], spend: undefined }))
    expect(idle).toContain("holds: v1: 0 extracted sessions, no summary yet")
    expect(idle).toContain("waiting: no record or forgetting; a session is learned once idle 6 hours")
    expect(idle).toContain("learning cost today (UTC): unknown until the database is open")
  })

  it("tells a check that found nothing apart from the cooldown, which only a consolidation starts", () => {
    const job = PHASE2
    const checked = renderInspect(snapshot({ versions: [v1({ phase2: { ...job, status: "done", finished_at: NOW - 60_000, last_success_at: NOW - 7 * 3_600_000 } })] }))
    expect(checked).toContain("nothing to do; next look without new input at 2026-")
    expect(checked).not.toContain("cooldown until")
    const pending = renderInspect(snapshot({ versions: [v1({ phase2: { ...job, status: "pending", finished_at: NOW - 60_000, last_success_at: NOW - 3_600_000 } })] }))
    expect(pending).toContain(`cooldown until ${new Date(NOW + 5 * 3_600_000).toISOString()}`)
  })

  it("says when background learning is held, and why", () => {
    const text = renderInspect(snapshot({ hold: "paused since 2026-11-30T11:00:00.000Z", options: { ...DEFAULT_OPTIONS, daily_token_budget: 3000 } }))
    expect(text).toContain("## Background learning\nheld: paused since 2026-11-30T11:00:00.000Z")
    expect(text).toContain("daily_token_budget: 3000 tokens (950 left today)")
  })

  it("says whether checkpoints are off", () => {
    const text = renderInspect(snapshot({ options: { ...DEFAULT_OPTIONS, checkpoint: { enabled: false, mode: "augment" } } }))
    expect(text).toContain("checkpoints: off")
    expect(text).not.toContain("carrying the view")
  })

  it("says plainly when nothing exists yet", () => {
    const text = renderInspect(
      snapshot({
        catalog: { file: `${HOME}/memory.db`, state: { status: "failed", error: "disk full" }, counts: undefined },
        versions: [v1({ store: { status: "failed", error: "disk full" }, counts: undefined, phase2: undefined, summary: undefined }), v2({ store: { status: "absent" }, counts: undefined, phase2: undefined, summary: undefined, readiness: { consolidatedSessions: 0, threshold: 20, summary: undefined, ready: false } })],
        jobErrors: [],
        warnings: [],
        diagnostics: [],
      }),
    )
    expect(text).toContain("catalog: /home/u/.local/share/opencode/memory.db: failed: disk full")
    expect(text).toContain("database: /home/u/.local/share/opencode/memory_v2.db: not created (this version never learned)")
    expect(text).toContain("readiness: not ready (0 of 20 sessions in one consolidation; no summary)")
    expect(text).toContain("none yet: nothing is injected")
    expect(text).toContain("never run")
    expect(text).toContain("## Recent errors\nnone")
  })

  it("names the helper-agent settings of the user's config that were ignored, and nothing when none were", () => {
    const text = renderInspect(snapshot())
    expect(text).toContain('## Helper agents\n- agent "memorize": your config\'s "permission", "tools" ignored')
    expect(text).not.toContain('agent "memorize-extract"')
    expect(renderInspect(snapshot({ ignoredAgentKeys: {} }))).not.toContain("## Helper agents")
  })

  it("shows a running consolidation and its lease", () => {
    const running = { ...PHASE2, status: "running", lease_until: NOW + 60_000 }
    expect(renderInspect(snapshot({ versions: [v1({ phase2: running })] }))).toContain("consolidation: running, lease until 2026-11-30T12:01:00.000Z")
  })

  it("says when the extraction budget shown was shrunk after the model refused larger ones, and counts today's refusals", () => {
    const extraction = { model: "local/small-16k", window: 16_000, transcriptTokens: 3_200, refused: [7_200, 4_800], at: NOW - 60_000 }
    const text = renderInspect(snapshot({ versions: [v1({ extraction })], spend: { ...snapshot().spend!, today: { ...snapshot().spend!.today, overflows: 2 } } }))
    expect(text).toContain("transcripts budgeted at 3,200 tokens, after the model refused 7,200 and 4,800 as too large (last extraction")
    expect(text).toContain("2 helper sessions; 2 requests too large for the model, asked again with less")
    expect(renderInspect(snapshot({ versions: [v1({ extraction: { ...extraction, refused: [] } })] }))).not.toMatch(/refused|too large/)
  })

  it("shows both versions side by side, and V2's readiness once it is reached", () => {
    const text = renderInspect(snapshot())
    expect(text).toContain("## Memory V1 (read by new sessions; learning)")
    expect(text).toContain("## Memory V2 (read only by sessions stamped with it; learning)")
    expect(text.indexOf("## Memory V1")).toBeLessThan(text.indexOf("## Memory V2"))
    const ready = renderInspect(snapshot({ versions: [v1(), v2({ readiness: { consolidatedSessions: 24, threshold: 20, summary: { valid: true }, ready: true } })] }))
    expect(ready).toContain("readiness: ready (24 of 20 sessions in one consolidation; summary valid)")
    const invalid = renderInspect(snapshot({ versions: [v2({ readiness: { consolidatedSessions: 24, threshold: 20, summary: { valid: false, reason: "the first line is not v1" }, ready: false } })] }))
    expect(invalid).toContain("readiness: not ready (24 of 20 sessions in one consolidation; summary invalid: the first line is not v1)")
  })

  it("shows MEMORY.md's size against its budget and its repeated entries", () => {
    const handbook = { bytes: 171_204, lines: 2_412, duplicates: { entries: 900, exact: 3, near: 7, groups: [], bounded: false } }
    const text = renderInspect(snapshot({ versions: [v1({ handbook })] }))
    expect(text).toContain("handbook: MEMORY.md 2,412 lines, 171,204 bytes (budget 2,000 lines, 160,000 bytes); 3 exact and 7 near-duplicate entries among 900")
    const off = renderInspect(snapshot({ versions: [v1({ handbook })], options: { ...snapshot().options, memory_max_lines: 0, memory_max_bytes: 0 } }))
    expect(off).toContain("(budget no lines limit, no bytes limit)")
    expect(renderInspect(snapshot())).not.toContain("handbook:")
  })
})
