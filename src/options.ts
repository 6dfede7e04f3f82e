// Plugin options: one schema, Codex's names, defaults and clamps. Bad input never throws:
// each problem becomes a warning (kept for `memory_inspect`) and the default is used instead.
import path from "node:path"
import type { ModelRef } from "./host.js"
import { z, type Infer } from "./util/zod.js"

/** Integer options and their Codex clamps, as [default, min, max]. */
const INTEGER_OPTIONS = {
  max_raw_memories_for_consolidation: [256, 1, 4096],
  max_unused_days: [30, 0, 365],
  max_rollout_age_days: [10, 0, 90],
  max_rollouts_per_startup: [2, 1, 128],
  min_rollout_idle_hours: [6, 1, 48],
  // V2 counts as ready once one successful consolidation consumed this many distinct sessions.
  v2_ready_sessions: [20, 1, 4096],
  // Tokens the helper sessions may spend per UTC day before background learning waits for the next; 0 is off.
  daily_token_budget: [0, 0, 1_000_000_000_000],
  // The size budget a consolidation must leave MEMORY.md and each skills/<name>/SKILL.md within
  // (write/phase2/budget.ts); 0 turns a bound off. Codex bounds neither file (its prompt asks for
  // skills "under 500 lines"), and users report MEMORY.md at 2,450 lines / 325 KB and 3,618 lines,
  // full of repeats. Claude Code's 200-line / 25 KB index is too small for a handbook read by
  // search, not injected. 2,000 lines and 160 KB hold years of task groups at Codex's schema
  // (some 40-80 lines a group) while stopping runaway growth well before a file that no read
  // can take whole; a skill at 500 lines is Codex's own rule, and 32 KB its bytes at 64 a line.
  memory_max_bytes: [160_000, 0, 10_000_000],
  memory_max_lines: [2_000, 0, 100_000],
  skill_max_bytes: [32_000, 0, 1_000_000],
  skill_max_lines: [500, 0, 20_000],
} as const

type IntegerOption = keyof typeof INTEGER_OPTIONS

/** A longer allowlist is a mistake rather than a choice; the import caps its work anyway. */
const MAX_CLAUDE_PROJECTS = 256
/** Folder-to-project mappings: a handful is the use; many hundreds would be walked on every record. */
const MAX_PROJECT_NAMES = 256

const modelId = z.string().regex(/^[^/\s]+\/\S+$/, 'expected "provider/model"')

const schema = z
  .strictObject({
    generate_memories: z.boolean(),
    use_memories: z.boolean(),
    dedicated_tools: z.boolean(),
    disable_on_external_context: z.boolean(),
    extract_model: modelId,
    consolidation_model: modelId,
    max_raw_memories_for_consolidation: z.number(),
    max_unused_days: z.number(),
    max_rollout_age_days: z.number(),
    max_rollouts_per_startup: z.number(),
    min_rollout_idle_hours: z.number(),
    v2_ready_sessions: z.number(),
    daily_token_budget: z.number(),
    memory_max_bytes: z.number(),
    memory_max_lines: z.number(),
    skill_max_bytes: z.number(),
    skill_max_lines: z.number(),
    codex_interop: z.strictObject({
      import: z.boolean().optional(),
      export: z.boolean().optional(),
      codex_home: z.string().min(1).optional(),
    }),
    claude_import: z.strictObject({
      enabled: z.boolean().optional(),
      claude_home: z.string().min(1).optional(),
      /** Project keys (folder names under projects/) or project folders; unset: every project. */
      projects: z.array(z.string().min(1)).max(MAX_CLAUDE_PROJECTS).optional(),
    }),
    checkpoint: z.strictObject({
      enabled: z.boolean().optional(),
      /** augment: the view joins the host's compaction; replace: it is the compaction, where the host allows. */
      mode: z.enum(["augment", "replace"]).optional(),
    }),
    version: z.enum(["v1", "v2"]),
    dual_write: z.boolean(),
    home: z.string().min(1),
    /** Folder -> project name: every session in that folder or below is that project (the longest folder wins). */
    project_names: z
      .record(z.string().min(1), z.string().trim().min(1).max(200))
      .refine((value) => Object.keys(value).length <= MAX_PROJECT_NAMES, `at most ${MAX_PROJECT_NAMES} folders`),
  })
  .partial()

