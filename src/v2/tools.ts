// Host-neutral tool specs -> OpenCode 2 tool definitions. Inputs are JSON Schema built from the
// same zod shapes V1 uses, and every tool sets `codemode: false`: OpenCode 2 otherwise reaches
// plugin tools only through its Code Mode `execute` tool, and the read-path prompt names these
// tools as the model sees them. Arguments are checked with the spec's own schema before it runs,
// and every failure comes back as the same readable reply as on V1. A tool that needs the user's
// approval (memory_reset) asks through the permission domain: 2.1.2 does not evaluate a plugin
// tool's `permission` option, and ran memory_reset without asking.
import { guardedExecute } from "../../tools/reply.js"
import type { ToolCall, ToolSpec } from "../../tools/spec.js"
import type { Diagnostics } from "../diagnostics.js"
import { z } from "../util/zod.js"
import type { V2Context, V2ToolCall, V2ToolInfo, V2ToolResult } from "./api.js"

/** Tools whose use the user must approve, by the permission named on them (the tool also asks itself). */
const APPROVED_BY_HOST: Readonly<Record<string, string>> = { memory_reset: "memory_reset" }

export function toV2Tools(specs: readonly ToolSpec[], diagnostics: Diagnostics, permissions: V2Context["permission"]): V2ToolInfo[] {
  return specs.map((spec) => {
    const schema = z.object(spec.args)
    const execute = guardedExecute(spec, (error) => diagnostics.error(spec.name, error))
    const permission = APPROVED_BY_HOST[spec.name]
    return {
      name: spec.name,
      description: spec.description,
      input: compactSchema(z.toJSONSchema(schema)) as Record<string, unknown>,
      options: { codemode: false, ...(permission ? { permission } : {}) },
      async execute(input: unknown, call: V2ToolCall): Promise<V2ToolResult> {
        return toResult(await execute(input, toolCall(call, permissions)))
      },
    }
  })
}

function toolCall(call: V2ToolCall, permission: V2Context["permission"]): ToolCall {
  return {
    sessionID: call.sessionID,
    messageID: call.messageID ?? "",
    agent: call.agent ?? "",
    abort: call.signal ?? new AbortController().signal,
    async ask(input) {
      // Without a way to ask, nothing that needs approval runs.
      if (!permission) throw new Error("this OpenCode offers no permission domain to ask the user through")
      await permission.assert({
        action: input.permission,
        resources: input.patterns,
        save: input.always,
        metadata: input.metadata,
        sessionID: call.sessionID,
        ...(call.agent ? { agent: call.agent } : {}),
        source: { type: "tool", ...(call.messageID ? { messageID: call.messageID } : {}), ...(call.id ? { id: call.id } : {}) },
      })
    },
  }
}

function toResult(reply: { title?: string; output: string; metadata?: Record<string, unknown> }): V2ToolResult {
  return { content: reply.output, metadata: withoutNulls({ ...(reply.title ? { title: reply.title } : {}), ...reply.metadata }) as Record<string, unknown> }
}

/**
 * The JSON Schema as the model needs it: without the `$schema` URL and the `additionalProperties:
 * false` zod adds to every object, which cost 20 to 60 characters each on every request; the
 * spec's own schema still checks the arguments before a tool runs.
 */
export function compactSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactSchema)
  if (typeof schema !== "object" || schema === null) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$schema" || (key === "additionalProperties" && value === false)) continue
    out[key] = compactSchema(value)
  }
  return out
}

/**
 * The value with every null left out (object keys, array items), at any depth. 2.1.2 never
 * completes a tool call whose metadata holds a null (the part stays "running" and the model is
 * told its result is missing), so an absent field says "none" instead.
 */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== null && item !== undefined).map(withoutNulls)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (item !== null && item !== undefined) out[key] = withoutNulls(item)
  return out
}
