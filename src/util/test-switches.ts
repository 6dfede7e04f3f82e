// Switches that only a test run can turn on: each is read from the environment only when the
// test root is set, so no user setting can reach them.
import { ENV_TEST_ROOT } from "./paths.js"

/** Hook names that fail on purpose, comma-separated. */
export const ENV_TEST_FAULTS = "OPENCODE_CODEX_MEMORY_TEST_FAULTS"
/** Shifts the plugin's clock (milliseconds), so tests can make sessions old without waiting. */
export const ENV_TEST_CLOCK_OFFSET = "OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS"
/** "1" gives the helper agents OpenCode's default prompt instead of their own (the benchmark's "before"). */
export const ENV_TEST_DEFAULT_HELPER_PROMPT = "OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT"

export interface TestSwitches {
  clockOffsetMs: number
  faults: ReadonlySet<string>
  /** Whether the helper agents carry their own prompt. */
  helperPrompts: boolean
}

export function testSwitches(env: Readonly<Record<string, string | undefined>>): TestSwitches {
  if (!env[ENV_TEST_ROOT]) return { clockOffsetMs: 0, faults: new Set(), helperPrompts: true }
  return {
    clockOffsetMs: Number(env[ENV_TEST_CLOCK_OFFSET] ?? 0) || 0,
    faults: new Set((env[ENV_TEST_FAULTS] ?? "").split(",").map((item) => item.trim()).filter(Boolean)),
    helperPrompts: env[ENV_TEST_DEFAULT_HELPER_PROMPT] !== "1",
  }
}
