// The permission rules every helper session is created with. They are the sandbox itself: the
// bundled agents say the same, but an agent definition can come from elsewhere (a user's config,
// another plugin's config hook), and a session's rules are evaluated after the agent's.
//
// What OpenCode 1.18.33 does with them (anomalyco/opencode packages/opencode/src/permission/
// evaluate.ts at 8d037a73, and the JavaScript bundled in the shipped 1.18.33 binary, which has
// the same evaluate, merge and disabled; see docs/decisions/08-helper-agents-are-deny-first-and-their-sandbox.md):
// - every check is `merge(agent.permission, session.permission)` searched with `findLast`: the
//   last rule whose permission and pattern both match wins (default "ask"); a tool is not even
//   offered when the last rule naming it has pattern `*` and action deny;
// - `*` in a pattern matches any run of characters, `/` included; `?` one character;
// - file tools first ask `external_directory` with `<absolute folder of the target>/*` (built with
//   path.join, so `..` is already resolved), but only for targets outside the session's directory;
//   then `read`/`edit` with the target relative to the project's worktree (the memory folder,
//   which holds its own `.git`); `write` and `apply_patch` ask `edit`; `glob`/`grep` ask with the
//   search pattern.
import fs from "node:fs"
import type { PermissionRule } from "../../host.js"
import type { HelperRole } from "./helper-sessions.js"

/** The file tools the consolidator works with; everything else is denied. */
export const CONSOLIDATOR_TOOLS = ["read", "edit", "write", "glob", "grep"] as const
/** OpenCode's tool for a json_schema answer: the only tool the extractor gets. */
export const STRUCTURED_OUTPUT_TOOL = "StructuredOutput"

/**
 * Deny-first rules for one helper session. The extractor may only answer; the consolidator may
 * use the file tools, never outside `memoryRoots` (the memory folder as the plugin names it and
 * as the file system resolves it), and never on the git baseline.
 */
export function helperSessionRules(role: HelperRole, memoryRoots: readonly string[]): PermissionRule[] {
  const rules: PermissionRule[] = [{ permission: "*", pattern: "*", action: "deny" }]
  if (role === "extract") {
    rules.push({ permission: STRUCTURED_OUTPUT_TOOL, pattern: "*", action: "allow" })
    return rules
  }
  for (const tool of CONSOLIDATOR_TOOLS) rules.push({ permission: tool, pattern: "*", action: "allow" })
  // The baseline is the plugin's: a consolidator that could write `.git/` could corrupt it or
  // plant git configuration that runs commands.
  for (const tool of ["edit", "write"]) {
    for (const pattern of [".git", ".git/*", "*/.git", "*/.git/*"]) rules.push({ permission: tool, pattern, action: "deny" })
  }
  rules.push({ permission: "external_directory", pattern: "*", action: "deny" })
  // Only needed when a path names the folder differently from the session (a symlink on the way);
  // a root holding wildcard characters would widen the grant, so it gets none.
  for (const root of new Set(memoryRoots.map(toPattern))) {
    if (!root || /[*?]/.test(root)) continue
    rules.push({ permission: "external_directory", pattern: `${root}/*`, action: "allow" })
  }
  return rules
}

/** The memory root as given and as the file system resolves it (they differ through symlinks). */
export function memoryRootForms(memoryRoot: string): string[] {
  try {
    return [...new Set([memoryRoot, fs.realpathSync(memoryRoot)])]
  } catch {
    return [memoryRoot]
  }
}

function toPattern(root: string): string {
  return root.replaceAll("\\", "/").replace(/\/+$/, "")
}
