// memory_search's ranked mode on small hand-made folders: what ranks first, that no result shows
// text its file no longer holds, that the index survives being damaged, and that records not
// consolidated yet are found and marked.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import type { SearchMatch } from "../../src/backend/requests.js"
import { FULL_SWEEP_MS, type RankedRecord } from "../../src/backend/ranked-search.js"
import { splitDocuments } from "../../src/backend/ranked-docs.js"
import { planRanked } from "../../src/backend/ranked-query.js"

let home: string
let root: string
let clock: number
const backends: LocalMemoryBackend[] = []

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-ranked-"))
  root = path.join(home, "memories")
  fs.mkdirSync(path.join(root, "rollout_summaries"), { recursive: true })
  clock = Date.now()
})
afterEach(() => {
  for (const backend of backends.splice(0)) backend.ranked.close()
  fs.rmSync(home, { recursive: true, force: true })
})

/** A backend whose index lives in `file` (a file of the home by default), with no settle delay so a fresh write is trusted at once. */
function backend(options: { file?: string; records?: () => readonly RankedRecord[] } = {}): LocalMemoryBackend {
  const records = options.records
  const made = new LocalMemoryBackend({
    root,
    index: {
      file: options.file ?? path.join(home, "memory_index.db"),
      now: () => clock,
      settleMs: 0,
      ...(records ? { records: () => ({ fingerprint: JSON.stringify(records().map((r) => [r.sessionId, r.updatedAt])), rows: records }) } : {}),
    },
  })
  backends.push(made)
  return made
}

const write = (relative: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), text)
}
const ranked = async (b: LocalMemoryBackend, query: string, extra: Record<string, unknown> = {}) => (await b.search({ queries: [query], match_mode: "ranked", ...extra })).matches
const where = (matches: readonly SearchMatch[]) => matches.map((m) => `${m.path}:${m.line}`)

