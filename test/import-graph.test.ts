import { describe, expect, it } from "vitest"
import { findCycles, importGraph, importSpecifiers, resolveSpecifier } from "./import-graph.js"

const graphOf = (edges: Record<string, string[]>) => new Map(Object.entries(edges))

describe("importSpecifiers", () => {
  it("finds static, re-export, side-effect, type-only and dynamic imports, in order", () => {
    const text = [
      `import fs from "node:fs"`,
      `import type { A } from "./a.js"`,
      `import {`,
      `  b,`,
      `  type C,`,
      `} from "./b.js"`,
      `export { d } from "./d.js"`,
      `export * from "./e.js"`,
      `import "./side-effect.js"`,
      `async function later() {`,
      `  const { f } = await import("./f.js")`,
      `  let g: typeof import("./g.js")`,
      `}`,
    ].join("\n")
    expect(importSpecifiers(text)).toEqual(["node:fs", "./a.js", "./b.js", "./d.js", "./e.js", "./side-effect.js", "./f.js", "./g.js"])
  })

  it("ignores imports quoted in comments, but keeps URLs in strings intact", () => {
    const text = [
      `// import { x } from "./commented.js"`,
      `/* await import("./blocked.js") */`,
      `const url = "https://example.com/a" // a comment`,
      `import { y } from "./real.js"`,
    ].join("\n")
    expect(importSpecifiers(text)).toEqual(["./real.js"])
  })
})

describe("resolveSpecifier", () => {
  const files = new Set(["src/a.ts", "src/b/index.ts", "tools/t.ts"])
  it("maps .js to the .ts source, folders to index.ts, and leaves packages alone", () => {
    expect(resolveSpecifier("tools/t.ts", "../src/a.js", files)).toBe("src/a.ts")
    expect(resolveSpecifier("src/a.ts", "./b", files)).toBe("src/b/index.ts")
    expect(resolveSpecifier("src/a.ts", "node:fs", files)).toBeUndefined()
    expect(resolveSpecifier("src/a.ts", "./missing.js", files)).toBeUndefined()
  })
})

describe("findCycles", () => {
  it("finds nothing in an acyclic graph, diamonds included", () => {
    expect(findCycles(graphOf({ a: ["b", "c"], b: ["d"], c: ["d"], d: [] }))).toEqual([])
  })

  it("finds a two-file cycle and a longer one, each as a closed path", () => {
    const cycles = findCycles(graphOf({ a: ["b"], b: ["a"], c: ["d"], d: ["e"], e: ["c", "f"], f: [] }))
    expect(cycles).toHaveLength(2)
    expect(cycles).toContainEqual(["a", "b", "a"])
    expect(cycles).toContainEqual(["c", "d", "e", "c"])
  })

  it("finds a file that imports itself", () => {
    expect(findCycles(graphOf({ a: ["a"], b: [] }))).toEqual([["a", "a"]])
  })

  it("finds the cycle the backend had: a class file importing functions that import its types", () => {
    const sources = new Map([
      ["src/backend/local-backend.ts", `import { searchMemory } from "./search.js"\nexport interface SearchRequest {}`],
      ["src/backend/search.ts", `import type { SearchRequest } from "./local-backend.js"\nexport function searchMemory() {}`],
    ])
    expect(findCycles(importGraph(sources))).toEqual([["src/backend/local-backend.ts", "src/backend/search.ts", "src/backend/local-backend.ts"]])
  })

  it("finds a cycle closed only by a dynamic import", () => {
    const sources = new Map([
      ["src/a.ts", `import { b } from "./b.js"`],
      ["src/b.ts", `export async function b() {\n  return (await import("./a.js")).a\n}`],
    ])
    expect(findCycles(importGraph(sources))).toEqual([["src/a.ts", "src/b.ts", "src/a.ts"]])
  })
})
