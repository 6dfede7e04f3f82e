// Memory never learns from memory. A session that read memory (with the plugin's own tools, or
// with the host's file tools pointed at the memory folder) has memory's text in its tool results;
// extracting them would copy memory back into a new record: a forgotten fact returns, a known one
// is duplicated. So such a tool call is rendered as one line naming the tool, and what the user and
// the assistant said about it stays. Pure.
import path from "node:path"
import { MEMORY_TOOL_NAMES } from "../constants.js"

/** Whether a finished tool call's result is memory's own text. */
export type OwnToolCall = (tool: string, input: unknown) => boolean

/** How the transcript shows such a call instead of its input and result. */
export function ownToolLine(tool: string): string {
  return MEMORY_TOOL_NAMES.includes(tool)
    ? `[tool ${tool}] (a memory tool: its result is memory's own text, left out so memory does not learn from itself)`
    : `[tool ${tool}] (it read the memory folder: its result is memory's own text, left out so memory does not learn from itself)`
}

/** Strings looked at in one tool input, at most: inputs are small, and this bounds a strange one. */
const MAX_STRINGS = 64
const MAX_DEPTH = 4

/**
 * `paths`: every memory folder and memory database of the home, absolute. A call is memory's own
 * when it is one of the plugin's tools, or when any string of its input names something inside
 * one of `paths`: absolute, as `~/...`, inside a command line, or relative to the session's folder.
 */
export function ownToolCalls(paths: readonly string[], options: { homedir?: string; directory?: string } = {}): OwnToolCall {
  const roots = paths.map((p) => path.resolve(p))
  const needles = new Set<string>()
  for (const root of roots) {
    needles.add(root)
    if (options.homedir) {
      const home = path.resolve(options.homedir)
      if (root.startsWith(home + path.sep)) needles.add(`~${root.slice(home.length)}`)
    }
  }
  const inside = (candidate: string) => roots.some((root) => candidate === root || candidate.startsWith(root + path.sep))
  const names = (text: string): boolean => {
    for (const needle of needles) {
      // A longer name that merely starts like a root (`memories_old`) is not inside it.
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
        if (!/[\w.-]/.test(text.charAt(at + needle.length))) return true
      }
    }
    // A bare relative path, resolved where the session runs.
    return options.directory !== undefined && !/\s/.test(text) && !path.isAbsolute(text) && text.length > 0 && inside(path.resolve(options.directory, text))
  }
  return (tool, input) => {
    if (MEMORY_TOOL_NAMES.includes(tool)) return true
    let seen = 0
    const visit = (value: unknown, depth: number): boolean => {
      if (seen >= MAX_STRINGS) return false
      if (typeof value === "string") {
        seen++
        return names(value)
      }
      if (depth >= MAX_DEPTH || typeof value !== "object" || value === null) return false
      for (const item of Array.isArray(value) ? value : Object.values(value)) if (visit(item, depth + 1)) return true
      return false
    }
    return visit(input, 0)
  }
}
