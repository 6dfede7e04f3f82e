import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { PermissionRule } from "../../../src/host.js"
import { helperSessionRules, memoryRootForms } from "../../../src/write/helpers/helper-sandbox.js"

// OpenCode 1.18's evaluation, as its source reads: the agent's rules, then the session's, and the
// last rule matching both permission and pattern wins; `*` matches anything, `/` included.
function match(text: string, pattern: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
  return new RegExp(`^${source}$`, "s").test(text)
}
function evaluate(permission: string, pattern: string, ...rulesets: PermissionRule[][]): string {
  return rulesets.flat().findLast((rule) => match(permission, rule.permission) && match(pattern, rule.pattern))?.action ?? "ask"
}
/** A tool is offered unless the last rule naming it denies pattern `*`; write and apply_patch go by edit. */
function offered(tool: string, ruleset: PermissionRule[]): boolean {
  const permission = ["write", "apply_patch"].includes(tool) ? "edit" : tool
  const rule = ruleset.findLast((r) => match(permission, r.permission))
  return !(rule?.pattern === "*" && rule.action === "deny")
}
function fromConfig(permission: Record<string, string | Record<string, string>>): PermissionRule[] {
  return Object.entries(permission).flatMap(([key, value]) =>
    typeof value === "string"
      ? [{ permission: key, pattern: "*", action: value as PermissionRule["action"] }]
      : Object.entries(value).map(([pattern, action]) => ({ permission: key, pattern, action: action as PermissionRule["action"] })),
  )
}

const ROOT = "/home/u/.local/share/opencode/memories"
const TOOLS = ["bash", "read", "edit", "write", "apply_patch", "glob", "grep", "task", "webfetch", "websearch", "todowrite", "skill", "lsp", "StructuredOutput", "mcp_server_tool"]
// What a hostile or careless definition could give the agent: everything.
const WIDE_AGENT = fromConfig({ "*": "allow", bash: "allow", webfetch: "allow", external_directory: "allow", read: "allow", edit: "allow" })

describe("the extractor's session rules", () => {
  const rules = helperSessionRules("extract", [ROOT])

  it("deny everything first, then allow only the structured answer", () => {
    expect(rules).toEqual([
      { permission: "*", pattern: "*", action: "deny" },
      { permission: "StructuredOutput", pattern: "*", action: "allow" },
    ])
  })

  it("leave only StructuredOutput offered even under an agent that allows everything", () => {
    const merged = [...WIDE_AGENT, ...rules]
    expect(TOOLS.filter((tool) => offered(tool, merged))).toEqual(["StructuredOutput"])
    expect(evaluate("read", "notes.md", WIDE_AGENT, rules)).toBe("deny")
    expect(evaluate("external_directory", "/etc/*", WIDE_AGENT, rules)).toBe("deny")
  })
})

describe("the consolidator's session rules", () => {
  const rules = helperSessionRules("consolidate", [ROOT, "/data/real/memories/"])
  const merged = [...WIDE_AGENT, ...rules]

  it("start with a catch-all deny", () => {
    expect(rules[0]).toEqual({ permission: "*", pattern: "*", action: "deny" })
  })

  it("offer the file tools and nothing else, whatever the agent allows", () => {
    expect(TOOLS.filter((tool) => offered(tool, merged))).toEqual(["read", "edit", "write", "apply_patch", "glob", "grep"])
  })

  it("allow work inside the memory folder", () => {
    for (const file of ["MEMORY.md", "skills/deploy/SKILL.md", "rollout_summaries/a.md"]) {
      expect(evaluate("read", file, WIDE_AGENT, rules)).toBe("allow")
      expect(evaluate("edit", file, WIDE_AGENT, rules)).toBe("allow")
    }
    expect(evaluate("glob", "**/*.md", WIDE_AGENT, rules)).toBe("allow")
    expect(evaluate("grep", "deploy", WIDE_AGENT, rules)).toBe("allow")
    // A path naming the folder directly, or through its resolved form, is not an escape.
    expect(evaluate("external_directory", `${ROOT}/skills/*`, WIDE_AGENT, rules)).toBe("allow")
    expect(evaluate("external_directory", "/data/real/memories/*", WIDE_AGENT, rules)).toBe("allow")
  })

  it("deny every folder outside the memory root, and its neighbours sharing a prefix", () => {
    for (const folder of ["/etc", "/home/u", "/home/u/.local/share/opencode", `${ROOT}-other`, "/data/real/memories-x", "/tmp"]) {
      expect(evaluate("external_directory", `${folder}/*`, WIDE_AGENT, rules), folder).toBe("deny")
    }
  })

  it("never let the consolidator write the git baseline", () => {
    for (const file of [".git", ".git/config", ".git/hooks/pre-commit", "../../x/memories/.git/config"]) {
      expect(evaluate("edit", file, WIDE_AGENT, rules), file).toBe("deny")
      expect(evaluate("write", file, WIDE_AGENT, rules), file).toBe("deny")
    }
    expect(evaluate("edit", "skills/.gitkeep", WIDE_AGENT, rules)).toBe("allow")
  })

  it("leave nothing to ask: every permission is decided", () => {
    for (const permission of ["bash", "doom_loop", "question", "task", "webfetch", "external_directory"]) {
      expect(evaluate(permission, "anything", [], rules)).toBe("deny")
    }
  })

  it("grant no folder when the root holds wildcard characters", () => {
    const odd = helperSessionRules("consolidate", ["/data/mem*"])
    expect(odd.filter((rule) => rule.permission === "external_directory")).toEqual([{ permission: "external_directory", pattern: "*", action: "deny" }])
    expect(helperSessionRules("consolidate", ["C:\\Users\\u\\memories\\"]).at(-1)).toEqual({ permission: "external_directory", pattern: "C:/Users/u/memories/*", action: "allow" })
  })
})

describe("memory root forms", () => {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  })

  it("are the path as given and as resolved through a symlink", () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-forms-"))
    made.push(base)
    fs.mkdirSync(path.join(base, "real"))
    fs.symlinkSync(path.join(base, "real"), path.join(base, "link"))
    const real = fs.realpathSync(path.join(base, "real"))
    expect(memoryRootForms(path.join(base, "link"))).toEqual([path.join(base, "link"), real])
    expect(memoryRootForms(real)).toEqual([real])
    expect(memoryRootForms(path.join(base, "missing"))).toEqual([path.join(base, "missing")])
  })
})
