import { describe, expect, it } from "vitest"
import { renderInspect, type InspectSnapshot } from "../../src/control/inspect.js"
import { DEFAULT_OPTIONS } from "../../src/options.js"
import { memoryPaths } from "../../src/util/paths.js"
import { expectGolden } from "../golden/golden.js"

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)

function snapshot(overrides: Partial<InspectSnapshot> = {}): InspectSnapshot {
  return {
    now: NOW,
    paths: memoryPaths("/home/u/.local/share/opencode", "xdg-data", "v1"),
    store: { status: "open", driver: "bun:sqlite", schemaVersion: 2 },
    counts: {
      outputs: 12,
      outputsUsed: 4,
      sessionsByMode: { enabled: 3, disabled: 1, polluted: 2 },
      jobs: [
        { kind: "memory_consolidate_global", status: "done", count: 1 },
        { kind: "memory_stage1", status: "done", count: 11 },
        { kind: "memory_stage1", status: "failed", count: 1 },
      ],
      citedParts: 7,
      citedFiles: 3,
    },
    phase2: { kind: "memory_consolidate_global", job_key: "global", status: "done", lease_until: null, retry_at: null, retry_remaining: 3, last_error: null, started_at: NOW - 3_600_000, finished_at: NOW - 3_000_000, last_success_at: NOW - 3_000_000 },
    jobErrors: [{ kind: "memory_stage1", job_key: "ses_bad", status: "failed", lease_until: null, retry_at: NOW + 1, retry_remaining: 2, last_error: "invalid JSON from the extractor", started_at: NOW - 10, finished_at: NOW - 5 }],
    summary: { bytes: 12_345, estimatedTokens: 3_087, injected: true, capped: true },
    options: { ...DEFAULT_OPTIONS, max_unused_days: 365 },
    warnings: ['option "max_unused_days" = 999 adjusted to 365 (allowed: whole numbers 0 to 365)'],
    diagnostics: [{ time: NOW - 1_000, level: "warn", source: "read-path", message: "memory summary is a symlink; not injected" }],
    cooldownMs: 6 * 3_600_000,
    breakers: [{ scope: "openai/gpt-5-mini", until: NOW + 1_800_000, reason: "APIError: Rate limit reached" }],
    ignoredAgentKeys: { memorize: ["permission", "tools"], "memorize-extract": [] },
    ...overrides,
  }
}

describe("renderInspect", () => {
  it("renders a full report byte for byte", () => {
    expectGolden("inspect.txt", renderInspect(snapshot()))
  })

  it("tells a check that found nothing apart from the cooldown, which only a consolidation starts", () => {
    const job = snapshot().phase2!
    const checked = renderInspect(snapshot({ phase2: { ...job, status: "done", finished_at: NOW - 60_000, last_success_at: NOW - 7 * 3_600_000 } }))
    expect(checked).toContain("nothing to do; next look without new input at 2026-")
    expect(checked).not.toContain("cooldown until")
    const pending = renderInspect(snapshot({ phase2: { ...job, status: "pending", finished_at: NOW - 60_000, last_success_at: NOW - 3_600_000 } }))
    expect(pending).toContain(`cooldown until ${new Date(NOW + 5 * 3_600_000).toISOString()}`)
  })

  it("says plainly when nothing exists yet", () => {
    const text = renderInspect(snapshot({ store: { status: "failed", error: "disk full" }, counts: undefined, phase2: undefined, jobErrors: [], summary: undefined, warnings: [], diagnostics: [] }))
    expect(text).toContain("database: /home/u/.local/share/opencode/memory.db: failed: disk full")
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
    const running = { ...snapshot().phase2!, status: "running", lease_until: NOW + 60_000 }
    expect(renderInspect(snapshot({ phase2: running }))).toContain("running, lease until 2026-11-30T12:01:00.000Z")
  })
})
