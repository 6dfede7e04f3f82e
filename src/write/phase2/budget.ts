// The size budget of a consolidation's output (issue 39, "bounded memory"): MEMORY.md and each
// skills/<name>/SKILL.md must end a run within the bytes and lines the options allow (0 turns a
// bound off). phase2.ts measures the folder after the consolidator; a file over budget gets the
// consolidator once more at once, told by budgetInstructions which files and by how much, and a
// run still over fails as an invalid one does, the folder put back as it was (D24, D31).
import fs from "node:fs"
import path from "node:path"
import type { MemoryOptions } from "../../options.js"
import { MEMORY_FILE } from "./workspace.js"

export interface SizeBudget {
  memoryBytes: number
  memoryLines: number
  skillBytes: number
  skillLines: number
}

/** One file over its budget: what it measured and what it may hold (0: that bound is off). */
export interface OverBudget {
  /** Relative to the memory folder, with `/`. */
  file: string
  bytes: number
  lines: number
  maxBytes: number
  maxLines: number
}

export function sizeBudget(options: Pick<MemoryOptions, "memory_max_bytes" | "memory_max_lines" | "skill_max_bytes" | "skill_max_lines">): SizeBudget {
  return { memoryBytes: options.memory_max_bytes, memoryLines: options.memory_max_lines, skillBytes: options.skill_max_bytes, skillLines: options.skill_max_lines }
}

/** Lines as an editor counts them: a final line without its newline counts, an empty file has none. */
export function countLines(bytes: Buffer): number {
  if (bytes.length === 0) return 0
  let lines = 0
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines++
  return bytes[bytes.length - 1] === 10 ? lines : lines + 1
}

/** Pure: whether one file's measure is over either bound. */
export function overBudget(file: string, bytes: number, lines: number, maxBytes: number, maxLines: number): OverBudget | undefined {
  const over = (maxBytes > 0 && bytes > maxBytes) || (maxLines > 0 && lines > maxLines)
  return over ? { file, bytes, lines, maxBytes, maxLines } : undefined
}

/**
 * MEMORY.md and every skills/<name>/SKILL.md that is over its budget, in that order (skills by
 * name). Only regular files are measured (a symlink is the validation's to refuse); a file that
 * cannot be read is not over. Never throws.
 */
export function measureBudget(root: string, budget: SizeBudget): OverBudget[] {
  const found: OverBudget[] = []
  const measure = (relative: string, maxBytes: number, maxLines: number) => {
    if (maxBytes <= 0 && maxLines <= 0) return
    try {
      const file = path.join(root, ...relative.split("/"))
      const stat = fs.lstatSync(file, { throwIfNoEntry: false })
      if (!stat?.isFile()) return
      const over = overBudget(relative, stat.size, countLines(fs.readFileSync(file)), maxBytes, maxLines)
      if (over) found.push(over)
    } catch {
      // unreadable: not this check's to judge
    }
  }
  measure(MEMORY_FILE, budget.memoryBytes, budget.memoryLines)
  let skills: string[] = []
  try {
    skills = fs
      .readdirSync(path.join(root, "skills"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
      .map((entry) => entry.name)
      .sort()
  } catch {
    // no skills folder
  }
  for (const name of skills) measure(`skills/${name}/SKILL.md`, budget.skillBytes, budget.skillLines)
  return found
}

/** Pure: "MEMORY.md is 2,412 lines (limit 2,000) and 171,204 bytes (limit 160,000)". */
export function describeOverBudget(over: OverBudget): string {
  const parts: string[] = []
  if (over.maxLines > 0 && over.lines > over.maxLines) parts.push(`${n(over.lines)} lines (limit ${n(over.maxLines)}, ${n(over.lines - over.maxLines)} over)`)
  if (over.maxBytes > 0 && over.bytes > over.maxBytes) parts.push(`${n(over.bytes)} bytes (limit ${n(over.maxBytes)}, ${n(over.bytes - over.maxBytes)} over)`)
  return `${over.file} is ${parts.join(" and ")}`
}

/** Pure: the failure a run still over budget ends with (the job's last_error). */
export function budgetFailure(over: readonly OverBudget[]): string {
  return `over the size budget after a retry asked to shorten it: ${over.map(describeOverBudget).join("; ")}`
}

/**
 * Pure: the instruction added to the consolidator's prompt when files are over budget: left so by
 * its previous attempt (`after: "attempt"`, the folder holds that attempt), or already so before the
 * run (`"before"`, a handbook from before the budget or an import). It names each file and asks to
 * bring it within.
 */
export function budgetInstructions(over: readonly OverBudget[], after: "attempt" | "before" = "attempt"): string {
  const why =
    after === "attempt"
      ? "Your previous attempt at this run left files over their size budget, and the run is not accepted until each is within it:"
      : "These files are already over their size budget, and this run is not accepted unless it leaves each within it:"
  const tail =
    after === "attempt"
      ? "The folder holds that attempt. Bring every file named above within its limits"
      : "Bring every file named above within its limits as you fold in this run's changes"
  return [
    "## Size budget: shorten before you finish",
    "",
    why,
    "",
    ...over.map((item) => `- ${describeOverBudget(item)}`),
    "",
    `${tail}: merge entries that say the same thing (keep one, with all of their rollout references), fold repeated task-level learnings into one block-level item, drop what is stale or superseded, and shorten wordy entries. Keep what is still true and useful; do not move text into other files to escape the limit. If still over after this, the run fails and the memory stays as it was before it.`,
  ].join("\n")
}

function n(value: number): string {
  return value.toLocaleString("en-US")
}
