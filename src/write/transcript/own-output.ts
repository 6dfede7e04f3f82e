// Memory never learns from memory. A session that read memory (with the plugin's own tools, or
// with the host's file tools pointed at the memory folder) has memory's text in its tool results;
// extracting them would copy memory back into a new record: a forgotten fact returns, a known one
// is duplicated. So such a tool call is rendered as one line naming the tool, and what the user and
// the assistant said about it stays. Pure.
import path from "node:path"
import { MEMORY_TOOL_NAMES } from "../../constants.js"

/** Whether a finished tool call's result is memory's own text. */
export type OwnToolCall = (tool: string, input: unknown) => boolean

/** Where memory's own files are, and how a tool input may spell them. */
export interface OwnFiles {
  /** The memory home and every memory folder and database in it, absolute. */
  paths: readonly string[]
  /** The user's home folder (`~/`, `$HOME/`). */
  homedir?: string
  /** XDG_DATA_HOME, when set (`$XDG_DATA_HOME/`). */
  dataHome?: string
}

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
 * `paths`: the memory home and every memory folder and database in it, absolute. A call is
 * memory's own when it is one of the plugin's tools, or when any string of its input names
 * something inside one of `paths` (a database's `-wal` and `-shm` files included): absolute, from
 * the home folder as `~/`, `$HOME/` or `${HOME}/` (or `$XDG_DATA_HOME/` when given), inside a command
 * line, or relative to the session's folder. A search of the memory home reads the folders in it.
 */
export function ownToolCalls(files: OwnFiles, directory?: string): OwnToolCall {
  const options = { ...files, directory }
  const roots = files.paths.map((p) => path.resolve(p))
  const needles = new Set<string>()
  const spelled = (base: string | undefined, names: readonly string[]) => {
    if (!base) return
    const resolved = path.resolve(base)
    for (const root of roots) if (root.startsWith(resolved + path.sep)) for (const name of names) needles.add(`${name}${root.slice(resolved.length)}`)
  }
  for (const root of roots) needles.add(root)
  spelled(options.homedir, ["~", "$HOME", "${HOME}"])
  spelled(options.dataHome, ["$XDG_DATA_HOME", "${XDG_DATA_HOME}"])
  // A longer name that merely starts like a root (`memories_old`, `memories-bak`) is not inside
  // it; a database's sidecars (`memory.db-wal`) are part of it.
  const ends = (needle: string) => (needle.endsWith(".db") ? /[\w.]/ : /[\w.-]/)
  const inside = (candidate: string) => roots.some((root) => candidate === root || candidate.startsWith(root + path.sep) || (root.endsWith(".db") && candidate.startsWith(`${root}-`)))
  const names = (text: string): boolean => {
    for (const needle of needles) {
      const boundary = ends(needle)
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
        if (!boundary.test(text.charAt(at + needle.length))) return true
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
