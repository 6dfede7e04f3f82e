import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { claudeHome, codexHome, overlaps } from "../../src/interop/paths.js"

describe("codexHome and claudeHome", () => {
  it("take the option, else CODEX_HOME, else the home folder's default", () => {
    expect(codexHome("/opt/codex", { CODEX_HOME: "/env/codex" }, "/home/u")).toBe("/opt/codex")
    expect(codexHome(undefined, { CODEX_HOME: "/env/codex" }, "/home/u")).toBe("/env/codex")
    expect(codexHome(undefined, {}, "/home/u")).toBe("/home/u/.codex")
    expect(codexHome("~/c", {}, "/home/u")).toBe("/home/u/c")
    expect(claudeHome(undefined, "/home/u")).toBe("/home/u/.claude")
  })
})

describe("overlaps", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-overlap-"))
  const a = path.join(root, "a")
  const b = path.join(root, "b")
  fs.mkdirSync(path.join(a, "inner"), { recursive: true })
  fs.mkdirSync(b)
  fs.symlinkSync(a, path.join(root, "link-to-a"))

  it("is true for the same folder, one inside the other, and the same folder through a symlink", () => {
    expect(overlaps(a, a)).toBe(true)
    expect(overlaps(a, path.join(a, "inner"))).toBe(true)
    expect(overlaps(path.join(a, "inner"), a)).toBe(true)
    expect(overlaps(path.join(root, "link-to-a"), a)).toBe(true)
    expect(overlaps(path.join(root, "link-to-a", "inner"), a)).toBe(true)
  })

  it("is false for siblings, and compares folders that do not exist yet by what they would be", () => {
    expect(overlaps(a, b)).toBe(false)
    expect(overlaps(path.join(a, "new", "memories"), a)).toBe(true)
    expect(overlaps(path.join(root, "link-to-a", "new"), path.join(a, "new", "deeper"))).toBe(true)
    expect(overlaps(path.join(a, "new"), path.join(a, "other"))).toBe(false)
  })
})
