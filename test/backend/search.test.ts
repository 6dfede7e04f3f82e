import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import type { SearchMatch, SearchRequest } from "../../src/backend/requests.js"
import { SEARCH_MAX_LINE_CHARS, SEARCH_MAX_RESULTS } from "../../src/backend/search.js"
import { SETTLE_MS } from "../../src/backend/search-identity.js"

let dir: string
let root: string
let backend: LocalMemoryBackend

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-search-"))
  root = path.join(dir, "memories")
  fs.mkdirSync(root)
  backend = new LocalMemoryBackend({ root })
})
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

function write(relative: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

/** Matches as "path:line" or "path:line-end_line". */
async function where(request: SearchRequest): Promise<string[]> {
  const result = await backend.search(request)
  return result.matches.map((m) => (m.end_line === m.line ? `${m.path}:${m.line}` : `${m.path}:${m.line}-${m.end_line}`))
}

async function allPages(request: SearchRequest): Promise<{ matches: SearchMatch[]; pages: number }> {
  const matches: SearchMatch[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await backend.search({ ...request, ...(cursor ? { cursor } : {}) })
    matches.push(...page.matches)
    cursor = page.next_cursor
    pages++
  } while (cursor && pages < 1_000)
  return { matches, pages }
}

describe("memory_search match modes", () => {
  beforeEach(() => {
    write("MEMORY.md", ["# Memory", "- deploy with the staging script", "- the cache lives in redis", "- staging deploys need approval"].join("\n"))
    write("b/notes.md", ["redis cache warmed", "nothing", "deploy", "later", "staging"].join("\n"))
  })

  it("any: every line with a query, ordered by path then line, listing the queries it holds in request order", async () => {
    const result = await backend.search({ queries: ["staging", "deploy"] })
    expect(result.matches.map((m) => [m.path, m.line, m.matched_queries])).toEqual([
      ["MEMORY.md", 2, ["staging", "deploy"]],
      ["MEMORY.md", 4, ["staging", "deploy"]],
      ["b/notes.md", 3, ["deploy"]],
      ["b/notes.md", 5, ["staging"]],
    ])
    expect(result.matches[0]).toEqual({
      path: "MEMORY.md",
      line: 2,
      end_line: 2,
      text: "- deploy with the staging script",
      matched_queries: ["staging", "deploy"],
      context_before: [],
      context_after: [],
    })
    expect(result.files_scanned).toBe(2)
    expect(result.next_cursor).toBeUndefined()
    expect(result.truncated_lines).toBeUndefined()
  })

  it("all_on_same_line: only lines holding every query", async () => {
    expect(await where({ queries: ["redis", "cache"], match_mode: "all_on_same_line" })).toEqual(["MEMORY.md:3", "b/notes.md:1"])
  })

  it("all_within_lines: the span from a line holding a query to the line completing the set, as text", async () => {
    const result = await backend.search({ queries: ["deploy", "staging"], match_mode: "all_within_lines", line_count: 3 })
    expect(result.matches.map((m) => `${m.path}:${m.line}-${m.end_line}`)).toEqual(["MEMORY.md:2-2", "MEMORY.md:4-4", "b/notes.md:3-5"])
    expect(result.matches[2]!.text).toBe("deploy\nlater\nstaging")
    expect(result.matches[2]!.matched_queries).toEqual(["deploy", "staging"])
    expect(await where({ queries: ["deploy", "staging"], match_mode: "all_within_lines", line_count: 2 })).toEqual(["MEMORY.md:2", "MEMORY.md:4"])
  })

  it("all_within_lines requires a line_count from 1 to 100", async () => {
    await expect(backend.search({ queries: ["a", "b"], match_mode: "all_within_lines" })).rejects.toMatchObject({
      kind: "invalid_argument",
      message: expect.stringMatching(/line_count/),
    })
    for (const line_count of [0, 101, 2.5]) {
      await expect(backend.search({ queries: ["a"], match_mode: "all_within_lines", line_count })).rejects.toMatchObject({ kind: "invalid_argument" })
    }
  })

  it("refuses an unknown match_mode", async () => {
    await expect(backend.search({ queries: ["a"], match_mode: "fuzzy" as never })).rejects.toMatchObject({ kind: "invalid_argument" })
  })
})

describe("memory_search comparison", () => {
  beforeEach(() => {
    write("MEMORY.md", ["Uses PgBouncer in front of Postgres", "pgbouncer pool size is 20", "pg-bouncer restarts", "PG BOUNCER", "ÉTÉ notes", "été notes"].join("\n"))
  })

  it("ignores case by default and honours case_sensitive", async () => {
    expect(await where({ queries: ["pgbouncer"] })).toEqual(["MEMORY.md:1", "MEMORY.md:2"])
    expect(await where({ queries: ["pgbouncer"], case_sensitive: true })).toEqual(["MEMORY.md:2"])
    expect(await where({ queries: ["été"] })).toEqual(["MEMORY.md:5", "MEMORY.md:6"])
    expect(await where({ queries: ["été"], case_sensitive: true })).toEqual(["MEMORY.md:6"])
  })

  it("normalized compares letters and digits only, lowercased unless case_sensitive", async () => {
    expect(await where({ queries: ["PG-Bouncer"], normalized: true })).toEqual(["MEMORY.md:1", "MEMORY.md:2", "MEMORY.md:3", "MEMORY.md:4"])
    expect(await where({ queries: ["pg bouncer"], normalized: true, case_sensitive: true })).toEqual(["MEMORY.md:2", "MEMORY.md:3"])
    expect(await where({ queries: ["e-t-e"], normalized: true })).toEqual([])
    expect(await where({ queries: ["ÉTÉ!"], normalized: true })).toEqual(["MEMORY.md:5", "MEMORY.md:6"])
  })

  it("reports the original query strings, even when two of them compare equal", async () => {
    const result = await backend.search({ queries: ["PgBouncer", "pgbouncer", "pool"], match_mode: "any" })
    expect(result.matches.map((m) => m.matched_queries)).toEqual([
      ["PgBouncer", "pgbouncer"],
      ["PgBouncer", "pgbouncer", "pool"],
    ])
  })

  it("refuses empty or blank queries", async () => {
    await expect(backend.search({ queries: [] })).rejects.toMatchObject({ kind: "empty_query" })
    await expect(backend.search({ queries: ["", "   "] })).rejects.toMatchObject({ kind: "empty_query" })
    await expect(backend.search({ queries: ["--"], normalized: true })).rejects.toMatchObject({ kind: "empty_query", message: expect.stringMatching(/letters and digits/) })
  })

  it("ignores blank queries next to real ones", async () => {
    expect(await where({ queries: ["  ", "pool"] })).toEqual(["MEMORY.md:2"])
  })

  it("refuses a query spanning lines, which could never match", async () => {
    await expect(backend.search({ queries: ["pool\nsize"] })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/all_within_lines/) })
  })
})

