// Host-neutral tool specs -> OpenCode 1.x tool definitions. Every execution is caught here, so
// a tool never throws into OpenCode: failures come back as a readable reply.
// Types only: OpenCode's plugin package is a development dependency (its `tool()` is the identity
// function, and installing it would bring `effect` to every user).
import type { ToolDefinition } from "@opencode-ai/plugin/tool"
import { guardedExecute } from "../../tools/reply.js"
import type { ToolSpec } from "../../tools/spec.js"
import type { Diagnostics } from "../diagnostics.js"

export function toV1Tools(specs: readonly ToolSpec[], diagnostics: Diagnostics): Record<string, ToolDefinition> {
  const tools: Record<string, ToolDefinition> = {}
  for (const spec of specs) {
    const execute = guardedExecute(spec, (error) => diagnostics.error(spec.name, error))
    tools[spec.name] = {
      description: spec.description,
      args: spec.args,
      execute: (args, context) => execute(args, context),
    } satisfies ToolDefinition
  }
  return tools
}
