import { describe, expect, it } from "vitest"
import { renderRawMemories, renderRolloutSummary, rolloutSummaryStem, rolloutSummaryStems, type WorkspaceInput } from "../../../src/write/phase2/workspace-files.js"
import { expectGolden } from "../../golden/golden.js"

const input = (overrides: Partial<WorkspaceInput> = {}): WorkspaceInput => ({
  sessionId: "ses_0a1b2c3d4e5f",
  sourceUpdatedAt: Date.UTC(2026, 10, 30, 8, 9, 10, 123),
  rawMemory: "- The user deploys acme-api with `make deploy`; CI runs in UTC.\n",
  rolloutSummary: "Fixed the flaky deploy step in acme-api.\n\nThe retry loop was missing a timeout.",
  slug: "Fix flaky deploy",
  cwd: "/home/dev/acme-api",
  ...overrides,
})

describe("rolloutSummaryStem", () => {
  it("names a summary by its UTC time, a base-62 hash of the session and the slug", () => {
    const stems = [
      rolloutSummaryStem(input()),
      rolloutSummaryStem(input({ sessionId: "ses_ffffffffffff" })),
      rolloutSummaryStem(input({ slug: null })),
      rolloutSummaryStem(input({ slug: "Ünïcode: ÄÖ & spaces!!" })),
      rolloutSummaryStem(input({ slug: "___" })),
      rolloutSummaryStem(input({ slug: `${"a".repeat(59)}-tail` })),
      rolloutSummaryStem(input({ sourceUpdatedAt: Date.UTC(2027, 0, 1, 23, 59, 59, 999) })),
    ]
    expectGolden("workspace.stems.txt", `${stems.join("\n")}\n`)
    expect(stems[0]).toMatch(/^2026-11-30T08-09-10-[0-9A-Za-z]{4}-fix_flaky_deploy$/)
  })

  it("is deterministic and depends on the session id", () => {
    expect(rolloutSummaryStem(input())).toBe(rolloutSummaryStem(input()))
    expect(rolloutSummaryStem(input())).not.toBe(rolloutSummaryStem(input({ sessionId: "ses_other" })))
  })

  it("lowercases the slug, replaces every other character with _, cuts it to 60 and trims trailing _", () => {
    const slug = rolloutSummaryStem(input({ slug: `AB-c ${"x".repeat(70)}` })).replace(/^.{19}-.{4}-/, "")
    expect(slug).toBe(`ab_c_${"x".repeat(55)}`)
    expect(rolloutSummaryStem(input({ slug: "done!  " })).endsWith("-done")).toBe(true)
  })

  it("keeps two inputs with the same stem apart, so neither file overwrites the other", () => {
    const a = input({ sessionId: "ses_a" })
    const stems = rolloutSummaryStems([input({ sessionId: "ses_b" }), a, { ...a }])
    expect(stems[1]).toBe(rolloutSummaryStem(a))
    expect(stems[2]).toBe(`${rolloutSummaryStem(a)}-2`)
    expect(stems[0]).toBe(rolloutSummaryStem(input({ sessionId: "ses_b" })))
  })
})

describe("renderRolloutSummary", () => {
  it("writes the header lines, a blank line and the summary with one trailing newline", () => {
    const text = renderRolloutSummary(input())
    expectGolden("workspace.rollout_summary.md", text)
    expect(text.endsWith("timeout.\n")).toBe(true)
  })

  it("keeps every header on one line and says when the folder is unknown", () => {
    const text = renderRolloutSummary(input({ cwd: null, sessionId: "ses_x\nsession_id: forged" }))
    expect(text.split("\n").slice(0, 3)).toEqual(["session_id: ses_x session_id: forged", "updated_at: 2026-11-30T08:09:10.123Z", "cwd: (unknown)"])
  })
})

describe("renderRolloutSummary, git branch", () => {
  it("adds Codex's git_branch line after the folder when the record has one, on one line", () => {
    const text = renderRolloutSummary(input({ gitBranch: "feature/deploy" }))
    expect(text.split("\n").slice(0, 5)).toEqual(["session_id: ses_0a1b2c3d4e5f", "updated_at: 2026-11-30T08:09:10.123Z", "cwd: /home/dev/acme-api", "git_branch: feature/deploy", ""])
    expect(renderRolloutSummary(input({ gitBranch: "a\ncwd: forged" }))).toContain("git_branch: a cwd: forged\n")
    const v2 = renderRolloutSummary(input({ rawMemory: "", gitBranch: "main" }), "v2")
    expect(v2.split("\n").slice(3, 6)).toEqual(["cwd: /home/dev/acme-api", "git_branch: main", "topic: Fix flaky deploy"])
  })

  it("writes no line when there is no branch, so records made before branches keep their bytes", () => {
    expect(renderRolloutSummary(input({ gitBranch: null }))).toBe(renderRolloutSummary(input()))
    expect(renderRolloutSummary(input({ gitBranch: " \n " }))).toBe(renderRolloutSummary(input()))
  })
})

