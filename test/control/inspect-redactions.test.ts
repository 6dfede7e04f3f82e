import { describe, expect, it } from "vitest"
import { renderInspect, type InspectSnapshot } from "../../src/control/inspect.js"
import { DEFAULT_OPTIONS } from "../../src/options.js"
import { memoryPaths } from "../../src/util/paths.js"
import { expectGolden } from "../golden/golden.js"

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"

function snapshot(overrides: Partial<InspectSnapshot>): InspectSnapshot {
  return {
    now: NOW,
    home: { path: "/home/u/.local/share/opencode", source: "xdg-data" },
    catalog: { file: "/home/u/.local/share/opencode/memory.db", state: { status: "open", driver: "better-sqlite3", schemaVersion: 6 }, counts: undefined },
    versions: [
      {
        version: "v1",
        selected: true,
        writes: true,
        paths: memoryPaths("/home/u/.local/share/opencode", "xdg-data", "v1"),
        store: { status: "open", driver: "better-sqlite3" },
        counts: undefined,
        phase2: undefined,
        summary: undefined,
      },
    ],
    jobErrors: [],
    options: DEFAULT_OPTIONS,
    warnings: [],
    diagnostics: [],
    cooldownMs: 6 * 3_600_000,
    ...overrides,
  }
}

const section = (text: string) => text.slice(text.indexOf("## Redactions"), text.indexOf("## Recent errors"))

describe("memory_inspect's redaction audit", () => {
  it("shows the totals by class, most frequent first, and the private spans apart", () => {
    const text = renderInspect(snapshot({ redactions: { "secret-assignment": 2, "github-token": 5, jwt: 2, "private-span": 3 } }))
    expectGolden("inspect.redactions.txt", section(text))
  })

  it("says when nothing was redacted yet, and when the database is not open", () => {
    expect(section(renderInspect(snapshot({ redactions: {} })))).toBe("## Redactions\nno secrets found in extracted sessions so far\n\n")
    expect(section(renderInspect(snapshot({})))).toBe("## Redactions\nunavailable until the database is open\n\n")
  })

  it("redacts errors again when it shows them, for rows written before redaction", () => {
    const job = { kind: "memory_stage1", job_key: "ses_old", status: "failed", lease_until: null, retry_at: null, retry_remaining: 2, last_error: `rejected ${TOKEN}`, started_at: NOW - 10, finished_at: NOW - 5 }
    const versions = snapshot({}).versions.map((v) => ({ ...v, phase2: { ...job, kind: "memory_consolidate_global", job_key: "global" } }))
    const text = renderInspect(snapshot({ jobErrors: [job], versions, diagnostics: [{ time: NOW, level: "error", source: "x", message: TOKEN }] }))
    expect(text).not.toContain(TOKEN)
    expect(text).toContain("memory_stage1 ses_old: rejected [REDACTED:github-token]")
  })
})