type RawOptions = Infer<typeof schema>

export interface MemoryOptions {
  generate_memories: boolean
  use_memories: boolean
  dedicated_tools: boolean
  disable_on_external_context: boolean
  extract_model: string | undefined
  consolidation_model: string | undefined
  max_raw_memories_for_consolidation: number
  max_unused_days: number
  max_rollout_age_days: number
  max_rollouts_per_startup: number
  min_rollout_idle_hours: number
  v2_ready_sessions: number
  daily_token_budget: number
  /** Size budget of MEMORY.md and each SKILL.md after a consolidation; 0 is off. */
  memory_max_bytes: number
  memory_max_lines: number
  skill_max_bytes: number
  skill_max_lines: number
  codex_interop: { import: boolean; export: boolean; codex_home: string | undefined }
  claude_import: { enabled: boolean; claude_home: string | undefined; projects: readonly string[] | undefined }
  checkpoint: { enabled: boolean; mode: "augment" | "replace" }
  version: "v1" | "v2"
  dual_write: boolean
  home: string | undefined
  /** Folder (absolute, or starting with `~/`) -> project name. */
  project_names: Readonly<Record<string, string>>
}

export interface ParsedOptions {
  options: MemoryOptions
  warnings: string[]
}

export const DEFAULT_OPTIONS: MemoryOptions = Object.freeze({
  generate_memories: true,
  use_memories: true,
  // Codex defaults to false; here the tools are the reliable way in, since OpenCode has no
  // read-only shell grant for the memory folder.
  dedicated_tools: true,
  disable_on_external_context: false,
  extract_model: undefined,
  consolidation_model: undefined,
  max_raw_memories_for_consolidation: INTEGER_OPTIONS.max_raw_memories_for_consolidation[0],
  max_unused_days: INTEGER_OPTIONS.max_unused_days[0],
  max_rollout_age_days: INTEGER_OPTIONS.max_rollout_age_days[0],
  max_rollouts_per_startup: INTEGER_OPTIONS.max_rollouts_per_startup[0],
  min_rollout_idle_hours: INTEGER_OPTIONS.min_rollout_idle_hours[0],
  v2_ready_sessions: INTEGER_OPTIONS.v2_ready_sessions[0],
  daily_token_budget: INTEGER_OPTIONS.daily_token_budget[0],
  memory_max_bytes: INTEGER_OPTIONS.memory_max_bytes[0],
  memory_max_lines: INTEGER_OPTIONS.memory_max_lines[0],
  skill_max_bytes: INTEGER_OPTIONS.skill_max_bytes[0],
  skill_max_lines: INTEGER_OPTIONS.skill_max_lines[0],
  codex_interop: Object.freeze({ import: false, export: false, codex_home: undefined }),
  claude_import: Object.freeze({ enabled: false, claude_home: undefined, projects: undefined }),
  checkpoint: Object.freeze({ enabled: true, mode: "augment" as const }),
  version: "v1",
  dual_write: false,
  home: undefined,
  project_names: Object.freeze({}),
})

export function parseOptions(input: unknown): ParsedOptions {
  const warnings: string[] = []
  const raw = validOptions(input, warnings)
  const options: MemoryOptions = {
    ...DEFAULT_OPTIONS,
    ...definedOnly(raw),
    codex_interop: {
      import: raw.codex_interop?.import ?? false,
      export: raw.codex_interop?.export ?? false,
      codex_home: raw.codex_interop?.codex_home,
    },
    claude_import: {
      enabled: raw.claude_import?.enabled ?? false,
      claude_home: raw.claude_import?.claude_home,
      projects: raw.claude_import?.projects,
    },
    checkpoint: {
      enabled: raw.checkpoint?.enabled ?? true,
      mode: raw.checkpoint?.mode ?? "augment",
    },
  }
  if (!options.checkpoint.enabled && raw.checkpoint?.mode) warnings.push('option "checkpoint.mode" is set but checkpoint.enabled is false; it is not used')
  options.project_names = projectNames(raw.project_names, warnings)
  warnings.push(...interopWarnings(options))
  for (const key of Object.keys(INTEGER_OPTIONS) as IntegerOption[]) {
    options[key] = clampInteger(key, raw[key], warnings)
  }
  return { options, warnings }
}

