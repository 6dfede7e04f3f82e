import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import type { ReviewSummary } from "../../../src/store/reviews.js"
import { keptReview, summarizeConsolidation, withoutRemovedLines } from "../../../src/write/phase2/consolidation-review.js"
import { ensureBaseline, workspaceDiff, workspaceStatus } from "../../../src/write/phase2/git-baseline.js"
import { renderWorkspaceDiff } from "../../../src/write/phase2/workspace-diff.js"

const FORGOTTEN = "rollout_summaries/2026-01-02T03-04-05-Ab9Z-some_slug.md"
const FORGOTTEN_TWIN = "rollout_summaries/2026-01-02T03-04-05-Ab9Z-some_slug-2.md"
const ADDED = "rollout_summaries/2026-02-03T04-05-06-Cd3X-new_work.md"

const summary = (fields: Partial<ReviewSummary> = {}): ReviewSummary => ({ inputsAdded: [], inputsRemoved: [], notes: [], changed: [], sessions: 1, ...fields })

describe("withoutRemovedLines", () => {
  it("turns each run of removed lines inside a hunk into one count and keeps every other line byte for byte", () => {
    const diff = [
      "diff --git a/MEMORY.md b/MEMORY.md",
      "--- a/MEMORY.md",
      "+++ b/MEMORY.md",
      "@@ -1,8 +1,6 @@",
      " # Memory",
      " ",
      "-- acme-api: deploys on Fridays",
      "-- acme-api: the staging host is stage-7.internal",
      "+- acme-api: deploys on Tuesdays",
      " - acme-api: CI runs in UTC",
      // A removed markdown rule and an added line that look like file headers are still content.
      "----",
      "+++ kept as written",
      " ",
      "@@ -20,3 +18,2 @@",
      " ## Later",
      "-- one more removed fact",
      " - kept context",
      "diff --git a/skills/deploy.md b/skills/deploy.md",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/skills/deploy.md",
      "@@ -0,0 +1,2 @@",
      "+# Deploy",
      "+Run `make deploy`.",
      "",
    ].join("\n")
    expect(withoutRemovedLines(diff)).toBe(
      [
        "diff --git a/MEMORY.md b/MEMORY.md",
        "--- a/MEMORY.md",
        "+++ b/MEMORY.md",
        "@@ -1,8 +1,6 @@",
        " # Memory",
        " ",
        "-[2 lines removed]",
        "+- acme-api: deploys on Tuesdays",
        " - acme-api: CI runs in UTC",
        "-[1 line removed]",
        "+++ kept as written",
        " ",
        "@@ -20,3 +18,2 @@",
        " ## Later",
        "-[1 line removed]",
        " - kept context",
        "diff --git a/skills/deploy.md b/skills/deploy.md",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/skills/deploy.md",
        "@@ -0,0 +1,2 @@",
        "+# Deploy",
        "+Run `make deploy`.",
        "",
      ].join("\n"),
    )
  })

  it("counts a removed run that ends the diff, and keeps a deleted file's headers", () => {
    const diff = [
      "diff --git a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md b/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
      "deleted file mode 100644",
      "--- a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
      "+++ /dev/null",
      "@@ -1,3 +0,0 @@",
      "-session_id: ses_gone",
      "-",
      "-what the deleted session was about",
    ].join("\n")
    expect(withoutRemovedLines(diff)).toBe(
      [
        "diff --git a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md b/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
        "deleted file mode 100644",
        "--- a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
        "+++ /dev/null",
        "@@ -1,3 +0,0 @@",
        "-[3 lines removed]",
      ].join("\n"),
    )
  })

  it("drops a missing-newline marker with the removed line it follows, and keeps it after an added or context line", () => {
    const marker = "\\ No newline at end of file"
    const replaced = ["diff --git a/a.md b/a.md", "--- a/a.md", "+++ b/a.md", "@@ -1 +1 @@", "-old secret", marker, "+new", marker, ""].join("\n")
    expect(withoutRemovedLines(replaced)).toBe(["diff --git a/a.md b/a.md", "--- a/a.md", "+++ b/a.md", "@@ -1 +1 @@", "-[1 line removed]", "+new", marker, ""].join("\n"))
    const unchangedEnd = ["diff --git a/b.md b/b.md", "--- a/b.md", "+++ b/b.md", "@@ -1,2 +1,2 @@", "-first", "+first!", " last", marker, ""].join("\n")
    expect(withoutRemovedLines(unchangedEnd)).toBe(["diff --git a/b.md b/b.md", "--- a/b.md", "+++ b/b.md", "@@ -1,2 +1,2 @@", "-[1 line removed]", "+first!", " last", marker, ""].join("\n"))
  })
})