describe("memory_search scope", () => {
  beforeEach(() => {
    write("MEMORY.md", "alpha\n")
    write("rollout_summaries/2026-01-05T10-00-00-ab12-first.md", "alpha one\n")
    write("rollout_summaries/2026-01-31T23-59-59-cd34-second.md", "alpha two\n")
    write("rollout_summaries/2026-02-01T00-00-00-ef56-third.md", "alpha three\n")
    write("extensions/ci/notes/2026-01-20T12-00-00-note.md", "alpha note\n")
    write("extensions/ci/instructions.md", "alpha instructions\n")
  })

  it("searches every file under the root by default", async () => {
    expect((await where({ queries: ["alpha"] })).map((m) => m.split(":")[0])).toEqual([
      "MEMORY.md",
      "extensions/ci/instructions.md",
      "extensions/ci/notes/2026-01-20T12-00-00-note.md",
      "rollout_summaries/2026-01-05T10-00-00-ab12-first.md",
      "rollout_summaries/2026-01-31T23-59-59-cd34-second.md",
      "rollout_summaries/2026-02-01T00-00-00-ef56-third.md",
    ])
  })

  it("limits the search to a folder or to one file", async () => {
    expect(await where({ queries: ["alpha"], path: "extensions" })).toEqual(["extensions/ci/instructions.md:1", "extensions/ci/notes/2026-01-20T12-00-00-note.md:1"])
    expect(await where({ queries: ["alpha"], path: "MEMORY.md" })).toEqual(["MEMORY.md:1"])
    expect((await backend.search({ queries: ["alpha"], path: "MEMORY.md" })).files_scanned).toBe(1)
  })

  it("refuses a hidden, missing or escaping scope like the other tools", async () => {
    write(".git/HEAD", "alpha\n")
    await expect(backend.search({ queries: ["alpha"], path: ".git" })).rejects.toMatchObject({ kind: "not_found" })
    await expect(backend.search({ queries: ["alpha"], path: "nope" })).rejects.toMatchObject({ kind: "not_found" })
    await expect(backend.search({ queries: ["alpha"], path: "../x" })).rejects.toMatchObject({ kind: "invalid_path" })
  })

  it("with since or until, keeps only files whose name starts with a timestamp in range; a date alone covers its whole day", async () => {
    expect(await where({ queries: ["alpha"], since: "2026-01-20" })).toEqual([
      "extensions/ci/notes/2026-01-20T12-00-00-note.md:1",
      "rollout_summaries/2026-01-31T23-59-59-cd34-second.md:1",
      "rollout_summaries/2026-02-01T00-00-00-ef56-third.md:1",
    ])
    expect(await where({ queries: ["alpha"], until: "2026-01-31" })).toEqual([
      "extensions/ci/notes/2026-01-20T12-00-00-note.md:1",
      "rollout_summaries/2026-01-05T10-00-00-ab12-first.md:1",
      "rollout_summaries/2026-01-31T23-59-59-cd34-second.md:1",
    ])
    expect(await where({ queries: ["alpha"], since: "2026-01-20T12:00:01Z", until: "2026-02-01T00:00:00Z" })).toEqual([
      "rollout_summaries/2026-01-31T23-59-59-cd34-second.md:1",
      "rollout_summaries/2026-02-01T00-00-00-ef56-third.md:1",
    ])
    // Bounds with an offset are converted to UTC, the zone of the names.
    expect(await where({ queries: ["alpha"], since: "2026-02-01T01:00:00+01:00", path: "rollout_summaries" })).toEqual([
      "rollout_summaries/2026-02-01T00-00-00-ef56-third.md:1",
    ])
  })

  it("refuses since/until that are not ISO dates, or that are out of order", async () => {
    await expect(backend.search({ queries: ["alpha"], since: "last week" })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/since must be an ISO date/) })
    await expect(backend.search({ queries: ["alpha"], until: "2026-02-30" })).rejects.toMatchObject({ kind: "invalid_argument" })
    await expect(backend.search({ queries: ["alpha"], since: "2026-03-01", until: "2026-02-01" })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/later than until/) })
  })
})

