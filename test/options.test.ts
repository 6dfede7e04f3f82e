import { describe, expect, it } from "vitest"
import { DEFAULT_OPTIONS, parseOptions } from "../src/options.js"

describe("parseOptions", () => {
  it("gives Codex's defaults when nothing is set", () => {
    const { options, warnings } = parseOptions(undefined)
    expect(warnings).toEqual([])
    expect(options).toEqual(DEFAULT_OPTIONS)
    expect(options).toMatchObject({
      generate_memories: true,
      use_memories: true,
      dedicated_tools: true,
      disable_on_external_context: false,
      max_raw_memories_for_consolidation: 256,
      max_unused_days: 30,
      max_rollout_age_days: 10,
      max_rollouts_per_startup: 2,
      min_rollout_idle_hours: 6,
      version: "v1",
      dual_write: false,
    })
  })

  it("keeps project mappings whose folder is absolute or under ~/, and says which it ignored and why", () => {
    const { options, warnings } = parseOptions({ project_names: { "/work/acme": " acme ", "~/src/tools": "tools", "src/app": "app", "/work/blank": " " } })
    expect(options.project_names).toEqual({ "/work/acme": "acme", "~/src/tools": "tools" })
    expect(warnings).toEqual([
      'option "project_names./work/blank": Too small: expected string to have >=1 characters; using the default',
      'option "project_names": the folder "src/app" must be absolute or start with ~/; ignored',
    ])
  })

  it("accepts every documented option", () => {
    const input = {
      generate_memories: false,
      use_memories: false,
      dedicated_tools: false,
      disable_on_external_context: true,
      extract_model: "openai/gpt-5-mini",
      consolidation_model: "anthropic/claude-sonnet-4",
      max_raw_memories_for_consolidation: 100,
      max_unused_days: 0,
      max_rollout_age_days: 90,
      max_rollouts_per_startup: 128,
      min_rollout_idle_hours: 1,
      v2_ready_sessions: 5,
      daily_token_budget: 250_000,
      memory_max_bytes: 400_000,
      memory_max_lines: 5_000,
      skill_max_bytes: 0,
      skill_max_lines: 800,
      codex_interop: { import: true, export: false, codex_home: "/somewhere/.codex" },
      claude_import: { enabled: true, claude_home: "/somewhere/.claude", projects: ["-home-u-acme"] },
      checkpoint: { enabled: true, mode: "replace" },
      version: "v2",
      dual_write: true,
      home: "/data/memory",
      project_names: { "/work/acme": "acme", "~/src/tools": "tools" },
    }
    const { options, warnings } = parseOptions(input)
    expect(warnings).toEqual([])
    expect(options).toEqual(input)
  })

  it("clamps and floors numbers to Codex's ranges, with a warning each", () => {
    const { options, warnings } = parseOptions({
      max_raw_memories_for_consolidation: 10_000,
      max_unused_days: -4,
      max_rollout_age_days: 12.9,
      max_rollouts_per_startup: 0,
      min_rollout_idle_hours: 49,
    })
    expect(options.max_raw_memories_for_consolidation).toBe(4096)
    expect(options.max_unused_days).toBe(0)
    expect(options.max_rollout_age_days).toBe(12)
    expect(options.max_rollouts_per_startup).toBe(1)
    expect(options.min_rollout_idle_hours).toBe(48)
    expect(warnings).toHaveLength(5)
    expect(warnings[0]).toContain("max_raw_memories_for_consolidation")
  })

  it("turns wrong types into warnings and keeps the valid rest", () => {
    const { options, warnings } = parseOptions({
      use_memories: "no",
      max_unused_days: "7",
      extract_model: "no-slash",
      version: "v3",
      min_rollout_idle_hours: 12,
    })
    expect(options.use_memories).toBe(true)
    expect(options.max_unused_days).toBe(30)
    expect(options.extract_model).toBeUndefined()
    expect(options.version).toBe("v1")
    expect(options.min_rollout_idle_hours).toBe(12)
    expect(warnings).toHaveLength(4)
    for (const key of ["use_memories", "max_unused_days", "extract_model", "version"]) {
      expect(warnings.some((w) => w.includes(`"${key}"`))).toBe(true)
    }
  })

  it("warns about unknown keys, nested ones included, without losing valid siblings", () => {
    const { options, warnings } = parseOptions({
      min_rate_limit_remaining_percent: 25,
      codex_interop: { import: true, exprot: true },
    })
    expect(options.codex_interop).toEqual({ import: true, export: false, codex_home: undefined })
    expect([...warnings].sort()).toEqual(['unknown option "codex_interop.exprot" ignored', 'unknown option "min_rate_limit_remaining_percent" ignored'])
  })

  it("never throws on values that are not objects", () => {
    for (const input of [42, "home", [1, 2], true]) {
      const { options, warnings } = parseOptions(input)
      expect(options).toEqual(DEFAULT_OPTIONS)
      expect(warnings).toHaveLength(1)
    }
    expect(parseOptions(null).warnings).toEqual([])
  })

  it("rejects non-finite numbers", () => {
    const { options, warnings } = parseOptions({ max_unused_days: Number.NaN, max_rollout_age_days: Number.POSITIVE_INFINITY })
    expect(options.max_unused_days).toBe(30)
    expect(options.max_rollout_age_days).toBe(10)
    expect(warnings).toHaveLength(2)
  })

  it("warns when the interop settings cannot take effect as combined", () => {
    expect(parseOptions({ version: "v2", codex_interop: { import: true } }).warnings).toEqual([
      'option "codex_interop": the exchange with Codex runs through the Memory V1 writer, and only V2 learns here (version "v2" without dual_write); it is off',
    ])
    expect(parseOptions({ version: "v2", dual_write: true, codex_interop: { export: true } }).warnings).toEqual([])
    expect(parseOptions({ codex_interop: { codex_home: "/x" } }).warnings).toEqual(['option "codex_interop.codex_home" is set but neither import nor export is on; it is not used'])
    expect(parseOptions({ claude_import: { projects: ["k"] } }).warnings).toEqual(['option "claude_import": claude_home or projects is set but enabled is false; nothing is imported'])
    expect(parseOptions({ claude_import: { enabled: true, projects: [] } }).warnings).toEqual(['option "claude_import.projects" is empty: no project is imported'])
  })

  it("refuses a malformed claude_import with a warning and keeps it off", () => {
    const { options, warnings } = parseOptions({ claude_import: { enabled: "yes", projects: "all" } })
    expect(options.claude_import).toEqual({ enabled: false, claude_home: undefined, projects: undefined })
    expect(warnings.length).toBeGreaterThan(0)
  })
})

