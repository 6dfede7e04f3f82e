// The consolidator's sandbox on OpenCode 2. There a helper session runs in the plugin's location
// (V2 agents belong to a location), not in the memory folder, so the session's own rules have to
// name the memory root: file tools may touch it and nothing else, its `.git` baseline never. The
// search tools are checked by pattern rather than by path, so their calls are also checked here,
// in process: a search of the helper's session must stay inside its one root, and a relative one
// starts there; file tools get the same check in process, beside the rules. Pure.
import path from "node:path"
import type { V2Rule } from "./api.js"

// Released 2.0.x asks `edit` for its write, edit and patch tools; `write` rules stay because
// whether a tool is offered at all may be judged by its own id (a rule-set that denies `*` and
// never names `write` could drop the tool from the consolidator's list).
const FILE_TOOLS = ["read", "edit", "write"] as const
const SEARCH_TOOLS = ["glob", "grep"] as const

/** Deny-first session rules for a helper of `role` confined to `roots` (one root, as named and as resolved). */
export function v2HelperRules(role: "extract" | "consolidate", roots: readonly string[]): V2Rule[] {
  const rules: V2Rule[] = [{ action: "*", resource: "*", effect: "deny" }]
  if (role === "extract") return rules
  const forms = [...new Set(roots.map(normalizeRoot))].filter((root) => root && !/[*?]/.test(root))
  for (const root of forms) {
    for (const tool of FILE_TOOLS) rules.push({ action: tool, resource: root, effect: "allow" }, { action: tool, resource: `${root}/*`, effect: "allow" })
    rules.push({ action: "external_directory", resource: root, effect: "allow" }, { action: "external_directory", resource: `${root}/*`, effect: "allow" })
  }
  // Patterns are not paths: the search tools are allowed here and confined by confineSearch.
  for (const tool of SEARCH_TOOLS) rules.push({ action: tool, resource: "*", effect: "allow" })
  for (const root of forms) {
    for (const tool of ["edit", "write"]) {
      rules.push({ action: tool, resource: `${root}/.git`, effect: "deny" }, { action: tool, resource: `${root}/.git/*`, effect: "deny" })
    }
  }
  return rules
}

export type SearchCheck = { ok: true; input: Record<string, unknown> } | { ok: false; reason: string }

/**
 * A glob or grep call of a confined helper, checked against its root: no `path` searches the
 * root, a relative one is taken from the root, an absolute one must lie inside it; a pattern may
 * not climb out (`..`) or start at the file system's root.
 */
export function confineSearch(input: unknown, root: string): SearchCheck {
  const fields = typeof input === "object" && input !== null && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : {}
  const base = path.resolve(root)
  const given = typeof fields.path === "string" && fields.path.trim() ? fields.path.trim() : undefined
  const target = given === undefined ? base : path.resolve(base, given)
  if (!inside(base, target)) return { ok: false, reason: `searches are confined to the memory folder ${base}; ${given} is outside it` }
  for (const key of ["pattern", "include"]) {
    const value = fields[key]
    if (typeof value !== "string") continue
    if (path.isAbsolute(value) || value.split(/[\\/]/).includes("..")) return { ok: false, reason: `the ${key} "${value}" would leave the memory folder ${base}` }
  }
  return { ok: true, input: { ...fields, path: target } }
}

/**
 * A read, write or edit call of a confined helper, checked against its root in process, beside
 * the session's rules: a relative file is taken from the root (not from the user's project, the
 * session's location), an absolute one must lie inside the root.
 */
export function confineFile(input: unknown, root: string): SearchCheck {
  const fields = typeof input === "object" && input !== null && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : {}
  // OpenCode 2's file tools name the file `path`; `filePath` is V1's name, checked all the same.
  const key = typeof fields.path === "string" ? "path" : typeof fields.filePath === "string" ? "filePath" : undefined
  if (!key) return { ok: false, reason: "a file tool of the memory consolidator needs a path" }
  const base = path.resolve(root)
  const target = path.resolve(base, fields[key] as string)
  if (!inside(base, target)) return { ok: false, reason: `file tools are confined to the memory folder ${base}; ${String(fields[key])} is outside it` }
  return { ok: true, input: { ...fields, [key]: target } }
}

function inside(root: string, target: string): boolean {
  const relative = path.relative(root, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

function normalizeRoot(root: string): string {
  return root.replaceAll("\\", "/").replace(/\/+$/, "")
}
