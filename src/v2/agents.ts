// The helper agents on OpenCode 2, registered through the agent domain: the roles and prompts
// the package ships (src/write/helpers/bundled-agents.ts), with V2 rules instead of V1's permission map.
// The consolidator's rules confine it to the memory roots as its sessions' rules do (sandbox.ts);
// the extractor gets no tool at all (V2 extracts with generate.text, no session). Every other
// agent is made to ask before `memory_reset` runs, unless its rules already decide that, and is
// denied the helpers as subagents: the plugin starts them itself, never through `subagent`; and
// is kept out of the memory folder (protectMemoryFolder).
import type { AgentDefinitions } from "../write/helpers/bundled-agents.js"
import type { V2AgentEditor, V2AgentInfo, V2Rule } from "./api.js"
import { v2HelperRules } from "./sandbox.js"

const ROLES = { memorize: "consolidate", "memorize-extract": "extract" } as const
const RESET_PERMISSION = "memory_reset"
const SUBAGENT_PERMISSION = "subagent"

/**
 * Applies the helper agents (when memory learns: `bundled`) and the rules for every other agent
 * to an agent editor (a transform callback: synchronous, replayed on every rebuild).
 */
export function installV2Agents(editor: V2AgentEditor, bundled: AgentDefinitions | undefined, memoryRoots: readonly string[]): void {
  for (const [id, role] of bundled ? Object.entries(ROLES) : []) {
    const source = bundled?.[id] ?? {}
    editor.update(id, (agent: V2AgentInfo) => {
      agent.mode = "subagent"
      agent.hidden = true
      if (typeof source.description === "string") agent.description = source.description
      if (typeof source.prompt === "string") agent.system = source.prompt
      agent.permissions = v2HelperRules(role, memoryRoots)
    })
  }
  for (const entry of editor.list?.() ?? []) {
    // Releases differ: a list of ids, or of agents.
    const id = typeof entry === "string" ? entry : (entry as { id?: unknown } | undefined)?.id
    if (typeof id !== "string" || id in ROLES) continue
    editor.update(id, (agent) => {
      agent.permissions = protectMemoryFolder(denyHelpersAsSubagents(askBeforeReset(agent.permissions ?? [])), memoryRoots)
    })
  }
}

/** The rules with an `ask` for memory_reset appended, unless a rule already names that permission. */
export function askBeforeReset(rules: readonly V2Rule[]): V2Rule[] {
  if (rules.some((rule) => rule.action === RESET_PERMISSION)) return [...rules]
  return [...rules, { action: RESET_PERMISSION, resource: "*", effect: "ask" }]
}

/**
 * OpenCode 2's `subagent` tool lists each agent that is neither primary, hidden nor denied to the
 * caller, and runs any agent the caller names that its rules do not deny
 * (packages/core/src/tool/plugin/subagent.ts). The helpers are hidden, so they are not listed;
 * these rules also refuse a call that names one. A rule the user wrote for one of them wins.
 */
export function denyHelpersAsSubagents(rules: readonly V2Rule[]): V2Rule[] {
  const named = (id: string) => rules.some((rule) => rule.action === SUBAGENT_PERMISSION && rule.resource === id)
  return [...rules, ...Object.keys(ROLES).filter((id) => !named(id)).map((id) => ({ action: SUBAGENT_PERMISSION, resource: id, effect: "deny" as const }))]
}

/** The tools a rule names when it writes files: OpenCode 2 checks `edit` for its write, edit and patch tools. */
const WRITE_ACTIONS = ["edit", "write"] as const
const SHELL_ACTIONS = ["shell", "bash"] as const

/**
 * The memory folder belongs to the consolidator: what it says is injected into every
 * conversation, so an agent that could write there would turn one prompt injection into an
 * instruction for every later session. Appended last (the last match wins): file writes inside
 * each root form are denied, and so is a shell command that names one; the memory tools stay the
 * way a model changes memory. A rule the user wrote for a resource inside a root wins, for that
 * action.
 */
export function protectMemoryFolder(rules: readonly V2Rule[], memoryRoots: readonly string[]): V2Rule[] {
  const roots = [...new Set(memoryRoots.map((root) => root.replaceAll("\\", "/").replace(/\/+$/, "")))].filter((root) => root && !/[*?]/.test(root))
  const named = (action: string) => rules.some((rule) => rule.action === action && roots.some((root) => rule.resource === root || rule.resource.startsWith(`${root}/`) || rule.resource.includes(root)))
  const added: V2Rule[] = []
  for (const action of WRITE_ACTIONS) {
    if (named(action)) continue
    for (const root of roots) added.push({ action, resource: root, effect: "deny" }, { action, resource: `${root}/*`, effect: "deny" })
  }
  for (const action of SHELL_ACTIONS) {
    if (named(action)) continue
    for (const root of roots) added.push({ action, resource: `*${root}*`, effect: "deny" })
  }
  return [...rules, ...added]
}
