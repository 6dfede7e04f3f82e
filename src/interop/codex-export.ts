// OpenCode -> Codex: after a successful consolidation with valid artifacts, this memory's
// MEMORY.md and memory_summary.md are copied into Codex's memory as an extension
// ($CODEX_HOME/memories/extensions/opencode_import/), which Codex's own consolidation reads through
// its workspace diff. Strictly additive: only when Codex's memory folder already exists (Codex's
// workspace is never created here), only inside that one extension folder, never a database; each
// file written to a temp file and renamed over.
import fs from "node:fs"
import path from "node:path"
import type { ExtensionSync, WorkspaceExtension } from "../write/workspace-extension.js"
import { mirrorFolder, readSource, writeFileIfChanged } from "./mirror.js"

export const CODEX_EXPORT_DIR = "extensions/opencode_import"
const RESOURCES = "resources/opencode"
const FILES = ["MEMORY.md", "memory_summary.md"] as const

export function codexExport(options: { codexMemoryRoot: string; instructions: string }): WorkspaceExtension {
  let last = "not run yet"
  return {
    name: "codex export",
    hasSource: () => false,
    afterSuccess(root): ExtensionSync {
      const codex = fs.lstatSync(options.codexMemoryRoot, { throwIfNoEntry: false })
      if (!codex || codex.isSymbolicLink() || !codex.isDirectory()) {
        last = `skipped: ${options.codexMemoryRoot} does not exist (Codex has not started its memory; it is not created from here)`
        return { changed: false, detail: last }
      }
      const files = new Map<string, Buffer>()
      for (const name of FILES) {
        const bytes = readSource(path.join(root, name))
        if (bytes) files.set(name, bytes)
      }
      // Every folder from Codex's memory root down is checked: no symlink is written through.
      const base = options.codexMemoryRoot
      const instructions = writeFileIfChanged(base, `${CODEX_EXPORT_DIR}/instructions.md`, Buffer.from(options.instructions, "utf8"))
      const mirrored = mirrorFolder(base, `${CODEX_EXPORT_DIR}/${RESOURCES}`, files)
      const changed = instructions || mirrored.written.length > 0 || mirrored.removed.length > 0
      last = changed ? `exported ${[...mirrored.written, ...(instructions ? ["instructions.md"] : [])].join(", ") || "a removal"} to ${path.join(base, CODEX_EXPORT_DIR)}` : "Codex already has this memory"
      return { changed, detail: last }
    },
    describe: () => `codex export: to ${path.join(options.codexMemoryRoot, CODEX_EXPORT_DIR)}; last run: ${last}`,
  }
}