describe("memory_search skips", () => {
  it("never searches dot-entries, symlinks or binary files", async () => {
    write("kept.md", "needle\n")
    write(".env", "needle\n")
    write(".git/objects/x", "needle\n")
    write("notes/.draft.md", "needle\n")
    write("blob.bin", Buffer.concat([Buffer.from("needle\n"), Buffer.from([0, 1, 2])]))
    fs.mkdirSync(path.join(dir, "outside"))
    fs.writeFileSync(path.join(dir, "outside", "secret.md"), "needle\n")
    fs.symlinkSync(path.join(dir, "outside"), path.join(root, "linked"))
    fs.symlinkSync(path.join(dir, "outside", "secret.md"), path.join(root, "linked.md"))
    const result = await backend.search({ queries: ["needle"] })
    expect(result.matches.map((m) => m.path)).toEqual(["kept.md"])
    expect(result.files_scanned).toBe(1)
  })

  it("does not crash on invalid UTF-8, and matches around it", async () => {
    write("odd.md", Buffer.concat([Buffer.from("before "), Buffer.from([0xff, 0xfe]), Buffer.from(" needle\n")]))
    expect((await backend.search({ queries: ["needle"] })).matches[0]!.text).toBe("before \uFFFD\uFFFD needle")
  })

  it("strips carriage returns from the lines it returns", async () => {
    write("crlf.md", "one needle\r\ntwo\r\n")
    const [match] = (await backend.search({ queries: ["needle"], context_lines: 1 })).matches
    expect(match).toMatchObject({ text: "one needle", context_after: ["two"] })
  })

  it("cuts over-long lines and counts them in truncated_lines", async () => {
    write("long.md", `${"x".repeat(SEARCH_MAX_LINE_CHARS + 500)} needle\nshort needle\n`)
    const result = await backend.search({ queries: ["needle"] })
    expect(result.matches).toHaveLength(2)
    expect(result.matches[0]!.text.length).toBeLessThan(SEARCH_MAX_LINE_CHARS + 5)
    expect(result.matches[1]!.text).toBe("short needle")
    expect(result.truncated_lines).toBe(1)
  })
})

