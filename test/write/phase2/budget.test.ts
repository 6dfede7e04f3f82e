// The size budget's pure parts and its measure of a folder (budget.ts).
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { parseOptions } from "../../../src/options.js"
import { budgetFailure, budgetInstructions, countLines, measureBudget, overBudget, sizeBudget } from "../../../src/write/phase2/budget.js"
import { withInstructions } from "../../../src/write/phase2/phase2.js"
import { expectGolden } from "../../golden/golden.js"

let dir: string | undefined
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

describe("the size budget", () => {
  it("counts lines as an editor does", () => {
    expect(countLines(Buffer.from(""))).toBe(0)
    expect(countLines(Buffer.from("a"))).toBe(1)
    expect(countLines(Buffer.from("a\n"))).toBe(1)
    expect(countLines(Buffer.from("a\nb"))).toBe(2)
    expect(countLines(Buffer.from("\n\n\n"))).toBe(3)
  })

  it("is over when either bound is passed, and a bound of 0 is off", () => {
    expect(overBudget("MEMORY.md", 100, 10, 100, 10)).toBeUndefined()
    expect(overBudget("MEMORY.md", 101, 10, 100, 10)).toMatchObject({ bytes: 101 })
    expect(overBudget("MEMORY.md", 100, 11, 100, 10)).toMatchObject({ lines: 11 })
    expect(overBudget("MEMORY.md", 10 ** 9, 10 ** 6, 0, 0)).toBeUndefined()
  })

  it("takes its defaults from the options", () => {
    expect(sizeBudget(parseOptions({}).options)).toEqual({ memoryBytes: 160_000, memoryLines: 2_000, skillBytes: 32_000, skillLines: 500 })
  })

  it("measures MEMORY.md and every skill's SKILL.md, and passes over what is not a regular file", () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-budget-"))
    fs.writeFileSync(path.join(dir, "MEMORY.md"), "- a\n".repeat(12))
    for (const [name, text] of [["b-small", "ok\n"], ["a-long", "line\n".repeat(6)], ["c-wide", "x".repeat(300)]]) {
      fs.mkdirSync(path.join(dir, "skills", name!), { recursive: true })
      fs.writeFileSync(path.join(dir, "skills", name!, "SKILL.md"), text!)
    }
    fs.mkdirSync(path.join(dir, "skills", "d-link"))
    fs.symlinkSync(path.join(dir, "MEMORY.md"), path.join(dir, "skills", "d-link", "SKILL.md"))
    fs.mkdirSync(path.join(dir, "skills", "e-empty"))
    const budget = { memoryBytes: 0, memoryLines: 10, skillBytes: 200, skillLines: 5 }
    expect(measureBudget(dir, budget)).toEqual([
      { file: "MEMORY.md", bytes: 48, lines: 12, maxBytes: 0, maxLines: 10 },
      { file: "skills/a-long/SKILL.md", bytes: 30, lines: 6, maxBytes: 200, maxLines: 5 },
      { file: "skills/c-wide/SKILL.md", bytes: 300, lines: 1, maxBytes: 200, maxLines: 5 },
    ])
    expect(measureBudget(dir, { memoryBytes: 0, memoryLines: 0, skillBytes: 0, skillLines: 0 })).toEqual([])
    expect(measureBudget(path.join(dir, "missing"), budget)).toEqual([])
  })

  it("renders the retry's instruction and the failure byte for byte", () => {
    const over = [
      { file: "MEMORY.md", bytes: 171_204, lines: 2_412, maxBytes: 160_000, maxLines: 2_000 },
      { file: "skills/deploy/SKILL.md", bytes: 40_001, lines: 320, maxBytes: 32_000, maxLines: 500 },
    ]
    expectGolden("consolidation.budget.md", withInstructions("(the consolidation prompt)", budgetInstructions(over)))
    expect(budgetFailure(over)).toBe(
      "over the size budget after a retry asked to shorten it: MEMORY.md is 2,412 lines (limit 2,000, 412 over) and 171,204 bytes (limit 160,000, 11,204 over); skills/deploy/SKILL.md is 40,001 bytes (limit 32,000, 8,001 over)",
    )
    expect(withInstructions("prompt", undefined)).toBe("prompt")
    const before = budgetInstructions(over.slice(0, 1), "before")
    expect(before).toContain("These files are already over their size budget, and this run is not accepted unless it leaves each within it:")
    expect(before).toContain("Bring every file named above within its limits as you fold in this run's changes: merge entries")
    expect(before).not.toContain("previous attempt")
  })
})