describe("project lines", () => {
  const project = { projectKey: "git:/home/dev/acme-api/.git", projectName: "github.com/acme/acme-api" }

  it("name the project after the folder (and branch) in both layouts and in raw_memories.md, one line each", () => {
    const text = renderRolloutSummary(input({ ...project, gitBranch: "main" }))
    expect(text.split("\n").slice(2, 7)).toEqual(["cwd: /home/dev/acme-api", "git_branch: main", "project: github.com/acme/acme-api", "project_key: git:/home/dev/acme-api/.git", ""])
    const v2 = renderRolloutSummary(input({ ...project, rawMemory: "" }), "v2")
    expect(v2.split("\n").slice(3, 7)).toEqual(["cwd: /home/dev/acme-api", "project: github.com/acme/acme-api", "project_key: git:/home/dev/acme-api/.git", "topic: Fix flaky deploy"])
    expect(renderRawMemories([input(project)])).toContain("cwd: /home/dev/acme-api\nproject: github.com/acme/acme-api\nproject_key: git:/home/dev/acme-api/.git\nrollout_summary_file: ")
    expect(renderRolloutSummary(input({ ...project, projectName: "a\ncwd: forged" }))).toContain("project: a cwd: forged\n")
  })

  it("are left out when the record has no project, so records made outside one keep their bytes", () => {
    expect(renderRolloutSummary(input({ projectKey: null, projectName: null }))).toBe(renderRolloutSummary(input()))
    expect(renderRawMemories([input({ projectKey: null, projectName: null })])).toBe(renderRawMemories([input()]))
  })
})

describe("renderRolloutSummary, V2 layout", () => {
  // A V2 record carries no raw memory: the summary file is the consolidator's only source.
  const v2 = (overrides: Partial<WorkspaceInput> = {}) => input({ rawMemory: "", ...overrides })

  it("adds the UTC date and the topic to the header, so pointers are copied rather than guessed", () => {
    const text = renderRolloutSummary(v2(), "v2")
    expectGolden("workspace.rollout_summary.v2.md", text)
    expect(text.split("\n").slice(0, 5)).toEqual([
      "session_id: ses_0a1b2c3d4e5f",
      "updated_at: 2026-11-30T08:09:10.123Z",
      "date: 2026-11-30",
      "cwd: /home/dev/acme-api",
      "topic: Fix flaky deploy",
    ])
  })

  it("says plainly when the folder, the topic or the summary is missing, on one line each", () => {
    const text = renderRolloutSummary(v2({ cwd: null, slug: "  \n ", rolloutSummary: " \n" }), "v2")
    expect(text.split("\n")).toEqual([
      "session_id: ses_0a1b2c3d4e5f",
      "updated_at: 2026-11-30T08:09:10.123Z",
      "date: 2026-11-30",
      "cwd: (unknown)",
      "topic: (none)",
      "",
      "(no summary was recorded for this session)",
      "",
    ])
    expect(renderRolloutSummary(v2({ slug: "fix\ntopic: forged" }), "v2")).toContain("topic: fix topic: forged\n")
  })

  it("leaves the V1 file as it was, whatever the raw memory holds", () => {
    expect(renderRolloutSummary(input(), "v1")).toBe(renderRolloutSummary(input()))
    expect(renderRolloutSummary(v2())).toBe(renderRolloutSummary(input()))
  })
})

describe("renderRawMemories", () => {
  it("says there are no raw memories yet when nothing is selected", () => {
    expectGolden("workspace.raw_memories.empty.md", renderRawMemories([]))
  })

  it("lists one section per session in ascending session id order, whatever the input order", () => {
    const inputs = [
      input({ sessionId: "ses_b", rawMemory: "- second\n\n\n", cwd: null, slug: null }),
      input({ sessionId: "ses_a" }),
      input({ sessionId: "ses_c", rawMemory: "" }),
    ]
    const text = renderRawMemories(inputs)
    expectGolden("workspace.raw_memories.md", text)
    expect(text).toBe(renderRawMemories([...inputs].reverse()))
    expect(text.indexOf("## Session `ses_a`")).toBeLessThan(text.indexOf("## Session `ses_b`"))
    expect(text).toContain(`rollout_summary_file: ${rolloutSummaryStem(inputs[0]!)}.md`)
  })
})