/** Validates the whole object, then drops each key that failed and validates the rest again. */
function validOptions(input: unknown, warnings: string[]): RawOptions {
  if (input === undefined || input === null) return {}
  if (typeof input !== "object" || Array.isArray(input)) {
    warnings.push(`plugin options must be an object; got ${describe(input)}, using defaults`)
    return {}
  }
  let candidate: Record<string, unknown> = { ...(input as Record<string, unknown>) }
  // Each round removes every key that failed, so a few rounds always reach a valid object.
  for (let round = 0; round < 8; round++) {
    const result = schema.safeParse(candidate)
    if (result.success) return result.data
    for (const issue of result.error.issues) {
      const at = issue.path.map(String)
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          warnings.push(`unknown option "${[...at, key].join(".")}" ignored`)
          candidate = withoutPath(candidate, [...at, key])
        }
        continue
      }
      if (at.length === 0) return {}
      warnings.push(`option "${at.join(".")}": ${issue.message}; using the default`)
      candidate = withoutPath(candidate, at)
    }
  }
  return {}
}

/** A copy of `value` without the entry at `path`; objects on the way are copied, not mutated. */
function withoutPath(value: Record<string, unknown>, path: string[]): Record<string, unknown> {
  const [head, ...rest] = path
  if (head === undefined) return value
  const copy = { ...value }
  const child = copy[head]
  if (rest.length === 0 || typeof child !== "object" || child === null) delete copy[head]
  else copy[head] = withoutPath(child as Record<string, unknown>, rest)
  return copy
}

/** Settings that are valid but cannot take effect as combined. */
function interopWarnings(options: MemoryOptions): string[] {
  const warnings: string[] = []
  const codex = options.codex_interop
  const onlyV2Writes = options.generate_memories && options.version === "v2" && !options.dual_write
  if ((codex.import || codex.export) && onlyV2Writes) {
    warnings.push('option "codex_interop": the exchange with Codex runs through the Memory V1 writer, and only V2 learns here (version "v2" without dual_write); it is off')
  }
  if (codex.codex_home && !codex.import && !codex.export) warnings.push('option "codex_interop.codex_home" is set but neither import nor export is on; it is not used')
  const claude = options.claude_import
  if (!claude.enabled && (claude.claude_home || claude.projects)) warnings.push('option "claude_import": claude_home or projects is set but enabled is false; nothing is imported')
  if (claude.projects && claude.projects.length === 0) warnings.push('option "claude_import.projects" is empty: no project is imported')
  return warnings
}

/** The mappings whose folder means the same wherever OpenCode runs: absolute, or under the home folder. */
function projectNames(value: Record<string, string> | undefined, warnings: string[]): Readonly<Record<string, string>> {
  const kept: Record<string, string> = {}
  for (const [folder, name] of Object.entries(value ?? {})) {
    if (path.isAbsolute(folder) || folder === "~" || folder.startsWith("~/")) kept[folder] = name
    else warnings.push(`option "project_names": the folder "${folder}" must be absolute or start with ~/; ignored`)
  }
  return kept
}

function clampInteger(key: IntegerOption, value: number | undefined, warnings: string[]): number {
  const [fallback, min, max] = INTEGER_OPTIONS[key]
  if (value === undefined) return fallback
  if (!Number.isFinite(value)) {
    warnings.push(`option "${key}" must be a finite number; using the default ${fallback}`)
    return fallback
  }
  const clamped = Math.min(max, Math.max(min, Math.floor(value)))
  if (clamped !== value) warnings.push(`option "${key}" = ${value} adjusted to ${clamped} (allowed: whole numbers ${min} to ${max})`)
  return clamped
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

function describe(value: unknown): string {
  return Array.isArray(value) ? "an array" : typeof value
}

/** "provider/model" -> its parts; the model id may itself contain slashes. */
export function parseModel(value: string | undefined): ModelRef | undefined {
  const slash = value?.indexOf("/") ?? -1
  if (!value || slash <= 0 || slash === value.length - 1) return undefined
  return { providerID: value.slice(0, slash), modelID: value.slice(slash + 1) }
}
