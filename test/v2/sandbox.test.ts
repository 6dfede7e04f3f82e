// The consolidator's confinement on OpenCode 2: its rules, and the in-process checks of its
// search and file tools.
import { describe, expect, it } from "vitest"
import { protectMemoryFolder } from "../../src/v2/agents.js"
import { confineFile, confineSearch, v2HelperRules } from "../../src/v2/sandbox.js"

const ROOT = "/data/memories"

describe("v2HelperRules", () => {
  it("denies everything to the extractor", () => {
    expect(v2HelperRules("extract", [ROOT])).toEqual([{ action: "*", resource: "*", effect: "deny" }])
  })

  it("lets the consolidator's file tools touch its roots only, never their .git, and denies first", () => {
    const rules = v2HelperRules("consolidate", [ROOT, "/real/memories/"])
    expect(rules[0]).toEqual({ action: "*", resource: "*", effect: "deny" })
    for (const root of [ROOT, "/real/memories"]) {
      expect(rules).toContainEqual({ action: "write", resource: `${root}/*`, effect: "allow" })
      expect(rules).toContainEqual({ action: "external_directory", resource: `${root}/*`, effect: "allow" })
      const deny = rules.findIndex((r) => r.action === "write" && r.resource === `${root}/.git/*` && r.effect === "deny")
      const allow = rules.findIndex((r) => r.action === "write" && r.resource === `${root}/*` && r.effect === "allow")
      expect(deny).toBeGreaterThan(allow)
    }
    expect(rules.some((r) => r.effect === "allow" && ["read", "edit", "write", "external_directory"].includes(r.action) && r.resource === "*")).toBe(false)
  })

  it("gives a root holding wildcard characters no grant", () => {
    expect(v2HelperRules("consolidate", ["/data/mem*"]).filter((r) => r.effect === "allow" && r.action === "read")).toEqual([])
  })
})

describe("confineSearch", () => {
  it("searches the root when no path is given, and takes a relative path from the root", () => {
    expect(confineSearch({ pattern: "*.md" }, ROOT)).toEqual({ ok: true, input: { pattern: "*.md", path: ROOT } })
    expect(confineSearch({ pattern: "x", path: "rollout_summaries" }, ROOT)).toEqual({ ok: true, input: { pattern: "x", path: `${ROOT}/rollout_summaries` } })
  })

  it("refuses a path outside the root, and a pattern that climbs out or starts at /", () => {
    expect(confineSearch({ pattern: "*", path: "/etc" }, ROOT)).toMatchObject({ ok: false })
    expect(confineSearch({ pattern: "*", path: "../other" }, ROOT)).toMatchObject({ ok: false })
    expect(confineSearch({ pattern: "../../*" }, ROOT)).toMatchObject({ ok: false })
    expect(confineSearch({ pattern: "/etc/*" }, ROOT)).toMatchObject({ ok: false })
    expect(confineSearch({ pattern: "x", include: "../*.ts" }, ROOT)).toMatchObject({ ok: false })
  })
})

describe("confineFile", () => {
  it("takes a relative file from the root, keeps an absolute one inside it, and refuses the rest", () => {
    expect(confineFile({ path: "MEMORY.md", content: "x" }, ROOT)).toEqual({ ok: true, input: { path: `${ROOT}/MEMORY.md`, content: "x" } })
    expect(confineFile({ filePath: `${ROOT}/skills/a.md` }, ROOT)).toEqual({ ok: true, input: { filePath: `${ROOT}/skills/a.md` } })
    expect(confineFile({ path: "/home/u/project/src.ts" }, ROOT)).toMatchObject({ ok: false })
    expect(confineFile({ path: "../memories-other/x" }, ROOT)).toMatchObject({ ok: false })
    expect(confineFile({}, ROOT)).toMatchObject({ ok: false, reason: expect.stringContaining("needs a path") })
  })
})

describe("protectMemoryFolder", () => {
  it("appends, last, denials of file writes inside each root and of shell commands naming one", () => {
    const own = { action: "*", resource: "*", effect: "allow" as const }
    const rules = protectMemoryFolder([own], [ROOT, "/real/memories/"])
    expect(rules[0]).toEqual(own)
    for (const root of [ROOT, "/real/memories"]) {
      for (const action of ["edit", "write"]) {
        expect(rules).toContainEqual({ action, resource: root, effect: "deny" })
        expect(rules).toContainEqual({ action, resource: `${root}/*`, effect: "deny" })
      }
      expect(rules).toContainEqual({ action: "shell", resource: `*${root}*`, effect: "deny" })
      expect(rules).toContainEqual({ action: "bash", resource: `*${root}*`, effect: "deny" })
    }
    expect(rules.slice(1).every((rule) => rule.effect === "deny")).toBe(true)
  })

  it("leaves an action alone when the user wrote a rule for a resource inside a root", () => {
    const mine = { action: "edit", resource: `${ROOT}/notes/*`, effect: "allow" as const }
    const rules = protectMemoryFolder([mine], [ROOT])
    expect(rules.filter((rule) => rule.action === "edit")).toEqual([mine])
    expect(rules).toContainEqual({ action: "write", resource: `${ROOT}/*`, effect: "deny" })
  })
})
