// Codex -> OpenCode: Codex's consolidated memory (MEMORY.md, memory_summary.md in
// $CODEX_HOME/memories) is copied into this memory's `extensions/codex_import/` inside each claimed
// consolidation, after the workspace is prepared and before the diff, as Codex orders its own
// imports. A file Codex no longer has is removed here too, so the diff carries the forgetting.
// What is copied is redacted first: nothing reaches this folder unredacted.
import fs from "node:fs"
import path from "node:path"
import { redact } from "../redact/redact.js"
import type { ExtensionSync, WorkspaceExtension } from "../write/workspace-extension.js"
import { mirrorFolder, readSource, writeFileIfChanged } from "./mirror.js"

export const CODEX_IMPORT_DIR = "extensions/codex_import"
const RESOURCES = "resources/codex"
const FILES = ["MEMORY.md", "memory_summary.md"] as const

export function codexImport(options: { codexMemoryRoot: string; instructions: string }): WorkspaceExtension {
  let last = "not run yet"
  const sources = () => {
    const files = new Map<string, Buffer>()
    for (const name of FILES) {
      const bytes = readSource(path.join(options.codexMemoryRoot, name))
      if (bytes) files.set(name, Buffer.from(redact(bytes.toString("utf8")).text, "utf8"))
    }
    return files
  }
  return {
    name: "codex import",
    hasSource: () => FILES.some((name) => fs.lstatSync(path.join(options.codexMemoryRoot, name), { throwIfNoEntry: false })?.isFile()),
    sync(root): ExtensionSync {
      const files = sources()
      const folder = path.join(root, CODEX_IMPORT_DIR)
      if (files.size === 0 && !fs.existsSync(folder)) {
        last = `nothing to import (no MEMORY.md or memory_summary.md in ${options.codexMemoryRoot})`
        return { changed: false, detail: last }
      }
      const instructions = writeFileIfChanged(root, `${CODEX_IMPORT_DIR}/instructions.md`, Buffer.from(options.instructions, "utf8"))
      const mirrored = mirrorFolder(root, `${CODEX_IMPORT_DIR}/${RESOURCES}`, files)
      const changed = instructions || mirrored.written.length > 0 || mirrored.removed.length > 0
      last = changed
        ? `copied ${mirrored.written.length ? mirrored.written.join(", ") : "nothing new"}${mirrored.removed.length ? `; removed ${mirrored.removed.join(", ")} (gone from Codex)` : ""}`
        : `Codex's memory unchanged (${files.size} file(s))`
      return { changed, detail: last }
    },
    describe: () => `codex import: from ${options.codexMemoryRoot}; last run: ${last}`,
  }
}
