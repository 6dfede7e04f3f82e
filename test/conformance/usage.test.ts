// Codex's usage cases, run against VersionStore.bumpUsage. Sources: openai/codex
// codex-rs/state/src/runtime/memories.rs at 0c608ae6146997ae13341ac1f36ddc55a05354ca
// (record_stage1_output_usage and its test), and codex-rs/memories/read/src/citations.rs as quoted
// by the index (parse_memory_citation drops repeated rollout ids before the store is called).
// codex-rs/memories/read/src/usage.rs (shell reads of memory files -> a metric) and its tests
// (zibuyu2015831/codex usage_tests.rs at 67e69213) have no counterpart here: no metrics are kept.
import { afterEach, describe, expect, it } from "vitest"
import { closeAll, output, persist, record, runtime } from "./support.js"

afterEach(closeAll)

describe("usage bumps (Codex record_stage1_output_usage)", () => {
  // record_stage1_output_usage_updates_usage_metadata: Codex is called with [a, a, b, missing] and
  // answers 3 rows, a counted twice. Deliberately different: each record counts once per call (a
  // citation counts a session once, D10). End to end the two agree: Codex's citation parser has
  // already dropped the repeat before the store sees the ids.
  it("counts a repeated session once, ignores an unknown one and stamps every bumped record alike", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100, output("raw a", "sum a"))
    persist(rt, "ses_b", 101, output("raw b", "sum b"))
    rt.clock.now += 1_000
    expect(rt.version.bumpUsage(["ses_a", "ses_a", "ses_b", "ses_missing"])).toBe(2)
    const a = record(rt, "ses_a")!
    const b = record(rt, "ses_b")!
    expect([a.usage_count, b.usage_count]).toEqual([1, 1])
    expect(a.last_usage).toBe(rt.clock.now)
    expect(b.last_usage).toBe(a.last_usage)
  })

  // Same case with distinct ids: here our count and Codex's agree exactly (2 of 3, the unknown one
  // ignored).
  it("answers how many records it bumped, leaving unknown ids out", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    persist(rt, "ses_b", 101)
    expect(rt.version.bumpUsage(["ses_a", "ses_b", "ses_missing"])).toBe(2)
    expect(rt.version.bumpUsage([])).toBe(0)
    expect(record(rt, "ses_a")!.usage_count).toBe(1)
  })

  // Not in Codex (no segments there): a citation naming a session and one of its segments counts
  // that segment once, as it counts the whole session once.
  it("counts a segment once when a citation names it and its session", () => {
    const rt = runtime()
    // The session's open-segment record is newer than its closed segment, so both are kept.
    persist(rt, "ses_x#1", 150)
    persist(rt, "ses_x", 300)
    expect(rt.version.bumpUsage(["ses_x", "ses_x#1"])).toBe(2)
    expect([record(rt, "ses_x")!.usage_count, record(rt, "ses_x#1")!.usage_count]).toEqual([1, 1])
  })

  // Codex: usage is bookkeeping only; no consolidation is queued by it.
  it("queues no consolidation", () => {
    const rt = runtime()
    persist(rt, "ses_a", 100)
    const before = rt.version.phase2Job()
    rt.version.bumpUsage(["ses_a"])
    expect(rt.version.phase2Job()).toEqual(before)
  })
})
