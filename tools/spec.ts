// Host-neutral tool specs. A spec names its arguments with zod and returns plain text plus
// metadata; the OpenCode adapter (src/v1/tools.ts) turns specs into OpenCode tools.
import type { InferShape, RawShape } from "../src/util/zod.js"

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