describe("ranked search", () => {
  it("puts an exact phrase before the same words scattered", async () => {
    write("MEMORY.md", "## Task: one\n- the retry budget is five attempts\n\n## Task: two\n- a budget for the release, and a retry of the flaky job\n")
    const found = await ranked(backend(), "retry budget")
    expect(where(found)).toEqual(["MEMORY.md:1", "MEMORY.md:4"])
    expect(found[0]!.text).toBe("## Task: one\n- the retry budget is five attempts")
    expect(found[0]!.score).toBeGreaterThan(found[1]!.score!)
  })

  it("weighs a rare word above a common one", async () => {
    const common = Array.from({ length: 12 }, (_, i) => `## Task: deploy ${i}\n- deploy the service ${i} with make ship`).join("\n\n")
    write("MEMORY.md", `${common}\n\n## Task: pool\n- deploy fails when pgbouncer runs out of connections\n\n## Task: other\n- pgbouncer config lives in ops/pgbouncer.ini\n`)
    const found = await ranked(backend(), "deploy pgbouncer")
    // Both documents with the rare word come before any with the common word alone.
    expect(found.slice(0, 2).every((m) => m.text.includes("pgbouncer"))).toBe(true)
    expect(found[0]!.text).toContain("deploy fails when pgbouncer")
  })

  it("finds other forms of a word, and names which words a result holds", async () => {
    write("MEMORY.md", "## Task: staging\n- deploying to staging needs the vpn\n")
    const [first] = await ranked(backend(), "how do we deploy to staging?")
    expect(first).toMatchObject({ path: "MEMORY.md", line: 1, end_line: 2, matched_queries: ["deploy", "staging"] })
    expect(planRanked(["how do we deploy to staging?"]).terms).toEqual(["deploy", "staging"])
  })

  it("refreshes a file edited in place, and never shows text a file no longer holds", async () => {
    write("MEMORY.md", "## Task: cache\n- clear the turbo cache before a release\n")
    write("rollout_summaries/2026-03-01T10-00-00-aB3x-cache.md", "session_id: ses_a\ncwd: /src/app\n\nThe turbo cache was cleared by hand.\n")
    // Later than every write, and standing still: no full sweep comes between the two searches.
    clock = Date.now() + 60_000
    const b = backend()
    expect(where(await ranked(b, "turbo cache")).sort()).toEqual(["MEMORY.md:1", "rollout_summaries/2026-03-01T10-00-00-aB3x-cache.md:4"])
    // Edited in place (the folder's identity stays): MEMORY.md is looked at every search.
    fs.writeFileSync(path.join(root, "MEMORY.md"), "## Task: cache\n- the nx cache replaced it\n")
    // A rollout summary edited in place: its old text would be a result, so it is read again first.
    fs.writeFileSync(path.join(root, "rollout_summaries/2026-03-01T10-00-00-aB3x-cache.md"), "session_id: ses_a\ncwd: /src/app\n\nNothing about caches here any more.\n")
    const again = await b.search({ queries: ["turbo cache"], match_mode: "ranked" })
    // Only MEMORY.md was looked at before the query; the rollout summary was caught as a result.
    expect(again.files_scanned).toBe(1)
    expect(again.matches.map((m) => m.text).join("\n")).not.toContain("turbo")
    expect(where(await ranked(b, "nx cache"))[0]).toBe("MEMORY.md:1")
  })

  it("sees a rollout summary that someone else added or rewrote in place by the next full sweep at the latest", async () => {
    write("rollout_summaries/2026-03-01T10-00-00-aB3x-a.md", "session_id: ses_a\n\nAbout kafka.\n")
    const b = backend()
    await ranked(b, "kafka")
    fs.writeFileSync(path.join(root, "rollout_summaries/2026-03-01T10-00-00-aB3x-a.md"), "session_id: ses_a\n\nAbout kafka and zookeeper.\n")
    clock += FULL_SWEEP_MS
    expect(where(await ranked(b, "zookeeper"))).toEqual(["rollout_summaries/2026-03-01T10-00-00-aB3x-a.md:3"])
    fs.rmSync(path.join(root, "rollout_summaries/2026-03-01T10-00-00-aB3x-a.md"))
    expect(await ranked(b, "zookeeper")).toEqual([])
  })

  it("keeps secrets out of the index: it stores and shows what the redactor leaves", async () => {
    write("MEMORY.md", "## Task: tokens\n- the deploy token was ghp_0123456789abcdefghijABCDEFGHIJ0123456789 once\n")
    const file = path.join(home, "memory_index.db")
    const [found] = await ranked(backend({ file }), "deploy token")
    expect(found!.text).toContain("[REDACTED:")
    expect(found!.text).not.toContain("ghp_0123456789")
    backends.splice(0).forEach((b) => b.ranked.close())
    for (const suffix of ["", "-wal"]) {
      if (fs.existsSync(file + suffix)) expect(fs.readFileSync(file + suffix).includes("ghp_0123456789abcdefghij")).toBe(false)
    }
  })

  it("survives a damaged index file: it is deleted, built again, and the search answers", async () => {
    write("MEMORY.md", "## Task: pool\n- pgbouncer pool size is 40\n")
    const file = path.join(home, "memory_index.db")
    const reasons: string[] = []
    let first = new LocalMemoryBackend({ root, index: { file, settleMs: 0 } })
    expect(where(await ranked(first, "pgbouncer"))).toEqual(["MEMORY.md:1"])
    first.ranked.close()
    fs.writeFileSync(file, "this is not a database ".repeat(500))
    first = new LocalMemoryBackend({ root, index: { file, settleMs: 0, onRebuild: (reason) => reasons.push(reason) } })
    backends.push(first)
    expect(where(await ranked(first, "pgbouncer"))).toEqual(["MEMORY.md:1"])
    expect(fs.readdirSync(home).filter((name) => name.includes("corrupt"))).toEqual([])
  })

  it("rebuilds an index whose schema it does not know (another version of the plugin wrote it)", async () => {
    write("MEMORY.md", "## Task: pool\n- pgbouncer pool size is 40\n")
    const file = path.join(home, "memory_index.db")
    const { openSqlite } = await import("../../src/store/sqlite.js")
    const foreign = openSqlite(file)
    foreign.exec("CREATE TABLE something_else (x); PRAGMA user_version = 99")
    foreign.close()
    const reasons: string[] = []
    const b = new LocalMemoryBackend({ root, index: { file, settleMs: 0, onRebuild: (reason) => reasons.push(reason) } })
    backends.push(b)
    expect(where(await ranked(b, "pgbouncer"))).toEqual(["MEMORY.md:1"])
    expect(reasons).toEqual([expect.stringMatching(/newer than this plugin knows/)])
  })

  it("keeps the words of blocks a change left alone, moves their lines, and redacts every block it writes", async () => {
    const secret = "- token ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    write("MEMORY.md", `## Task: a\n- alpha kafka\n\n## Task: b\n${secret}\n`)
    clock = Date.now() + 60_000
    const b = backend()
    expect(where(await ranked(b, "kafka"))).toEqual(["MEMORY.md:1"])
    // Two blocks above, and the secret's block twice more: lines move, the new copies are redacted too.
    fs.writeFileSync(path.join(root, "MEMORY.md"), `## Task: new\n- beta kafka\n\n## Task: a\n- alpha kafka\n\n## Task: b\n${secret}\n\n${secret}\n\n${secret}\n`)
    expect(where(await ranked(b, "alpha kafka"))[0]).toBe("MEMORY.md:4")
    expect(where(await ranked(b, "token")).sort()).toEqual(["MEMORY.md:10", "MEMORY.md:12", "MEMORY.md:7"])
    for (const match of await ranked(b, "token")) expect(match.text).not.toContain("ghp_")
  })

  it("finds records not consolidated yet, marked as such, with the project filter and scope applied", async () => {
    write("rollout_summaries/2026-03-01T10-00-00-aB3x-a.md", "session_id: ses_a\nproject: github.com/acme/app\nproject_key: git:/src/app/.git\n\nThe vite build needs node 22.\n")
    write("rollout_summaries/2026-03-02T10-00-00-cD4y-b.md", "session_id: ses_b\nproject: other\nproject_key: dir:/src/other\n\nThe vite build is fine here.\n")
    const records: RankedRecord[] = [
      { sessionId: "ses_new", rawMemory: "- vite build: pin node 22 in .nvmrc", rolloutSummary: "Fixed the vite build.", slug: "vite", updatedAt: 5, projectKey: "git:/src/app/.git", projectName: "github.com/acme/app" },
    ]
    const b = backend({ records: () => records })
    const all = await ranked(b, "vite build node")
    expect(all.find((m) => m.record)).toMatchObject({ path: "record:ses_new", record: { session_id: "ses_new", field: "raw_memory" } })
    const app = await ranked(b, "vite build", { project: "app" })
    expect(app.map((m) => m.path).sort()).toEqual(["record:ses_new", "record:ses_new", "rollout_summaries/2026-03-01T10-00-00-aB3x-a.md"])
    // A scope is a place in the folder: records are not in it.
    expect((await ranked(b, "vite build", { path: "rollout_summaries" })).map((m) => m.path).sort()).toEqual(["rollout_summaries/2026-03-01T10-00-00-aB3x-a.md", "rollout_summaries/2026-03-02T10-00-00-cD4y-b.md"])
    // Consolidated: gone from the records.
    records.length = 0
    expect((await ranked(b, "vite build")).filter((m) => m.record)).toEqual([])
  })

  it("pages by position with a cursor bound to the search, and refuses options of the substring modes", async () => {
    write("MEMORY.md", Array.from({ length: 5 }, (_, i) => `## Task: t${i}\n- kafka consumer ${"lag ".repeat(i + 1)}`).join("\n\n"))
    const b = backend()
    const first = await b.search({ queries: ["kafka lag"], match_mode: "ranked", max_results: 2 })
    expect(first.matches).toHaveLength(2)
    const second = await b.search({ queries: ["kafka lag"], match_mode: "ranked", max_results: 2, cursor: first.next_cursor! })
    const third = await b.search({ queries: ["kafka lag"], match_mode: "ranked", max_results: 2, cursor: second.next_cursor! })
    expect(new Set([...first.matches, ...second.matches, ...third.matches].map((m) => m.line)).size).toBe(5)
    expect(third.next_cursor).toBeUndefined()
    await expect(b.search({ queries: ["other"], match_mode: "ranked", cursor: first.next_cursor! })).rejects.toThrow(/different search arguments/)
    await expect(b.search({ queries: ["kafka"], match_mode: "ranked", case_sensitive: true })).rejects.toThrow(/does not apply to match_mode "ranked"/)
    await expect(b.search({ queries: ["?!"], match_mode: "ranked" })).rejects.toThrow(/no word to rank by/)
  })

  it("puts the section that holds the answer before a rollout summary's opening, which restates the question in its words", async () => {
    const summary = "rollout_summaries/2026-03-01T10-00-00-aB3x-export.md"
    write(summary, [
      "session_id: ses_a", "cwd: /src/app", "",
      "The user asked why the nightly export job times out since the database upgrade.", "",
      "Context: the export job runs from cron on the worker host.", "",
      "## Task 1: Find the slow query", "Outcome: done.", "The upgrade dropped the index on orders.updated_at, so the export scanned the whole table.", "",
      "Recreated the index concurrently; the job finishes in four minutes again.", "",
    ].join("\n"))
    write("MEMORY.md", "## Task: export format\n- the nightly export job writes CSV with a header row\n")
    const found = await ranked(backend(), "why does the nightly export job time out after the database upgrade?")
    // The whole section, both its paragraphs: the cause and the fix.
    expect(found[0]).toMatchObject({ path: summary, line: 8, end_line: 12 })
    expect(found[0]!.text).toContain("Recreated the index concurrently")
    // The opening is the context of the file's sections, no result of its own.
    expect(where(found).sort()).toEqual(["MEMORY.md:1", `${summary}:6`, `${summary}:8`])
  })

  it("splits again what an index made by the earlier rules holds", async () => {
    const summary = "rollout_summaries/2026-03-01T10-00-00-aB3x-export.md"
    write(summary, "session_id: ses_a\n\nThe user asked why the export times out.\n\n## Task 1: Add the index\nOutcome: done.\nThe export scans orders by updated_at.\n")
    clock = Date.now() + 60_000
    const file = path.join(home, "memory_index.db")
    const first = backend({ file })
    expect(where(await ranked(first, "export times out"))).toEqual([`${summary}:5`])
    first.ranked.close()
    // As the rules before kept it: the opening a document of its own, in an index of schema 1.
    const { openSqlite } = await import("../../src/store/sqlite.js")
    const old = openSqlite(file)
    old.exec(`INSERT INTO chunks (id, source, start_line, end_line, hash, context, body) VALUES (900, '${summary}', 3, 3, 'old', '', 'The user asked why the export times out.');
      INSERT INTO chunks_fts (rowid, context, body) VALUES (900, '', 'The user asked why the export times out.');
      PRAGMA user_version = 1`)
    old.close()
    expect(where(await ranked(backend({ file }), "export times out"))).toEqual([`${summary}:5`])
  })

  it("leaves the substring modes exactly as they were", async () => {
    write("MEMORY.md", "## Task: one\n- the retry budget is five attempts\n")
    const b = backend()
    expect(await b.search({ queries: ["retry budget"] })).toEqual({ files_scanned: 1, matches: [{ path: "MEMORY.md", line: 2, end_line: 2, text: "- the retry budget is five attempts", matched_queries: ["retry budget"], context_before: [], context_after: [] }] })
  })
})

