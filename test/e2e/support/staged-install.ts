// The package as a user's install lays it out, without the network: the files package.json's
// "files" ships, copied from the build, and node_modules holding links to the runtime dependencies
// only (their own dependencies resolve from the checkout, where the links point). No optional
// peer is there, so better-sqlite3 cannot be found from it: the CLI must get by with what Node has.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { repoRoot } from "./opencode.js"

export interface StagedInstall {
  /** The package folder, as node_modules/opencode-codex-memory would be. */
  dir: string
  /** Its command-line entry. */
  bin: string
  cleanup(): void
}

/** `nodeModules`: the node_modules folder to lay it out in (OpenCode 2's plugin cache, say); a temp one by default. */
export function stageInstall(options: { nodeModules?: string } = {}): StagedInstall {
  const repo = repoRoot()
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { files: string[]; bin: Record<string, string>; dependencies: Record<string, string> }
  const root = options.nodeModules ? path.dirname(options.nodeModules) : fs.mkdtempSync(path.join(os.tmpdir(), "ocm-staged-"))
  const modules = options.nodeModules ?? path.join(root, "node_modules")
  const dir = path.join(modules, "opencode-codex-memory")
  fs.mkdirSync(dir, { recursive: true })
  fs.copyFileSync(path.join(repo, "package.json"), path.join(dir, "package.json"))
  for (const entry of manifest.files.filter((pattern) => !pattern.startsWith("!"))) {
    const from = path.join(repo, entry)
    if (!fs.existsSync(from)) throw new Error(`${entry} is in package.json's files but missing: run "npm run build" first`)
    fs.cpSync(from, path.join(dir, entry), { recursive: true, filter: (file) => !file.endsWith(".map") })
  }
  for (const name of Object.keys(manifest.dependencies)) {
    const link = path.join(modules, name)
    fs.mkdirSync(path.dirname(link), { recursive: true })
    fs.symlinkSync(path.join(repo, "node_modules", name), link, "dir")
  }
  return { dir, bin: path.join(dir, Object.values(manifest.bin)[0]!), cleanup: () => fs.rmSync(options.nodeModules ? modules : root, { recursive: true, force: true }) }
}
