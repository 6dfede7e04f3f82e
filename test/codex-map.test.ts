// codex-map.yaml names, for every source, tool and template file, the Codex code it follows or
// that it is host-specific. A file added without an entry, or an entry left behind by a file that
// moved, fails here. A key ending in "/" covers every file below that folder.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { load } from "js-yaml"
import { describe, expect, it } from "vitest"

const repo = fileURLToPath(new URL("..", import.meta.url))
const MAPPED_FOLDERS = ["src", "tools", "templates"]

interface Entry {
  codex?: unknown
  host_only?: unknown
  note?: unknown
  divergence?: unknown
}

/** The map key that covers `file`: its own entry, else the deepest folder entry above it. */
function coveringKey(file: string, keys: readonly string[]): string | undefined {
  if (keys.includes(file)) return file
  return keys.filter((key) => key.endsWith("/") && file.startsWith(key)).sort((a, b) => b.length - a.length)[0]
}

/** Files with no entry, and entries naming nothing that exists (folder keys must be folders). */
function mapProblems(files: readonly string[], keys: readonly string[], kindOf: (key: string) => "file" | "folder" | undefined): string[] {
  const problems = files.filter((file) => coveringKey(file, keys) === undefined).map((file) => `${file}: no entry`)
  for (const key of keys) {
    const kind = kindOf(key.replace(/\/$/, ""))
    if (kind === undefined) problems.push(`${key}: names nothing that exists`)
    else if (key.endsWith("/") !== (kind === "folder")) problems.push(`${key}: is a ${kind}`)
  }
  return problems
}

function filesUnder(folder: string): string[] {
  return fs.readdirSync(path.join(repo, folder), { recursive: true, encoding: "utf8" })
    .map((file) => path.posix.join(folder, file.split(path.sep).join("/")))
    .filter((file) => fs.statSync(path.join(repo, file)).isFile())
}

function kindOnDisk(relative: string): "file" | "folder" | undefined {
  const full = path.join(repo, relative)
  if (!fs.existsSync(full)) return undefined
  return fs.statSync(full).isDirectory() ? "folder" : "file"
}

const map = load(fs.readFileSync(path.join(repo, "codex-map.yaml"), "utf8")) as { files: Record<string, Entry> }

describe("codex-map.yaml", () => {
  it("has an entry for every source, tool and template file, and only for paths that exist", () => {
    const files = MAPPED_FOLDERS.flatMap(filesUnder)
    expect(files.length).toBeGreaterThan(50)
    expect(mapProblems(files, Object.keys(map.files), kindOnDisk)).toEqual([])
  })

  it("says for each entry which Codex code it follows, or that it is host-specific", () => {
    for (const [key, entry] of Object.entries(map.files)) {
      const codex = entry.codex
      const follows = Array.isArray(codex) && codex.length > 0 && codex.every((p) => typeof p === "string" && p.startsWith("codex-rs/"))
      expect(follows || entry.host_only === true, `${key}: needs codex paths (codex-rs/...) or host_only: true`).toBe(true)
      expect(follows && entry.host_only === true, `${key}: cannot both follow Codex and be host-only`).toBe(false)
    }
  })

  it("the check catches an unmapped file, a stale entry, and a folder key on a file", () => {
    const kinds: Record<string, "file" | "folder"> = { "src/a.ts": "file", "src/sub": "folder", "src/sub/b.ts": "file", "src/c.ts": "file" }
    const problems = mapProblems(["src/a.ts", "src/sub/b.ts", "src/c.ts"], ["src/a.ts", "src/sub/", "src/gone.ts", "src/c.ts/"], (key) => kinds[key])
    expect(problems).toEqual(["src/c.ts: no entry", "src/gone.ts: names nothing that exists", "src/c.ts/: is a file"])
  })
})
