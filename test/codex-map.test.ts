// codex-map.yaml is a contract (scripts/codex-map.ts): it matches its schema, names for every
// source, tool and template file the Codex code it follows or that it is host-specific, and names
// no path that does not exist. A key ending in "/" covers every file below that folder.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { coverageProblems, matchesPattern, parseCodexMap, readCodexMap } from "../scripts/codex-map.js"

const repo = fileURLToPath(new URL("..", import.meta.url))
const MAPPED_FOLDERS = ["src", "tools", "templates"]

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

const VALID = `codex_repo: openai/codex
codex_ref: 6219b7c40
codex_ref_date: 2026-07-30
files:
  src/a.ts:
    codex:
      - codex-rs/memories/write/src/phase2.rs
    codex_ref: abcdef1
    watch_paths: [codex-rs/state/**]
    note: Different on purpose.
  src/v1/: { host_only: true }
`

describe("codex-map.yaml", () => {
  it("matches its schema", () => {
    const result = readCodexMap(path.join(repo, "codex-map.yaml"))
    expect(result.ok ? [] : result.problems).toEqual([])
  })

  it("has an entry for every source, tool and template file, and only for paths that exist", () => {
    const result = readCodexMap(path.join(repo, "codex-map.yaml"))
    if (!result.ok) throw new Error(result.problems.join("\n"))
    const files = MAPPED_FOLDERS.flatMap(filesUnder)
    expect(files.length).toBeGreaterThan(50)
    expect(coverageProblems(files, Object.keys(result.map.files), kindOnDisk)).toEqual([])
  })

  it("the coverage check catches an unmapped file, a stale entry, and a folder key on a file", () => {
    const kinds: Record<string, "file" | "folder"> = { "src/a.ts": "file", "src/sub": "folder", "src/sub/b.ts": "file", "src/c.ts": "file" }
    const problems = coverageProblems(["src/a.ts", "src/sub/b.ts", "src/c.ts"], ["src/a.ts", "src/sub/", "src/gone.ts", "src/c.ts/"], (key) => kinds[key])
    expect(problems).toEqual(["src/c.ts: no entry", "src/gone.ts: names nothing that exists", "src/c.ts/: is a file"])
  })

  it("the schema accepts every documented field and refuses what does not match it, saying where", () => {
    expect(parseCodexMap(VALID)).toMatchObject({ ok: true })
    const problems = (text: string) => {
      const result = parseCodexMap(text)
      return result.ok ? [] : result.problems
    }
    expect(problems("files: [unclosed")).toEqual([expect.stringMatching(/^not valid YAML/)])
    expect(problems(VALID.replace("codex_ref: 6219b7c40", "codex_ref: main"))).toEqual(["codex_ref: expected a commit SHA (7 to 40 hex digits)"])
    // A SHA YAML reads as a number is refused with the fix, and accepted in quotes.
    expect(problems(VALID.replace("codex_ref: 6219b7c40", "codex_ref: 123456789"))).toEqual(["codex_ref: a commit SHA that YAML reads as a number; put it in quotes"])
    expect(problems(VALID.replace("codex_ref: 6219b7c40", 'codex_ref: "1234e5678"'))).toEqual([])
    expect(problems(VALID.replace("src/v1/: { host_only: true }", "src/v1/: { note: x }"))).toEqual(["files.src/v1/: needs either codex: [...] or host_only: true, not both"])
    expect(problems(VALID.replace("    note: Different on purpose.", "    divergence: old key"))).toEqual([expect.stringMatching(/^files\.src\/a\.ts: .*divergence/)])
    expect(problems(VALID.replace("codex-rs/memories/write/src/phase2.rs", "/abs/path.rs"))).toEqual(["files.src/a.ts.codex.0: expected a path relative to the Codex repository"])
    expect(problems(VALID.replace("codex_ref_date: 2026-07-30\n", ""))).toEqual([expect.stringMatching(/^codex_ref_date: /)])
  })

  it("matches upstream paths by file, folder and glob", () => {
    expect(matchesPattern("codex-rs/a.rs", "codex-rs/a.rs")).toBe(true)
    expect(matchesPattern("codex-rs/a.rs", "codex-rs/a.rs.bak")).toBe(false)
    expect(matchesPattern("codex-rs/state/", "codex-rs/state/src/x.rs")).toBe(true)
    expect(matchesPattern("codex-rs/state/", "codex-rs/statex/y.rs")).toBe(false)
    expect(matchesPattern("codex-rs/**/memories.rs", "codex-rs/state/src/runtime/memories.rs")).toBe(true)
    expect(matchesPattern("codex-rs/*/memories.rs", "codex-rs/state/src/memories.rs")).toBe(false)
    expect(matchesPattern("codex-rs/state/**", "codex-rs/state/a/b.rs")).toBe(true)
    expect(matchesPattern("codex-rs/templates/?.md", "codex-rs/templates/a.md")).toBe(true)
  })
})
