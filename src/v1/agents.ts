// The bundled `memorize` and `memorize-extract` agents (deny-first, in the package's
// opencode.json, read by src/write/helpers/bundled-agents.ts) are put into OpenCode's config; a user's
// block of the same name may only tune them (src/write/helpers/helper-agents.ts decides which keys).
import type { AgentDefinitions } from "../write/helpers/bundled-agents.js"
import { mergeHelperAgent } from "../write/helpers/helper-agents.js"

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
