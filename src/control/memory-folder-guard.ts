// The memory folder belongs to the consolidator. What is written there is injected into every
// later conversation, so an ordinary agent that could write it would turn one prompt injection
// into an instruction for every session after it. This judges one tool call of an ordinary
// session: a file tool whose target lies inside a memory root, or a shell command that names one,
// is refused with the reason. Hosts whose permission rules can say so (OpenCode 2) deny it there
// too; OpenCode 1.x only asks for an external folder, which a user may grant, so its adapter
// refuses the call itself. Pure.
import path from "node:path"

/** What an ordinary session's agent may not do inside the memory folder. */
export interface FolderRules {
  /** Every form of every memory root (as named and as resolved). */
  roots: readonly string[]
  /** The session's folder, against which relative paths resolve. */
  directory: string | undefined
  /** The user wrote a rule for a resource inside a root for file writes, or for the shell: left to that rule. */
  userDecides?: { files?: boolean; shell?: boolean }
}

const ADVICE = "use memory_add_note to add to memory, and memory_mode or the opencode-codex-memory CLI to forget"
const FILE_TOOLS = new Set(["write", "edit", "multiedit"])
const PATCH_TOOLS = new Set(["patch", "apply_patch"])
const SHELL_TOOLS = new Set(["bash", "shell"])

/** The reason a call is refused, or undefined when it may run. */
export function memoryFolderRefusal(tool: string, args: unknown, rules: FolderRules): string | undefined {
  const roots = [...new Set(rules.roots.map((root) => path.resolve(root)))]
  if (!roots.length) return undefined
  const fields = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {}
  const inside = (file: string) => {
    const target = path.resolve(rules.directory ?? process.cwd(), file)
    return roots.find((root) => {
      const relative = path.relative(root, target)
      return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
    })
  }
  const refuse = (root: string) => `the memory folder ${root} is written only by memory's consolidation (what is there is shown to every later conversation); ${ADVICE}`
  if (!rules.userDecides?.files) {
    if (FILE_TOOLS.has(tool)) {
      const file = [fields.filePath, fields.path].find((value): value is string => typeof value === "string" && value.length > 0)
      const root = file ? inside(file) : undefined
      if (root) return refuse(root)
    }
    if (PATCH_TOOLS.has(tool)) {
      const text = [fields.patchText, fields.patch, fields.input].find((value): value is string => typeof value === "string") ?? ""
      for (const match of text.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) {
        const root = inside((match[1] ?? match[2] ?? "").trim())
        if (root) return refuse(root)
      }
    }
  }
  if (!rules.userDecides?.shell && SHELL_TOOLS.has(tool)) {
    const command = typeof fields.command === "string" ? fields.command : ""
    const named = [...new Set([...roots, ...rules.roots.map((root) => root.replace(/\/+$/, ""))])].find((root) => command.includes(root))
    if (named) return `shell commands that name the memory folder ${named} are refused (it is written only by memory's consolidation); read it with memory_read and memory_search; ${ADVICE}`
  }
  return undefined
}

/**
 * Whether a user's OpenCode 1.x permission config already decides for a resource inside a root:
 * a pattern key under `edit` (files) or `bash` (the shell) that names one.
 */
export function userFolderRules(permission: unknown, roots: readonly string[]): { files: boolean; shell: boolean } {
  const names = (key: string) => {
    const value = typeof permission === "object" && permission !== null ? (permission as Record<string, unknown>)[key] : undefined
    if (typeof value !== "object" || value === null) return false
    return Object.keys(value).some((pattern) => roots.some((root) => pattern.includes(root.replace(/\/+$/, ""))))
  }
  return { files: names("edit") || names("write"), shell: names("bash") }
}
