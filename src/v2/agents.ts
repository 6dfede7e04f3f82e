// The helper agents on OpenCode 2, registered through the agent domain: the roles and prompts
// the package ships (src/write/bundled-agents.ts), with V2 rules instead of V1's permission map.
// The consolidator's rules confine it to the memory roots as its sessions' rules do (sandbox.ts);
// the extractor gets no tool at all (V2 extracts with generate.text, no session). Every other
// agent is made to ask before `memory_reset` runs, unless its rules already decide that.
import type { AgentDefinitions } from "../write/bundled-agents.js"
import type { V2AgentEditor, V2AgentInfo, V2Rule } from "./api.js"
import { v2HelperRules } from "./sandbox.js"

const ROLES = { memorize: "consolidate", "memorize-extract": "extract" } as const
const RESET_PERMISSION = "memory_reset"

/** Applies the helper agents to an agent editor (a transform callback: synchronous, replayed on every rebuild). */
export function installV2Agents(editor: V2AgentEditor, bundled: AgentDefinitions, memoryRoots: readonly string[]): void {
  for (const [id, role] of Object.entries(ROLES)) {
    const source = bundled[id] ?? {}
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
      agent.permissions = askBeforeReset(agent.permissions ?? [])
    })
  }
}

/** The rules with an `ask` for memory_reset appended, unless a rule already names that permission. */
export function askBeforeReset(rules: readonly V2Rule[]): V2Rule[] {
  if (rules.some((rule) => rule.action === RESET_PERMISSION)) return [...rules]
  return [...rules, { action: RESET_PERMISSION, resource: "*", effect: "ask" }]
}
