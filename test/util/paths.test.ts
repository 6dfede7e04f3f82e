import path from "node:path"
import { describe, expect, it } from "vitest"
import { memoryPaths, resolveHome } from "../../src/util/paths.js"

const HOME = "/home/someone"

describe("resolveHome", () => {
  it("defaults to OpenCode's data folder", () => {
    expect(resolveHome(undefined, {}, HOME)).toEqual({ home: "/home/someone/.local/share/opencode", source: "default" })
  })

  it("follows XDG_DATA_HOME like OpenCode does", () => {
    expect(resolveHome(undefined, { XDG_DATA_HOME: "/xdg/data" }, HOME)).toEqual({ home: "/xdg/data/opencode", source: "xdg-data" })
  })

  it("prefers the environment pin over the data folder", () => {
    const env = { XDG_DATA_HOME: "/xdg/data", OPENCODE_CODEX_MEMORY_HOME: "/pinned" }
    expect(resolveHome(undefined, env, HOME)).toEqual({ home: "/pinned", source: "env" })
  })

  it("prefers the plugin option over the environment pin, expanding ~", () => {
    const env = { OPENCODE_CODEX_MEMORY_HOME: "/pinned" }
    expect(resolveHome("~/mem", env, HOME)).toEqual({ home: "/home/someone/mem", source: "option" })
  })

  it("lets the test root win over everything", () => {
    const env = { OPENCODE_CODEX_MEMORY_HOME: "/pinned", OPENCODE_CODEX_MEMORY_TEST_ROOT: "/test-root" }
    expect(resolveHome("/option", env, HOME)).toEqual({ home: "/test-root", source: "test-root" })
  })

  it("ignores blank values", () => {
    expect(resolveHome("  ", { OPENCODE_CODEX_MEMORY_HOME: "" }, HOME).source).toBe("default")
  })
})

describe("memoryPaths", () => {
  it("keeps V1 and V2 apart under one home", () => {
    const v1 = memoryPaths("/h", "option", "v1")
    const v2 = memoryPaths("/h", "option", "v2")
    expect([v1.db, v1.memoryRoot, v1.summary]).toEqual(["/h/memory.db", "/h/memories", path.join("/h/memories", "memory_summary.md")])
    expect([v2.db, v2.memoryRoot]).toEqual(["/h/memory_v2.db", "/h/memories_v2"])
  })
})
