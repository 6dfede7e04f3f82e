// Host-neutral tool specs -> OpenCode 1.x tool definitions. Every execution is caught here, so
// a tool never throws into OpenCode: failures come back as a readable reply.
// Types only: OpenCode's plugin package is a development dependency (its `tool()` is the identity
// function, and installing it would bring `effect` to every user).
import type { ToolDefinition } from "@opencode-ai/plugin/tool"
import { errorReply } from "../../tools/reply.js"
import { checkArgs, type ToolSpec } from "../../tools/spec.js"
import type { Diagnostics } from "../diagnostics.js"
import { MemoryError } from "../backend/errors.js"

export function toV1Tools(specs: readonly ToolSpec[], diagnostics: Diagnostics): Record<string, ToolDefinition> {
  const tools: Record<string, ToolDefinition> = {}
  for (const spec of specs) {
    tools[spec.name] = {
      description: spec.description,
      args: spec.args,
      async execute(args, context) {
        const checked = checkArgs(spec, args)
        if (!checked.ok) return errorReply(spec.name, checked.error)
        try {
          return await spec.execute(checked.args as never, context)
        } catch (error) {
          // Wrong arguments are the model's to fix; anything else is worth a diagnostic.
          if (!(error instanceof MemoryError) || error.kind === "io") diagnostics.error(spec.name, error)
          return errorReply(spec.name, error)
        }
      },
    } satisfies ToolDefinition
  }
  return tools
}