describe("memory_search context", () => {
  beforeEach(() => write("MEMORY.md", ["l1 hit", "l2", "l3", "l4 hit", "l5", "l6 hit"].join("\n")))

  it("adds up to context_lines before and after, stopping at the file's edges", async () => {
    const result = await backend.search({ queries: ["hit"], context_lines: 2 })
    expect(result.matches.map((m) => [m.line, m.context_before, m.context_after])).toEqual([
      [1, [], ["l2", "l3"]],
      [4, ["l2", "l3"], ["l5", "l6 hit"]],
      [6, ["l4 hit", "l5"], []],
    ])
  })

  it("puts context around the whole span of an all_within_lines match", async () => {
    write("MEMORY.md", ["before", "alpha", "middle", "beta", "after"].join("\n"))
    const [match] = (await backend.search({ queries: ["alpha", "beta"], match_mode: "all_within_lines", line_count: 3, context_lines: 1 })).matches
    expect(match).toMatchObject({ line: 2, end_line: 4, text: "alpha\nmiddle\nbeta", context_before: ["before"], context_after: ["after"] })
  })

  it("lowers context_lines above 10 to 10 and refuses a negative one", async () => {
    write("MEMORY.md", [...Array.from({ length: 15 }, (_, i) => `c${i}`), "hit"].join("\n"))
    expect((await backend.search({ queries: ["hit"], context_lines: 50 })).matches[0]!.context_before).toHaveLength(10)
    await expect(backend.search({ queries: ["hit"], context_lines: -1 })).rejects.toMatchObject({ kind: "invalid_argument" })
  })
})