describe("keptReview", () => {
  it("keeps a removed summary's collision number when it has no slug", () => {
    const bare = "rollout_summaries/2026-01-02T03-04-05-Ab9Z-2.md"
    expect(keptReview(summary({ inputsRemoved: [bare] }), `diff --git a/${bare} b/${bare}\n`).summary.inputsRemoved).toEqual([bare])
  })

  it("cuts a removed rollout summary's slug from the summary and from every place the diff names it, and leaves added inputs alone", () => {
    const review = keptReview(
      summary({ inputsAdded: [ADDED], inputsRemoved: [FORGOTTEN_TWIN, FORGOTTEN, "raw_memories.md"], changed: ["MEMORY.md"], sessions: 2 }),
      [
        `diff --git a/${FORGOTTEN} b/${FORGOTTEN}`,
        "deleted file mode 100644",
        `--- a/${FORGOTTEN}`,
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-what it was about",
        `diff --git a/${ADDED} b/${ADDED}`,
        "new file mode 100644",
        "--- /dev/null",
        `+++ b/${ADDED}`,
        "@@ -0,0 +1 @@",
        "+new work",
        "diff --git a/MEMORY.md b/MEMORY.md",
        "--- a/MEMORY.md",
        "+++ b/MEMORY.md",
        "@@ -1,2 +1,2 @@",
        ` - also in ${FORGOTTEN_TWIN}`,
        `+- from ${ADDED}`,
        "",
      ].join("\n"),
    )
    expect(review.summary).toEqual({
      inputsAdded: [ADDED],
      inputsRemoved: ["rollout_summaries/2026-01-02T03-04-05-Ab9Z-2.md", "rollout_summaries/2026-01-02T03-04-05-Ab9Z.md", "raw_memories.md"],
      notes: [],
      changed: ["MEMORY.md"],
      sessions: 2,
    })
    expect(review.diff).toBe(
      [
        "diff --git a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md b/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
        "deleted file mode 100644",
        "--- a/rollout_summaries/2026-01-02T03-04-05-Ab9Z.md",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-[1 line removed]",
        `diff --git a/${ADDED} b/${ADDED}`,
        "new file mode 100644",
        "--- /dev/null",
        `+++ b/${ADDED}`,
        "@@ -0,0 +1 @@",
        "+new work",
        "diff --git a/MEMORY.md b/MEMORY.md",
        "--- a/MEMORY.md",
        "+++ b/MEMORY.md",
        "@@ -1,2 +1,2 @@",
        " - also in rollout_summaries/2026-01-02T03-04-05-Ab9Z-2.md",
        `+- from ${ADDED}`,
        "",
      ].join("\n"),
    )
  })

  it("keeps nothing of a forgotten session's summary in the review of a real consolidation of the folder", async () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-keep-review-")), "memories")
    const write = (file: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
      fs.writeFileSync(path.join(root, file), content)
    }
    write("MEMORY.md", "# Memory\n\n- acme-api: CI runs in UTC\n- acme-api: FORGOTTEN-FACT lives in the vault\n- acme-api: uses pnpm\n")
    write("raw_memories.md", "# Raw Memories\n\n## Session `ses_gone`\n\nrollout_summary_file: 2026-01-02T03-04-05-Ab9Z-some_slug.md\n\nFORGOTTEN-FACT\n")
    write(FORGOTTEN, "session_id: ses_gone\ncwd: /work/acme\n\nFORGOTTEN-FACT and how it was found\n")
    write(FORGOTTEN_TWIN, "session_id: ses_gone_too\ncwd: /work/acme\n\nFORGOTTEN-FACT again\n")
    const now = () => Date.UTC(2026, 1, 3, 5)
    await ensureBaseline(root, now)

    // The run's inputs: the forgotten sessions' summaries are gone, a new one arrives.
    fs.rmSync(path.join(root, FORGOTTEN))
    fs.rmSync(path.join(root, FORGOTTEN_TWIN))
    write(ADDED, "session_id: ses_new\ncwd: /work/acme\n\nswitched the deploy to Tuesdays\n")
    write("raw_memories.md", "# Raw Memories\n\n## Session `ses_new`\n\nrollout_summary_file: 2026-02-03T04-05-06-Cd3X-new_work.md\n\nswitched the deploy to Tuesdays\n")
    const given = await workspaceStatus(root)
    // The consolidator removes the fact and adds the new one.
    write("MEMORY.md", "# Memory\n\n- acme-api: CI runs in UTC\n- acme-api: uses pnpm\n- acme-api: deploys on Tuesdays\n")
    const final = await workspaceStatus(root)
    const diff = renderWorkspaceDiff(final, await workspaceDiff(root, final))
    // The review would otherwise quote both.
    expect(diff).toContain("FORGOTTEN-FACT")
    expect(diff).toContain("some_slug")

    const review = keptReview(summarizeConsolidation(given, final, 1), diff)
    const everything = JSON.stringify(review)
    expect(everything).not.toContain("FORGOTTEN-FACT")
    expect(everything).not.toContain("some_slug")
    expect(review.summary).toEqual({
      inputsAdded: ["raw_memories.md", ADDED],
      inputsRemoved: ["rollout_summaries/2026-01-02T03-04-05-Ab9Z-2.md", "rollout_summaries/2026-01-02T03-04-05-Ab9Z.md"],
      notes: [],
      changed: ["MEMORY.md"],
      sessions: 1,
    })
    // The status list and the deleted file's headers name it without the slug.
    expect(review.diff).toContain("- D rollout_summaries/2026-01-02T03-04-05-Ab9Z.md\n")
    expect(review.diff).toContain("--- a/rollout_summaries/2026-01-02T03-04-05-Ab9Z-2.md\n")
    // What was added, and the lines around the change, read as they are.
    expect(review.diff).toContain(`+++ b/${ADDED}\n`)
    expect(review.diff).toContain("+switched the deploy to Tuesdays\n")
    expect(review.diff).toContain(" - acme-api: CI runs in UTC\n")
    expect(review.diff).toContain("+- acme-api: deploys on Tuesdays\n")
    // Every other line of the rendering (the status list included, "-"-led lines aside) is still there, in order.
    const rename = (line: string) => line.replaceAll("-some_slug", "")
    const keptLines = diff.split("\n").filter((line) => !line.startsWith("-") || line.startsWith("- ")).map(rename)
    expect(review.diff.split("\n").filter((line) => !line.startsWith("-[")).filter((line) => !line.startsWith("-") || line.startsWith("- "))).toEqual(keptLines)
  })
})
