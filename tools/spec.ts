// Host-neutral tool specs. A spec names its arguments with zod and returns plain text plus
// metadata; the OpenCode adapter (src/v1/tools.ts) turns specs into OpenCode tools.
import { MemoryError } from "../src/backend/errors.js"
import { errorReply } from "./reply.js"
import { z, type InferShape, type RawShape } from "../src/util/zod.js"

/** What a tool may use from the call: the same fields OpenCode's tool context gives. */
export interface ToolCall {
  sessionID: string
  messageID: string
  agent: string
  abort: AbortSignal
  /** Asks the user for approval; rejects when they (or the host) decline. */
  ask(input: { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> }): Promise<void>
}

export interface ToolReply {
  title?: string
  output: string
  metadata?: Record<string, unknown>
}

export interface ToolSpec<Shape extends RawShape = RawShape> {
  name: string
  description: string
  args: Shape
  execute(args: InferShape<Shape>, call: ToolCall): Promise<ToolReply>
}

/** Typed constructor: ties `execute`'s arguments to the declared shape. */
export function defineTool<Shape extends RawShape>(spec: ToolSpec<Shape>): ToolSpec<Shape> {
  return spec
}

/**
 * The spec's `execute` as a host calls it: arguments checked against the spec's own schema first
 * (neither host can be relied on to: OpenCode 1.18.33 passed a call without `title` through), and
 * every failure caught and returned as a reply the model can act on, so a tool never throws into
 * the host. `onFault` hears of the failures that are not the model's to fix. The schema is built
 * once per adapter, not on every call.
 */
export function guardedExecute<Shape extends RawShape>(spec: ToolSpec<Shape>, onFault: (error: unknown) => void): (input: unknown, call: ToolCall) => Promise<ToolReply> {
  const schema = z.object(spec.args)
  return async (input, call) => {
    const parsed = schema.safeParse(input ?? {})
    if (!parsed.success) {
      const detail = parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ")
      return errorReply(spec.name, new MemoryError("invalid_argument", `${detail}. Call ${spec.name} again with the arguments its schema names.`))
    }
    try {
      return await spec.execute(parsed.data as InferShape<Shape>, call)
    } catch (error) {
      if (!(error instanceof MemoryError) || error.kind === "io") onFault(error)
      return errorReply(spec.name, error)
    }
  }
}
