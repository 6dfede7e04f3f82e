// The helper agents the package ships (`memorize`, `memorize-extract`), read from its
// opencode.json: deny-first, each with its own prompt file. Written in OpenCode 1's config format;
// the OpenCode 1 adapter installs them as they are, the OpenCode 2 adapter takes their roles and
// prompts and gives them its own rules.
import fs from "node:fs"
import path from "node:path"

export type AgentDefinitions = Record<string, Record<string, unknown>>

const MEMORY_ROOT_PLACEHOLDER = "{{ memory_root }}"
/** OpenCode's own config syntax for "this file's text", relative to the config file. */
const FILE_REFERENCE = /^\{file:(\.\/[^}]+)\}$/

export interface BundledAgentOptions {
  /**
   * false drops the agents' own `prompt`, so OpenCode falls back to its default coding prompt.
   * Only the benchmark's before/after comparison asks for that (a test switch).
   */
  prompts?: boolean
}

/**
 * Reads the bundled agents, loads each `prompt` given as `{file:./...}` (relative to the package,
 * like OpenCode resolves it in a config file), and points the one external-directory grant at
 * `memoryRoot`. An agent's own prompt replaces OpenCode's coding-agent prompt in its requests.
 */
export function bundledAgents(packageDir: string, memoryRoot: string, options: BundledAgentOptions = {}): AgentDefinitions {
  const text = fs.readFileSync(path.join(packageDir, "opencode.json"), "utf8")
  const agents = (JSON.parse(text) as { agent?: AgentDefinitions }).agent ?? {}
  for (const agent of Object.values(agents)) {
    if (options.prompts === false) delete agent.prompt
    else if (typeof agent.prompt === "string") agent.prompt = loadPrompt(packageDir, agent.prompt)
  }
  // Substituted in the parsed value, so a memory root holding quotes or backslashes stays valid.
  return substitute(agents, memoryRoot) as AgentDefinitions
}

function loadPrompt(packageDir: string, value: string): string {
  const reference = FILE_REFERENCE.exec(value)
  if (!reference) return value
  return fs.readFileSync(path.join(packageDir, reference[1]!), "utf8").trimEnd()
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