describe("memory_search paging", () => {
  beforeEach(() => {
    for (const name of ["a.md", "b/c.md", "b-d.md", "e.md"]) write(name, Array.from({ length: 7 }, (_, i) => (i % 2 === 0 ? `hit ${i}` : `miss ${i}`)).join("\n"))
  })

  it("returns every match exactly once across pages, in the order of a single page", async () => {
    const whole = await backend.search({ queries: ["hit"] })
    expect(whole.matches).toHaveLength(16)
    for (const max_results of [1, 3, 4, 5]) {
      const { matches, pages } = await allPages({ queries: ["hit"], max_results })
      expect(matches, `max_results ${max_results}`).toEqual(whole.matches)
      expect(pages).toBe(Math.ceil(16 / max_results))
    }
  })

  it("pages all_within_lines matches the same way", async () => {
    const request: SearchRequest = { queries: ["hit", "miss"], match_mode: "all_within_lines", line_count: 2 }
    const whole = await backend.search(request)
    expect(whole.matches.length).toBeGreaterThan(4)
    expect((await allPages({ ...request, max_results: 2 })).matches).toEqual(whole.matches)
  })

  it("orders files by their paths' bytes, so b-d.md comes before b/c.md", async () => {
    expect((await where({ queries: ["hit 0"] })).map((m) => m.split(":")[0])).toEqual(["a.md", "b-d.md", "b/c.md", "e.md"])
  })

  it("stops scanning once a page is full", async () => {
    const page = await backend.search({ queries: ["hit"], max_results: 2 })
    expect(page.matches).toHaveLength(2)
    expect(page.files_scanned).toBe(1)
    expect(page.next_cursor).toBeDefined()
  })

  it("refuses a cursor from a different search, or one it never returned", async () => {
    const { next_cursor } = await backend.search({ queries: ["hit"], max_results: 1 })
    await expect(backend.search({ queries: ["miss"], cursor: next_cursor! })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/different search arguments/) })
    await expect(backend.search({ queries: ["hit"], case_sensitive: true, cursor: next_cursor! })).rejects.toMatchObject({ kind: "invalid_argument" })
    await expect(backend.search({ queries: ["hit"], cursor: "bogus" })).rejects.toMatchObject({ kind: "invalid_argument" })
    const { next_cursor: listCursor } = await backend.list({ max_results: 1 })
    await expect(backend.search({ queries: ["hit"], cursor: listCursor! })).rejects.toMatchObject({ kind: "invalid_argument" })
  })

  it("accepts a cursor with a different max_results or context_lines, which do not change the order", async () => {
    const { next_cursor } = await backend.search({ queries: ["hit"], max_results: 1 })
    const next = await backend.search({ queries: ["hit"], max_results: 2, context_lines: 1, cursor: next_cursor! })
    expect(next.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["a.md:3", "a.md:5"])
  })

  it("lowers max_results above 200 to 200 and refuses one below 1", async () => {
    write("many.md", Array.from({ length: 450 }, () => "hit").join("\n"))
    const page = await backend.search({ queries: ["hit"], max_results: 10_000 })
    expect(page.matches).toHaveLength(SEARCH_MAX_RESULTS)
    expect(page.next_cursor).toBeDefined()
    expect((await backend.search({ queries: ["hit"] })).matches).toHaveLength(SEARCH_MAX_RESULTS)
    await expect(backend.search({ queries: ["hit"], max_results: 0 })).rejects.toMatchObject({ kind: "invalid_argument", message: expect.stringMatching(/max_results/) })
  })
})

describe("memory_search cache", () => {
  it("sees an external edit, a new file and a deleted file without invalidate()", async () => {
    write("MEMORY.md", "old fact\n")
    write("gone.md", "fact to forget\n")
    expect(await where({ queries: ["fact"] })).toEqual(["MEMORY.md:1", "gone.md:1"])
    // Rewritten in place with the same size, so only the identity check can notice.
    write("MEMORY.md", "new fact\n")
    fs.rmSync(path.join(root, "gone.md"))
    write("sub/added.md", "fresh fact\n")
    const result = await backend.search({ queries: ["fact"] })
    expect(result.matches.map((m) => [m.path, m.text])).toEqual([
      ["MEMORY.md", "new fact"],
      ["sub/added.md", "fresh fact"],
    ])
  })

  it("reads an unchanged file once it has settled, re-reads a changed one, and re-reads everything after invalidate()", async () => {
    write("a.md", "alpha\n")
    write("b.md", "beta\n")
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(Date.now() + 2 * SETTLE_MS)
    const reads = vi.spyOn(fs, "readFileSync")
    await backend.search({ queries: ["a"] })
    expect(reads).toHaveBeenCalledTimes(2)
    await backend.search({ queries: ["b"] })
    expect(reads).toHaveBeenCalledTimes(2)
    write("b.md", "beta, longer\n")
    vi.setSystemTime(Date.now() + 2 * SETTLE_MS)
    expect(await where({ queries: ["longer"] })).toEqual(["b.md:1"])
    expect(reads).toHaveBeenCalledTimes(3)
    backend.invalidate()
    await backend.search({ queries: ["a"] })
    expect(reads).toHaveBeenCalledTimes(5)
  })

  it("re-reads a file changed too recently to trust its timestamps", async () => {
    write("a.md", "alpha\n")
    const reads = vi.spyOn(fs, "readFileSync")
    await backend.search({ queries: ["alpha"] })
    await backend.search({ queries: ["alpha"] })
    expect(reads).toHaveBeenCalledTimes(2)
  })
})
