// Turns failures into tool replies. Tools never throw to the host: a refusal or a bad argument
// is a clear message the model can act on, and anything unexpected says what failed.
import { MemoryError } from "../src/backend/errors.js"
import { errorMessage } from "../src/diagnostics.js"
import type { ToolReply } from "./spec.js"

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