describe("splitDocuments", () => {
  it("makes one document per block, with its lines and the nearest heading above it", () => {
    expect(splitDocuments("MEMORY.md", "# Group\n\n## Task: a\n- one\n\n- two\n")).toEqual([
      { startLine: 1, endLine: 1, context: "", body: "# Group" },
      { startLine: 3, endLine: 4, context: "Group", body: "## Task: a\n- one" },
      { startLine: 6, endLine: 6, context: "Task: a", body: "- two" },
    ])
  })

  it("skips a rollout summary's header and cuts it by section, its opening the context of every section and no document", () => {
    const text = "session_id: ses_a\ncwd: /src/app\nproject: github.com/acme/app\n\nThe user asked about CI.\n\nContext: the web app's CI.\n\n## Task 1: flaky tests\nOutcome: fixed\n- retried twice\n\n- and pinned the browser\n\n\n### Detail\n- one spec\n"
    expect(splitDocuments("rollout_summaries/2026-03-01T10-00-00-aB3x-fix_flaky_ci.md", text)).toEqual([
      { startLine: 7, endLine: 7, context: "", body: "Context: the web app's CI." },
      { startLine: 9, endLine: 13, context: "The user asked about CI.", body: "## Task 1: flaky tests\nOutcome: fixed\n- retried twice\n\n- and pinned the browser" },
      { startLine: 16, endLine: 17, context: "The user asked about CI.\nTask 1: flaky tests", body: "### Detail\n- one spec" },
    ])
    // A record's summary, not consolidated yet, is cut the same way.
    expect(splitDocuments("rollout_summary", "Fixed CI.\n\n## Task 1: pin\nOutcome: done\n\n- node 22\n")).toEqual([{ startLine: 3, endLine: 6, context: "Fixed CI.", body: "## Task 1: pin\nOutcome: done\n\n- node 22" }])
    // Without a section, the opening is what there is: a document like any other block.
    expect(splitDocuments("rollout_summaries/2026-03-01T10-00-00-aB3x-a.md", "session_id: ses_a\n\nThe cache was cleared.\n\nIt took a minute.\n")).toEqual([
      { startLine: 3, endLine: 3, context: "", body: "The cache was cleared." },
      { startLine: 5, endLine: 5, context: "", body: "It took a minute." },
    ])
  })

  it("gives a heading's block the heading above it, ignores headings inside code fences, and cuts long blocks", () => {
    const long = Array.from({ length: 90 }, (_, i) => `- line ${i}`).join("\n")
    const docs = splitDocuments("skills/deploy/SKILL.md", `# Deploy\n\n## Steps\n\`\`\`\n# not a heading\n\n\`\`\`\n${long}\n`)
    expect(docs[0]).toMatchObject({ context: "", startLine: 1, endLine: 1 })
    expect(docs[1]).toMatchObject({ context: "Deploy", startLine: 3 })
    expect(docs[1]!.body).toContain("# not a heading")
    expect(docs.slice(1).map((d) => d.endLine - d.startLine + 1)).toEqual([40, 40, 15])
    expect(docs.slice(2).every((d) => d.context === "Deploy")).toBe(true)
  })
})
