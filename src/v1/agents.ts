// The bundled `memorize` and `memorize-extract` agents (deny-first, in the package's
// opencode.json) are put into OpenCode's config; a user's block of the same name may only tune
// them (src/write/helper-agents.ts decides which keys).
import fs from "node:fs"
import path from "node:path"
import { mergeHelperAgent } from "../write/helper-agents.js"

export type AgentDefinitions = Record<string, Record<string, unknown>>

const MEMORY_ROOT_PLACEHOLDER = "{{ memory_root }}"

/** Reads the bundled agents and points their one external-directory grant at `memoryRoot`. */
export function bundledAgents(packageDir: string, memoryRoot: string): AgentDefinitions {
  const text = fs.readFileSync(path.join(packageDir, "opencode.json"), "utf8")
  const agents = (JSON.parse(text) as { agent?: AgentDefinitions }).agent ?? {}
  // Substituted in the parsed value, so a memory root holding quotes or backslashes stays valid.
  return substitute(agents, memoryRoot) as AgentDefinitions
}

export interface InstalledAgents {
  /** Agents the config did not define. */
  added: string[]
  /** Per agent the user also defined: the keys of the user's block that were dropped. */
  ignored: Record<string, string[]>
}

/**
 * Puts each bundled agent into the config. A user's block of the same name keeps only its tunable
 * keys (model, sampling, options, steps); the bundled permissions and role always win.
 */
export function installHelperAgents(config: { agent?: Record<string, unknown> }, agents: AgentDefinitions): InstalledAgents {
  const installed: InstalledAgents = { added: [], ignored: {} }
  config.agent ??= {}
  for (const [name, bundled] of Object.entries(agents)) {
    const user = config.agent[name]
    const merged = mergeHelperAgent(bundled, user)
    config.agent[name] = merged.definition
    if (user === undefined) installed.added.push(name)
    else installed.ignored[name] = merged.ignored
  }
  return installed
}

function substitute(value: unknown, memoryRoot: string): unknown {
  const fill = (text: string) => text.split(MEMORY_ROOT_PLACEHOLDER).join(memoryRoot)
  if (typeof value === "string") return fill(value)
  if (Array.isArray(value)) return value.map((item) => substitute(item, memoryRoot))
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [fill(key), substitute(item, memoryRoot)]))
  }
  return value
}
