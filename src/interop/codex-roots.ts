// Codex keeps a memory folder per memory version under its home: `memories/` (V1) and
// `memories_v2/` (V2, the default of Codex 0.171). Codex reads whichever its `[memories] version`
// selects, so the exchange knows both.
import path from "node:path"

export interface CodexRoot {
  /** Codex's memory version: "v1" for memories/, "v2" for memories_v2/. */
  version: "v1" | "v2"
  root: string
}

export function codexRoots(codexHome: string): CodexRoot[] {
  return [
    { version: "v1", root: path.join(codexHome, "memories") },
    { version: "v2", root: path.join(codexHome, "memories_v2") },
  ]
}
