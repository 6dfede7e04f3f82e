// Host-neutral tool specs. A spec names its arguments with zod and returns plain text plus
// metadata; the OpenCode adapter (src/v1/tools.ts) turns specs into OpenCode tools.
import { MemoryError } from "../src/backend/errors.js"
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
 * The call's arguments checked against the spec's own schema, before it runs: neither host can be
 * relied on to have done it (OpenCode 1.18.33 passed a call without `title` through). A failure is
 * a reply the model can act on: each wrong field and what it must be.
 */
export function checkArgs<Shape extends RawShape>(spec: ToolSpec<Shape>, input: unknown): { ok: true; args: InferShape<Shape> } | { ok: false; error: MemoryError } {
  const parsed = z.object(spec.args).safeParse(input ?? {})
  if (parsed.success) return { ok: true, args: parsed.data as InferShape<Shape> }
  const detail = parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ")
  return { ok: false, error: new MemoryError("invalid_argument", `${detail}. Call ${spec.name} again with the arguments its schema names.`) }
}
