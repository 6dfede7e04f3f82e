// What a finished tool call tells the checkpoint, as the host saw it: files read, edited or written
// (uri relative to the project folder when inside it) and commands run with their exit status. The
// plugin's own memory tools are bookkeeping, not work, and are not observed. Pure: the hash is
// passed in by the caller, which computes it from disk (file-hash.ts).
import path from "node:path"
import type { Artifact } from "./checkpoint.js"

export interface ToolResult {
  tool: string
  callID: string
  args: unknown
  metadata?: unknown
}

export type Observation =
  | { type: "file"; uri: string; file: string; op: Artifact["op"]; callId: string }
  | { type: "command"; command: string; exitStatus: number | null; callId: string }
  | { type: "todos"; todos: Array<{ id?: string; content: string; status: string }> }

const FILE_OPS: Readonly<Record<string, Artifact["op"]>> = { read: "read", edit: "edit", multiedit: "edit", write: "write", patch: "edit" }
/** Tools that only look around; each call is still evidence a fact may cite. */
const OWN_TOOLS = /^memory_/

export function observeToolResult(result: ToolResult, directory: string | undefined): Observation | undefined {
  const args = record(result.args) ?? {}
  if (OWN_TOOLS.test(result.tool)) return undefined
  if (result.tool === "todowrite" && Array.isArray(args.todos)) {
    const todos = args.todos.flatMap((todo) => {
      const fields = record(todo)
      if (!fields || typeof fields.content !== "string") return []
      return [{ ...(typeof fields.id === "string" ? { id: fields.id } : {}), content: fields.content, status: typeof fields.status === "string" ? fields.status : "pending" }]
    })
    return { type: "todos", todos }
  }
  const op = Object.hasOwn(FILE_OPS, result.tool) ? FILE_OPS[result.tool] : undefined
  const filePath = typeof args.filePath === "string" ? args.filePath : typeof args.path === "string" ? args.path : undefined
  if (op && filePath) {
    const file = directory ? path.resolve(directory, filePath) : path.resolve(filePath)
    return { type: "file", uri: fileUri(file, directory), file, op, callId: result.callID }
  }
  const exit = record(result.metadata)?.exit
  const command = result.tool === "bash" && typeof args.command === "string" ? args.command : `${result.tool} ${compactArgs(args)}`.trim()
  return { type: "command", command, exitStatus: typeof exit === "number" ? exit : null, callId: result.callID }
}

/** A path inside the project folder as a relative POSIX path; anything else absolute. */
export function fileUri(file: string, directory: string | undefined): string {
  if (!directory) return file
  const relative = path.relative(directory, file)
  if (!relative || relative.startsWith("..") || path.isAbsolute(relative)) return file
  return relative.split(path.sep).join("/")
}

/** The file a uri names, for re-hashing at render time. */
export function fileOfUri(uri: string, directory: string | undefined): string {
  return path.isAbsolute(uri) || !directory ? uri : path.resolve(directory, uri)
}

function compactArgs(args: Record<string, unknown>): string {
  try {
    return JSON.stringify(args) ?? ""
  } catch {
    return ""
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}
