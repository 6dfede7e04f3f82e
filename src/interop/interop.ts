// Which exchanges with other agents a memory version runs, from the options: the Codex import and
// export through the V1 writer only (Codex's handbook format is V1's), the Claude Code import for
// every writer. An exchange whose folders overlap this memory's (the same folder, or one inside
// the other) is turned off, with a warning: copying a folder into itself would feed memory its
// own echo.
import type { MemoryOptions } from "../options.js"
import { loadTemplate } from "../util/templates.js"
import type { MemoryVersion } from "../util/paths.js"
import type { WorkspaceExtension } from "../write/phase2/workspace-extension.js"
import { claudeImport } from "./claude-import.js"
import { codexExport } from "./codex-export.js"
import { codexImport } from "./codex-import.js"
import { codexRoots, type CodexRoot } from "./codex-roots.js"
import { claudeHome, codexHome, overlaps } from "./paths.js"

export interface InteropPlan {
  /** The extensions one version's phase 2 runs. */
  forVersion(version: MemoryVersion): WorkspaceExtension[]
  /** Why an exchange the options asked for is off. */
  warnings: string[]
}

export interface InteropInput {
  options: MemoryOptions
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  templatesDir: string
  /** Every version's memory folder. */
  memoryRoots: readonly string[]
}

export function planInterop(input: InteropInput): InteropPlan {
  const { options } = input
  const warnings: string[] = []
  const clash = (theirs: string) => input.memoryRoots.find((root) => overlapsOrUnknown(theirs, root))
  let codex: CodexRoot[] | undefined
  if (options.codex_interop.import || options.codex_interop.export) {
    const roots = codexRoots(codexHome(options.codex_interop.codex_home, input.env, input.homedir))
    const clashing = roots.map((r) => ({ theirs: r.root, ours: clash(r.root) })).find((pair) => pair.ours)
    if (clashing) warnings.push(`codex_interop is off: Codex's memory folder ${clashing.theirs} and this memory's ${clashing.ours} are the same folder or one holds the other (or could not be compared)`)
    else codex = roots
  }
  let claude: { home: string } | undefined
  if (options.claude_import.enabled) {
    const home = claudeHome(options.claude_import.claude_home, input.homedir)
    const ours = clash(home)
    if (ours) warnings.push(`claude_import is off: the Claude home ${home} and this memory's ${ours} are the same folder or one holds the other (or could not be compared)`)
    else claude = { home }
  }
  const text = (name: string) => loadTemplate(input.templatesDir, name).text
  return {
    warnings,
    forVersion(version) {
      const extensions: WorkspaceExtension[] = []
      if (codex && version === "v1") {
        if (options.codex_interop.import) extensions.push(codexImport({ roots: codex, instructions: text("extensions/codex_import/instructions.md") }))
        if (options.codex_interop.export) extensions.push(codexExport({ roots: codex, instructions: text("interop/opencode_import.instructions.md") }))
      }
      if (claude) extensions.push(claudeImport({ claudeHome: claude.home, projects: options.claude_import.projects, instructions: text("extensions/external_agent_import/instructions.md") }))
      return extensions
    },
  }
}

/** Fails closed: folders that cannot be compared are treated as overlapping. */
function overlapsOrUnknown(a: string, b: string): boolean {
  try {
    return overlaps(a, b)
  } catch {
    return true
  }
}
