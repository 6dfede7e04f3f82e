// The import rules ARCHITECTURE.md promises, checked on the source text.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { findCycles, importGraph, importSpecifiers } from "./import-graph.js"

const repo = fileURLToPath(new URL("..", import.meta.url))

function sourceFiles(dir: string): string[] {
  const full = path.join(repo, dir)
  if (!fs.existsSync(full)) return []
  return fs.readdirSync(full, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => path.join(dir, file))
}

/** What a file imports, statically or dynamically: relative specifiers as repository paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(repo, file), "utf8")
  return importSpecifiers(text).map((spec) => (spec.startsWith(".") ? path.join(path.dirname(file), spec) : spec))
}

const core = sourceFiles("src").filter((file) => !/^src[/\\](v1|v2)[/\\]/.test(file) && file !== path.join("src", "index.ts"))

describe("module boundaries", () => {
  it("the core imports no host adapter", () => {
    for (const file of core) {
      for (const target of importsOf(file)) expect(target, `${file} imports ${target}`).not.toMatch(/^src[/\\](v1|v2)[/\\]/)
    }
  })

  it("the core uses OpenCode's plugin package only for zod", () => {
    for (const file of core) {
      if (file === path.join("src", "util", "zod.ts")) continue
      for (const target of importsOf(file)) expect(target, `${file} imports ${target}`).not.toMatch(/^@opencode-ai\//)
    }
  })

  it("store and util import nothing from read, write or the adapters", () => {
    for (const file of [...sourceFiles("src/store"), ...sourceFiles("src/util")]) {
      for (const target of importsOf(file)) expect(target, `${file} imports ${target}`).not.toMatch(/^src[/\\](read|write|v1|v2)[/\\]/)
    }
  })

  it("the tool specs stay host-neutral", () => {
    const tools = sourceFiles("tools")
    expect(tools.length).toBeGreaterThan(0)
    for (const file of tools) {
      for (const target of importsOf(file)) expect(target, `${file} imports ${target}`).not.toMatch(/^(src[/\\](v1|v2)[/\\]|@opencode-ai\/)/)
    }
  })

  it("the entry module imports only the adapters and constants", () => {
    for (const target of importsOf(path.join("src", "index.ts"))) {
      expect(target).toMatch(/^src[/\\](v1[/\\]plugin|v2[/\\]plugin|constants)\.js$/)
    }
  })

  it("no import cycles in src/ and tools/, counting type-only and dynamic imports", () => {
    const files = [...sourceFiles("src"), ...sourceFiles("tools")]
    expect(files.length).toBeGreaterThan(0)
    const sources = new Map(files.map((file) => [file.split(path.sep).join("/"), fs.readFileSync(path.join(repo, file), "utf8")]))
    expect(findCycles(importGraph(sources)).map((cycle) => cycle.join(" -> "))).toEqual([])
  })

  it("no module keeps mutable state at the top level", () => {
    for (const file of sourceFiles("src")) {
      const text = fs.readFileSync(path.join(repo, file), "utf8")
      expect(text, `${file} has a top-level let or var`).not.toMatch(/^(export\s+)?(let|var)\s/m)
    }
  })

  it("no unit test replaces a module or a global: unit files share a worker's modules (vitest.config.ts, isolate: false)", () => {
    const tests = sourceFiles("test").filter((file) => file.endsWith(".test.ts") && !/^test[/\\](e2e|fixtures)[/\\]/.test(file))
    expect(tests.length).toBeGreaterThan(100)
    for (const file of tests) {
      const text = fs.readFileSync(path.join(repo, file), "utf8")
      expect(text, `${file} mocks a module or stubs a global`).not.toMatch(/\bvi\.(mock|doMock|stubGlobal|stubEnv)\(/)
    }
  })
})
