// Which parts of a user's own definition of a helper agent are honoured. The helpers run
// unattended over every session the user had, so what they may do is not the user's config to
// widen: the bundled definition always supplies the permissions and the agent's role, and a
// user's block may only tune how the model is called.

export type AgentDefinition = Record<string, unknown>

/**
 * Keys a user's block keeps: the model and how it is sampled, provider options, and the step
 * cap. None of them changes which tools the helper has or what they may touch.
 */
export const TUNABLE_AGENT_KEYS: readonly string[] = ["model", "variant", "temperature", "top_p", "options", "steps", "maxSteps"]

/**
 * Agent settings OpenCode knows besides the tunable ones. From a user's block they are dropped
 * (and reported): `permission`, `tools` and `disable` would widen or remove the sandbox; `mode`,
 * `hidden`, `description`, `prompt` and `name` define the helper's role; `color` only shows in
 * menus the hidden helpers never appear in.
 */
const AGENT_SETTINGS: ReadonlySet<string> = new Set(["permission", "tools", "disable", "mode", "hidden", "description", "prompt", "name", "color"])

export interface MergedAgent {
  definition: AgentDefinition
  /** The user's keys that were honoured. */
  kept: string[]
  /** The user's keys that were dropped, sorted. */
  ignored: string[]
}

/**
 * The helper agent OpenCode gets: the bundled definition, plus the tunable keys of the user's
 * block. Any other key the bundled definition has (a `prompt`, say) stays the bundled one. Keys
 * that are not agent settings at all are model options to OpenCode (it folds them into
 * `options`), so they are kept as options.
 */
export function mergeHelperAgent(bundled: AgentDefinition, user: unknown): MergedAgent {
  const definition: AgentDefinition = structuredClone(bundled)
  if (!isRecord(user)) return { definition, kept: [], ignored: [] }
  const kept: string[] = []
  const ignored: string[] = []
  const options: Record<string, unknown> = isRecord(bundled.options) ? { ...bundled.options } : {}
  let hasOptions = isRecord(bundled.options)
  for (const [key, value] of Object.entries(user)) {
    if (value === undefined) continue
    if (key === "options") {
      if (!isRecord(value)) {
        ignored.push(key)
        continue
      }
      Object.assign(options, structuredClone(value))
      hasOptions = true
      kept.push(key)
    } else if (TUNABLE_AGENT_KEYS.includes(key)) {
      definition[key] = structuredClone(value)
      kept.push(key)
    } else if (AGENT_SETTINGS.has(key) || key in bundled) {
      ignored.push(key)
    } else {
      // OpenCode has usually folded it into `options` already; an explicit option wins.
      if (!(isRecord(user.options) && key in user.options)) options[key] = structuredClone(value)
      hasOptions = true
      kept.push(key)
    }
  }
  if (hasOptions) definition.options = options
  return { definition, kept, ignored: ignored.sort() }
}

/** One sentence per agent for the log and `memory_inspect`, or none when nothing was ignored. */
export function describeIgnoredAgentKeys(ignored: Readonly<Record<string, readonly string[]>>): string[] {
  return Object.entries(ignored)
    .filter(([, keys]) => keys.length > 0)
    .map(
      ([agent, keys]) =>
        `agent "${agent}": your config's ${keys.map((key) => `"${key}"`).join(", ")} ignored; the helper keeps its bundled permissions and role (only ${TUNABLE_AGENT_KEYS.join(", ")} can be set)`,
    )
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
