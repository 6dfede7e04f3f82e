// The host's side of staleness: a file's content hash, computed by the plugin and never taken from
// the model. Reads are bounded: a file above the cap is hashed from its size and mtime instead (a
// weaker hash that still changes when the file is rewritten). A file that cannot be read, or is
// not a regular file, has no hash: facts depending on it render SUSPECT (unknown).
import { createHash } from "node:crypto"
import fs from "node:fs"

/** Files up to this size are hashed by content. */
export const HASH_MAX_BYTES = 8 * 1024 * 1024

export function fileHash(file: string): string | undefined {
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return undefined
    if (stat.size > HASH_MAX_BYTES) return `stat:${stat.size}-${Math.trunc(stat.mtimeMs)}`
    return `sha256:${createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 16)}`
  } catch {
    return undefined
  }
}
