// Codex -> OpenCode: Codex's consolidated memory is copied into this memory's
// `extensions/codex_import/` inside each claimed consolidation, after the workspace is prepared
// and before the diff, as Codex orders its own imports: MEMORY.md and memory_summary.md of its V1
// folder into `resources/codex/`, the summary of its V2 folder into `resources/codex/v2/`. A file
// Codex no longer has is removed here too, so the diff carries the forgetting. What is copied is
// redacted first: nothing reaches this folder unredacted.
import fs from "node:fs"
import path from "node:path"
import { redact } from "../redact/redact.js"
import type { ExtensionSync, WorkspaceExtension } from "../write/phase2/workspace-extension.js"
import type { CodexRoot } from "./codex-roots.js"
import { mirrorFolder, readSource, writeFileIfChanged } from "./mirror.js"

export const CODEX_IMPORT_DIR = "extensions/codex_import"
const RESOURCES = `${CODEX_IMPORT_DIR}/resources/codex`
/** What each of Codex's folders holds that is worth importing, and where it lands under resources/codex/. */
const SOURCES: Readonly<Record<CodexRoot["version"], ReadonlyArray<[from: string, to: string]>>> = {
  v1: [
    ["MEMORY.md", "MEMORY.md"],
    ["memory_summary.md", "memory_summary.md"],
  ],
  v2: [["memory_summary.md", "v2/memory_summary.md"]],
}

export function codexImport(options: { roots: readonly CodexRoot[]; instructions: string }): WorkspaceExtension {
  let last = "not run yet"
  const sources = () =>
    options.roots.flatMap(({ version, root }) => SOURCES[version].map(([from, to]) => ({ file: path.join(root, from), to })))
  const read = () => {
    const files = new Map<string, Buffer>()
    for (const { file, to } of sources()) {
      const bytes = readSource(file)
      if (bytes) files.set(to, Buffer.from(redact(bytes.toString("utf8")).text, "utf8"))
    }
    return files
  }
  return {
    name: "codex import",
    hasSource: () => sources().some(({ file }) => fs.lstatSync(file, { throwIfNoEntry: false })?.isFile()),
    sync(root): ExtensionSync {
      const files = read()
      if (files.size === 0 && !fs.existsSync(path.join(root, CODEX_IMPORT_DIR))) {
        last = "nothing to import (Codex has no consolidated memory)"
        return { changed: false, detail: last }
      }
      const instructions = writeFileIfChanged(root, `${CODEX_IMPORT_DIR}/instructions.md`, Buffer.from(options.instructions, "utf8"))
      const mirrored = mirrorFolder(root, RESOURCES, files)
      const changed = instructions || mirrored.written.length > 0 || mirrored.removed.length > 0
      last = changed
        ? `copied ${mirrored.written.length ? mirrored.written.join(", ") : "nothing new"}${mirrored.removed.length ? `; removed ${mirrored.removed.join(", ")} (gone from Codex)` : ""}`
        : `Codex's memory unchanged (${files.size} file(s))`
      return { changed, detail: last }
    },
    describe: () => `codex import: from ${options.roots.map((r) => r.root).join(" and ")}; last run: ${last}`,
  }
}
