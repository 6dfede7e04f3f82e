// Where the plugin keeps its state. The memory home holds `memory.db` and `memories/`.
import path from "node:path"
import { STORE } from "../constants.js"

export const ENV_TEST_ROOT = "OPENCODE_CODEX_MEMORY_TEST_ROOT"
export const ENV_HOME = "OPENCODE_CODEX_MEMORY_HOME"
/** Set to 1, the plugin does nothing in that process: OpenCode runs as if it were not installed. */
export const ENV_DISABLE = "OPENCODE_CODEX_MEMORY_DISABLE"

/**
 * Set to 1 (the private OpenCode that `doctor` starts to see the plugin load): the plugin
 * registers everything as usual and runs no background work, so the probe learns nothing.
 */
export const ENV_PROBE = "OPENCODE_CODEX_MEMORY_PROBE"

/** Whether this process runs without memory (ENV_DISABLE). */
export function memoryDisabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return env[ENV_DISABLE] === "1"
}

export type HomeSource = "test-root" | "option" | "env" | "xdg-data" | "default"

/** Memory V1 and V2 keep separate databases and folders under one home. */
export type MemoryVersion = "v1" | "v2"

export interface MemoryPaths {
  version: MemoryVersion
  home: string
  homeSource: HomeSource
  db: string
  /** The ranked search's index (derived from the folder and the records; rebuilt at will). */
  index: string
  memoryRoot: string
  summary: string
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * Test root > plugin option `home` > OPENCODE_CODEX_MEMORY_HOME > OpenCode's data dir
 * ($XDG_DATA_HOME/opencode, else ~/.local/share/opencode), which is where OpenCode keeps its own data.
 */
export function resolveHome(option: string | undefined, env: Env, homedir: string): { home: string; source: HomeSource } {
  const pick = (value: string | undefined) => (value && value.trim() ? expandHome(value.trim(), homedir) : undefined)
  const testRoot = pick(env[ENV_TEST_ROOT])
  if (testRoot) return { home: testRoot, source: "test-root" }
  const fromOption = pick(option)
  if (fromOption) return { home: fromOption, source: "option" }
  const fromEnv = pick(env[ENV_HOME])
  if (fromEnv) return { home: fromEnv, source: "env" }
  const xdg = pick(env.XDG_DATA_HOME)
  if (xdg) return { home: path.join(xdg, "opencode"), source: "xdg-data" }
  return { home: path.join(homedir, ".local", "share", "opencode"), source: "default" }
}

export function memoryPaths(home: string, homeSource: HomeSource, version: MemoryVersion): MemoryPaths {
  const suffix = version === "v1" ? "" : `_${version}`
  const memoryRoot = path.join(home, `memories${suffix}`)
  return {
    version,
    home,
    homeSource,
    db: path.join(home, STORE.FILE.replace(/\.db$/, `${suffix}.db`)),
    index: path.join(home, STORE.FILE.replace(/\.db$/, `${suffix}_index.db`)),
    memoryRoot,
    summary: path.join(memoryRoot, "memory_summary.md"),
  }
}

function expandHome(value: string, homedir: string): string {
  if (value === "~") return homedir
  if (value.startsWith("~/")) return path.join(homedir, value.slice(2))
  return path.resolve(value)
}
