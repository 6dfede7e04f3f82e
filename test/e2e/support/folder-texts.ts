// Every file of a folder as text, for tests that check nothing secret was written anywhere in it.
import fs from "node:fs"
import path from "node:path"
import zlib from "node:zlib"

/** Every file under `dir` as text; git objects are inflated first, so their contents are searched too. */
export function folderTexts(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    let bytes = fs.readFileSync(file)
    if (file.includes(`${path.sep}.git${path.sep}objects${path.sep}`)) {
      try {
        bytes = zlib.inflateSync(bytes)
      } catch {
        // a pack or index file: searched as it is
      }
    }
    out.push([path.relative(dir, file), bytes.toString("latin1")])
  }
  return out
}
