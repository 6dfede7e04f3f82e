// OpenCode -> Codex: after a successful consolidation with valid artifacts, this memory's
// MEMORY.md and memory_summary.md are copied into Codex's memory as an extension
// (`extensions/opencode_import/`), which Codex's own consolidation reads through its workspace
// diff: into each of Codex's memory folders that exists (V1's `memories/`, V2's `memories_v2/`).
// Strictly additive: a folder Codex has not made is never made here, nothing outside that one
// extension folder is touched, never a database; each file goes to a temp file renamed over it.
import fs from "node:fs"
import path from "node:path"
import type { ExtensionSync, WorkspaceExtension } from "../write/phase2/workspace-extension.js"
import type { CodexRoot } from "./codex-roots.js"
import { mirrorFolder, readSource, writeFileIfChanged } from "./mirror.js"

export const CODEX_EXPORT_DIR = "extensions/opencode_import"
const RESOURCES = `${CODEX_EXPORT_DIR}/resources/opencode`
const FILES = ["MEMORY.md", "memory_summary.md"] as const

export function codexExport(options: { roots: readonly CodexRoot[]; instructions: string }): WorkspaceExtension {
  let last = "not run yet"
  return {
    name: "codex export",
    hasSource: () => false,
    afterSuccess(root): ExtensionSync {
      const targets = options.roots.filter(({ root: codex }) => {
        const stat = fs.lstatSync(codex, { throwIfNoEntry: false })
        return !!stat && !stat.isSymbolicLink() && stat.isDirectory()
      })
      if (targets.length === 0) {
        last = `skipped: Codex has no memory folder yet (${options.roots.map((r) => r.root).join(", ")}); none is created from here`
        return { changed: false, detail: last }
      }
      const files = new Map<string, Buffer>()
      for (const name of FILES) {
        const bytes = readSource(path.join(root, name))
        if (bytes) files.set(name, bytes)
      }
      const into: string[] = []
      for (const { root: codex } of targets) {
        // Every folder from Codex's memory root down is checked: no symlink is written through.
        const instructions = writeFileIfChanged(codex, `${CODEX_EXPORT_DIR}/instructions.md`, Buffer.from(options.instructions, "utf8"))
        const mirrored = mirrorFolder(codex, RESOURCES, files)
        if (instructions || mirrored.written.length || mirrored.removed.length) into.push(path.join(codex, CODEX_EXPORT_DIR))
      }
      last = into.length ? `exported to ${into.join(" and ")}` : "Codex already has this memory"
      return { changed: into.length > 0, detail: last }
    },
    describe: () => `codex export: to ${options.roots.map((r) => path.join(r.root, CODEX_EXPORT_DIR)).join(" and ")} (those that exist); last run: ${last}`,
  }
}