describe("the size budget options", () => {
  it("default to 2,000 lines and 160,000 bytes for MEMORY.md and 500 lines and 32,000 bytes a skill", () => {
    expect(parseOptions({}).options).toMatchObject({ memory_max_bytes: 160_000, memory_max_lines: 2_000, skill_max_bytes: 32_000, skill_max_lines: 500 })
  })

  it("take 0 as off and clamp what is out of range", () => {
    const { options, warnings } = parseOptions({ memory_max_bytes: 0, memory_max_lines: 10 ** 9, skill_max_bytes: -1, skill_max_lines: 80.5 })
    expect(options).toMatchObject({ memory_max_bytes: 0, memory_max_lines: 100_000, skill_max_bytes: 0, skill_max_lines: 80 })
    expect(warnings).toEqual([
      'option "memory_max_lines" = 1000000000 adjusted to 100000 (allowed: whole numbers 0 to 100000)',
      'option "skill_max_bytes" = -1 adjusted to 0 (allowed: whole numbers 0 to 1000000)',
      'option "skill_max_lines" = 80.5 adjusted to 80 (allowed: whole numbers 0 to 20000)',
    ])
  })

  it("fall back to the default on a wrong type", () => {
    const { options, warnings } = parseOptions({ memory_max_lines: "2000" })
    expect(options.memory_max_lines).toBe(2_000)
    expect(warnings).toHaveLength(1)
  })
})
