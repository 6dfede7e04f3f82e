// What the package ships, as `npm pack` lists it: each entry a host resolves, from the published
// package and from a folder (a checkout or an installed package), is in the tarball and loads the
// same plugin definition.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { packageRoot } from "../src/util/package-root.js"

const repo = packageRoot()

function packedFiles(): string[] {
  const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: repo, encoding: "utf8" })
  if (packed.status !== 0) throw new Error(`npm pack --dry-run failed: ${packed.stderr}`)
  return (JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path)
}

describe("the packed package", () => {
  const files = packedFiles()
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { main: string; exports: Record<string, string>; bin: Record<string, string> }

  it("ships every entry point package.json names", () => {
    const entries = [manifest.main, ...Object.values(manifest.exports), ...Object.values(manifest.bin)].map((entry) => entry.replace(/^\.\//, ""))
    for (const entry of entries) expect(files).toContain(entry)
  })

  it("ships what OpenCode 2 resolves in a plugin folder: a root index and tui, which load the package's own definitions", async () => {
    expect(files).toContain("index.js")
    expect(files).toContain("tui.js")
    // OpenCode 2 tries <dir>/server before <dir>/index: a root server module would shadow index.
    expect(files.some((file) => /^server\.[cm]?[jt]s$/.test(file))).toBe(false)
    const folderEntry = (await import(pathToFileURL(path.join(repo, "index.js")).href)) as { default: unknown }
    const main = (await import(pathToFileURL(path.join(repo, manifest.main)).href)) as { default: unknown }
    expect(folderEntry.default).toBe(main.default)
    const folderTui = (await import(pathToFileURL(path.join(repo, "tui.js")).href)) as { default: { id: string; setup: unknown } }
    const tui = (await import(pathToFileURL(path.join(repo, manifest.exports["./tui"]!)).href)) as { default: unknown }
    expect(folderTui.default).toBe(tui.default)
    expect(folderTui.default).toMatchObject({ id: "opencode-codex-memory", setup: expect.any(Function) })
  })

  it("ships the templates and the helper agents' config the plugin reads at run time, and no source map", () => {
    expect(files).toContain("opencode.json")
    expect(files.some((file) => file.startsWith("templates/"))).toBe(true)
    expect(files.filter((file) => file.endsWith(".map"))).toEqual([])
  })
})
