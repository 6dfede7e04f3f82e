// Exact and near-duplicate entries of MEMORY.md (duplicates.ts).
import { describe, expect, it } from "vitest"
import { describeDuplicates, duplicateInstructions, findDuplicates, normalizeEntry } from "../../../src/write/phase2/duplicates.js"
import { expectGolden } from "../../golden/golden.js"

const HANDBOOK = [
  "# Task Group: deploys", // 1
  "## Task 1: ship the api", // 2
  "### rollout_summary_files", // 3
  "- rollout_summaries/2026-11-01-ab12-deploy.md (cwd=/p, thread_id=ses_1)", // 4
  "### keywords", // 5
  "- deploy, make ship, staging cluster rollout", // 6
  "## Task 2: ship the worker", // 7
  "### rollout_summary_files", // 8
  "- rollout_summaries/2026-11-01-ab12-deploy.md (cwd=/p, thread_id=ses_1)", // 9
  "### keywords", // 10
  "- deploy, make ship, staging cluster rollout", // 11
  "## Reusable knowledge", // 12
  "- Run `make ship` from the repository root after the tests pass.", // 13
  "- run make ship from the repository root after the tests pass", // 14
  "* Run make ship from the repository root, after the tests pass!", // 15
  "- The staging cluster needs the VPN before kubectl can reach it at all", // 16
  "- the staging cluster needs the VPN before kubectl can reach it", // 17
  "- none", // 18
  "- none", // 19
  "- Prefer pnpm over npm in every repository of the user", // 20
  "1. The staging cluster needs the corporate VPN before kubectl can reach it", // 21
].join("\n")

describe("duplicate entries", () => {
  it("normalizes case, spacing, punctuation and Markdown marks", () => {
    expect(normalizeEntry("  Run `make  ship`, **now**. ")).toBe("run make ship now")
  })

  it("counts exact and near duplicates among bullet entries, not the provenance and keyword lists or short entries", () => {
    const report = findDuplicates(HANDBOOK)
    expect(report.entries).toBe(7)
    expect(report.exact).toBe(2)
    expect(report.near).toBe(2)
    expect(report.bounded).toBe(false)
    expect(report.groups).toEqual([
      { kind: "exact", lines: [13, 14, 15], text: "Run `make ship` from the repository root after the tests pass." },
      { kind: "near", lines: [16, 17, 21], text: "The staging cluster needs the VPN before kubectl can reach it at all" },
    ])
    expect(describeDuplicates(report)).toBe("2 exact and 2 near-duplicate entries among 7")
  })

  it("finds none in distinct entries or an empty file", () => {
    expect(findDuplicates("")).toEqual({ entries: 0, exact: 0, near: 0, groups: [], bounded: false })
    const distinct = Array.from({ length: 50 }, (_, i) => `- fact number ${i} about service s${i} and its own checks c${i * 7}`).join("\n")
    expect(findDuplicates(distinct)).toMatchObject({ entries: 50, exact: 0, near: 0 })
  })

  it("takes a 1 MB handbook in well under its budget", () => {
    const lines: string[] = []
    for (let i = 0; lines.length < 60_000; i++) {
      lines.push(`## Task ${i}`, `- service s${i % 500} deploys with make ship ${i % 3} after tests t${i % 250} pass in ci`, `- unique learning ${i} about module m${i} and flag f${i * 13}`)
    }
    expect(lines.join("\n").length).toBeGreaterThan(1_000_000)
    const started = performance.now()
    const report = findDuplicates(lines.join("\n"))
    const ms = performance.now() - started
    expect(report.exact).toBeGreaterThan(0)
    expect(report.near).toBeGreaterThan(0)
    expect(ms).toBeLessThan(5_000)
  })

  it("renders the prompt's list byte for byte, bounded, and nothing when there is nothing to merge", () => {
    expectGolden("consolidation.duplicates.md", duplicateInstructions(findDuplicates(HANDBOOK)))
    expect(duplicateInstructions(findDuplicates("- one two three four"))).toBe("")
    const many = Array.from({ length: 30 }, (_, i) => `- entry group ${i} repeated word w${i} twice\n- entry group ${i} repeated word w${i} twice`).join("\n")
    const fragment = duplicateInstructions(findDuplicates(many))
    expect(fragment.split("\n").filter((line) => line.startsWith("- lines "))).toHaveLength(20)
    expect(fragment).toContain("10 more groups not listed")
  })
})
