// Turns failures into tool replies. Tools never throw to the host: a refusal or a bad argument
// is a clear message the model can act on, and anything unexpected says what failed.
import { MemoryError } from "../src/backend/errors.js"
import { errorMessage } from "../src/diagnostics.js"
import { z, type InferShape, type RawShape } from "../src/util/zod.js"
import type { ToolCall, ToolReply, ToolSpec } from "./spec.js"

export function errorReply(tool: string, error: unknown): ToolReply {
  if (error instanceof MemoryError) {
    return { title: `${tool}: ${error.kind}`, output: `Error (${error.kind}): ${error.message}`, metadata: { error: error.kind } }
  }
  return { title: `${tool}: failed`, output: `Error (io): ${tool} failed: ${errorMessage(error)}`, metadata: { error: "io" } }
}

/** Numbers lines like an editor gutter, so the model can cite exact ranges. */
export function numberLines(lines: readonly string[], firstLine: number): string {
  const width = String(firstLine + Math.max(0, lines.length - 1)).length
  return lines.map((line, index) => `${String(firstLine + index).padStart(width, " ")}| ${line}`).join("\n")
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
