// Switches that only a test run can turn on: each is read from the environment only when the
// test root is set, so no user setting can reach them.
import fs from "node:fs"
import { ENV_TEST_ROOT } from "./paths.js"

/** Hook names that fail on purpose, comma-separated. */
export const ENV_TEST_FAULTS = "OPENCODE_CODEX_MEMORY_TEST_FAULTS"
/** Shifts the plugin's clock (milliseconds), so tests can make sessions old without waiting. */
export const ENV_TEST_CLOCK_OFFSET = "OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS"
/** "1" gives the helper agents OpenCode's default prompt instead of their own (the benchmark's "before"). */
export const ENV_TEST_DEFAULT_HELPER_PROMPT = "OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT"
/**
 * A file holding more milliseconds to add to the clock, re-read when it changes: a test moves a
 * running OpenCode's plugin clock forward (past a throttle or a cooldown) without restarting it.
 */
export const ENV_TEST_CLOCK_FILE = "OPENCODE_CODEX_MEMORY_TEST_CLOCK_FILE"
/** The name of one kill point (killPoint): a test makes its child process die there, as a crash would. */
export const ENV_TEST_KILL_AT = "OPENCODE_CODEX_MEMORY_TEST_KILL_AT"

export interface TestSwitches {
  clockOffsetMs: number
  /** The moving part of the clock's offset (ENV_TEST_CLOCK_FILE), when a test set one. */
  clockFile?: string
  faults: ReadonlySet<string>
  /** Whether the helper agents carry their own prompt. */
  helperPrompts: boolean
}

export function testSwitches(env: Readonly<Record<string, string | undefined>>): TestSwitches {
  if (!env[ENV_TEST_ROOT]) return { clockOffsetMs: 0, faults: new Set(), helperPrompts: true }
  return {
    clockOffsetMs: Number(env[ENV_TEST_CLOCK_OFFSET] ?? 0) || 0,
    ...(env[ENV_TEST_CLOCK_FILE] ? { clockFile: env[ENV_TEST_CLOCK_FILE] } : {}),
    faults: new Set((env[ENV_TEST_FAULTS] ?? "").split(",").map((item) => item.trim()).filter(Boolean)),
    helperPrompts: env[ENV_TEST_DEFAULT_HELPER_PROMPT] !== "1",
  }
}

/** The offset a clock file holds (0 when it is missing or not a number), re-read only when its size or mtime changes. */
export function fileOffset(file: string): () => number {
  let seen: { key: string; value: number } | undefined
  return () => {
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    const key = stat ? `${stat.size}:${stat.mtimeMs}` : "missing"
    if (seen?.key !== key) seen = { key, value: stat ? Number(fs.readFileSync(file, "utf8").trim()) || 0 : 0 }
    return seen.value
  }
}

/**
 * Kills this process with SIGKILL (no handler, no finally, no clean-up runs) when a test named
 * this point, so a test can prove what a crash at exactly this step leaves. Read from the process's
 * environment at the point itself: the points sit in file helpers that take no environment.
 */
export function killPoint(name: string, env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (env[ENV_TEST_ROOT] && env[ENV_TEST_KILL_AT] === name) process.kill(process.pid, "SIGKILL")
}
