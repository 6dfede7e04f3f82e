// The package's own folder, found from this module's location. It holds `templates/` and the
// bundled `opencode.json`, whether the code runs from `src/` (tests, Bun) or from `dist/src/`.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = path.dirname(from)
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "templates"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`opencode-codex-memory: package folder not found above ${from}`)
    dir = parent
  }
}
