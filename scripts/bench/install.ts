// What a user's install costs: the package as `npm pack` makes it, installed into an empty project
// with npm's defaults (install scripts run, as a user's would). Judged by the size of what lands
// in node_modules, whether anything compiled or ran an install script (a native build), and what
// the tarball ships (no source map may point at a file the package does not carry). Needs the npm
// registry, as any install does; it is a benchmark, never a test.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import type { BenchResult } from "./measure.js"

const MAX_MB = 20
const repo = fileURLToPath(new URL("../../..", import.meta.url))

export async function benchInstall(): Promise<BenchResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-install-"))
  try {
    // The build is already in dist/ (npm run bench builds), so no lifecycle script is needed here.
    const packed = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], repo)
    const info = (JSON.parse(packed) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>)[0]!
    const shipped = new Set(info.files.map((file) => file.path))
    const maps = [...shipped].filter((file) => file.endsWith(".map"))
    const dangling = maps.filter((map) => danglingSources(path.join(repo, map), map, shipped))

    const project = path.join(work, "user-project")
    fs.mkdirSync(project)
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "user-project", private: true }))
    const started = performance.now()
    const log = run("npm", ["install", "--no-audit", "--no-fund", "--foreground-scripts", path.join(work, info.filename)], project)
    const seconds = (performance.now() - started) / 1000
    const modules = path.join(project, "node_modules")
    const bytes = duBytes(modules)
    const packages = fs.readdirSync(modules).flatMap((name) => (name.startsWith("@") ? fs.readdirSync(path.join(modules, name)).map((inner) => `${name}/${inner}`) : name.startsWith(".") ? [] : [name]))
    const native = findFiles(modules, (file) => file.endsWith(".node") || path.basename(file) === "binding.gyp")
    const heaviest = packages
      .map((name) => ({ name, mb: duBytes(path.join(modules, name)) / 1024 / 1024 }))
      .sort((a, b) => b.mb - a.mb)
      .slice(0, 5)
    return {
      name: "a user's install of the packed package (npm install <tarball> in an empty project)",
      details: [
        `Node ${process.versions.node}, npm ${run("npm", ["--version"], repo).trim()}; tarball ${(info.size / 1024).toFixed(0)} KB with ${shipped.size} files, ${maps.length} of them source maps`,
        `installed ${packages.length} packages in ${seconds.toFixed(1)} s: ${(bytes / 1024 / 1024).toFixed(1)} MB; heaviest ${heaviest.map((p) => `${p.name} ${p.mb.toFixed(1)} MB`).join(", ")}`,
        native.length ? `native files: ${native.slice(0, 5).map((file) => path.relative(modules, file)).join(", ")}` : "no native addon, no binding.gyp",
        /gyp|prebuild-install/.test(log) ? "npm's output mentions a native build" : "npm's output mentions no native build",
      ],
      checks: [
        { kind: "absolute", what: "node_modules after installing the package", value: bytes / 1024 / 1024, unit: "MB", max: MAX_MB },
        { kind: "condition", what: "no native build and no native addon installed", holds: native.length === 0 && !/gyp|prebuild-install/.test(log) },
        { kind: "condition", what: "effect, better-sqlite3 and the Codex CLI are not installed for users", holds: !packages.some((name) => ["effect", "better-sqlite3", "@openai/codex"].includes(name)) },
        { kind: "condition", what: "no source map points at a file the package does not ship", holds: dangling.length === 0 },
      ],
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr}`)
  return result.stdout + result.stderr
}

/** Whether a shipped source map names a source the package leaves out. */
function danglingSources(file: string, shippedPath: string, shipped: ReadonlySet<string>): boolean {
  const map = JSON.parse(fs.readFileSync(file, "utf8")) as { sources?: string[]; sourceRoot?: string }
  return (map.sources ?? []).some((source) => !shipped.has(path.posix.normalize(path.posix.join(path.posix.dirname(shippedPath), map.sourceRoot ?? "", source))))
}

function duBytes(dir: string): number {
  let total = 0
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const stat = fs.lstatSync(path.join(dir, name))
    if (stat.isFile()) total += stat.size
  }
  return total
}

function findFiles(dir: string, match: (file: string) => boolean): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => path.join(dir, name))
    .filter((file) => match(file) && fs.lstatSync(file).isFile())
}
