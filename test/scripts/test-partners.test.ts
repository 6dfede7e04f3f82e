import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { fetchPinned } from "../../scripts/test-partners.js"

/** A tarball laid out as npm packs one (everything under `package/`), and its integrity. */
function tarball(dir: string, name: string, files: Record<string, string>): { file: string; integrity: string } {
  const src = path.join(dir, `${name}-src`)
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, "package", rel)), { recursive: true })
    fs.writeFileSync(path.join(src, "package", rel), text)
  }
  const file = path.join(dir, `${name}.tgz`)
  execFileSync("tar", ["-czf", file, "-C", src, "package"])
  return { file, integrity: `sha512-${createHash("sha512").update(fs.readFileSync(file)).digest("base64")}` }
}

describe("fetchPinned", () => {
  let dir: string
  let cacheDir: string
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-partners-"))
    cacheDir = path.join(dir, "cache")
  })
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("unpacks each tarball where it belongs, once", () => {
    const launcher = tarball(dir, "launcher", { "bin/tool.js": "launcher", "package.json": "{}" })
    const platform = tarball(dir, "platform", { "vendor/bin/tool": "binary" })
    const packed: string[] = []
    const pack = (spec: string, into: string) => {
      packed.push(spec)
      const source = spec === "tool@1" ? launcher.file : platform.file
      const copy = path.join(into, path.basename(source))
      fs.copyFileSync(source, copy)
      return copy
    }
    const tarballs = [
      { spec: "tool@1", integrity: launcher.integrity },
      { spec: "tool@1-linux", integrity: platform.integrity, at: path.join("node_modules", "tool-linux") },
    ]
    const folder = fetchPinned("tool-1", tarballs, { cacheDir, pack })
    expect(fs.readFileSync(path.join(folder, "bin", "tool.js"), "utf8")).toBe("launcher")
    expect(fs.readFileSync(path.join(folder, "node_modules", "tool-linux", "vendor", "bin", "tool"), "utf8")).toBe("binary")
    expect(fetchPinned("tool-1", tarballs, { cacheDir, pack })).toBe(folder)
    expect(packed).toEqual(["tool@1", "tool@1-linux"])
    // Nothing of the staging is left beside it.
    expect(fs.readdirSync(cacheDir)).toEqual(["tool-1"])
  })

  it("refuses a tarball that does not match its integrity and leaves no folder that looks ready", () => {
    const good = tarball(dir, "good", { "a.txt": "a" })
    const other = tarball(dir, "other", { "a.txt": "tampered" })
    const pack = (_spec: string, into: string) => {
      const copy = path.join(into, "other.tgz")
      fs.copyFileSync(other.file, copy)
      return copy
    }
    expect(() => fetchPinned("good-1", [{ spec: "good@1", integrity: good.integrity }], { cacheDir, pack })).toThrow(/does not match its pinned integrity/)
    expect(fs.readdirSync(cacheDir)).toEqual([])
  })
})
