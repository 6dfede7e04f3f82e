// The bundled `memorize` and `memorize-extract` agents (deny-first, in the package's
// opencode.json) are added to OpenCode's config unless the user defines agents of the same name.
import fs from "node:fs"
import path from "node:path"

export type AgentDefinitions = Record<string, Record<string, unknown>>

const MEMORY_ROOT_PLACEHOLDER = "{{ memory_root }}"

/** Reads the bundled agents and points their one external-directory grant at `memoryRoot`. */
export function bundledAgents(packageDir: string, memoryRoot: string): AgentDefinitions {
  const text = fs.readFileSync(path.join(packageDir, "opencode.json"), "utf8")
  const agents = (JSON.parse(text) as { agent?: AgentDefinitions }).agent ?? {}
  // Substituted in the parsed value, so a memory root holding quotes or backslashes stays valid.
  return substitute(agents, memoryRoot) as AgentDefinitions
}

/** Adds each agent the config lacks; a user's agent of the same name is left as it is. */
export function addMissingAgents(config: { agent?: Record<string, unknown> }, agents: AgentDefinitions): string[] {
  const added: string[] = []
  config.agent ??= {}
  for (const [name, definition] of Object.entries(agents)) {
    if (config.agent[name] !== undefined) continue
    config.agent[name] = structuredClone(definition)
    added.push(name)
  }
  return added
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
