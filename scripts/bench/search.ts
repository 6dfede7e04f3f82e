// memory_search on a realistic memory folder: 4,096 rollout summaries of ~4.5 KB and a 1 MB
// MEMORY.md (about 20 MB). Two queries that must scan every file (their terms are planted in a
// few percent of the files, so no page fills up early) are timed warm, next to a plain linear
// scan (read every file, split its lines, test each line) run in the same process. Each timed
// backend run fetches every page of the answer, and every such run's full match list is compared
// with the linear scan's: a fast answer that differs from it is a failure.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import type { SearchMatch, SearchRequest } from "../../src/backend/requests.js"
import { SETTLE_MS } from "../../src/backend/search-identity.js"
import { median, type BenchResult, type Check } from "./measure.js"

const SUMMARIES = 4_096
const MEMORY_BYTES = 1024 * 1024
const TARGET_MS = 30
const SEED = 20_260_301

const QUERIES: Array<{ label: string; request: SearchRequest }> = [
  { label: "any of two terms", request: { queries: ["PgBouncer", "retry budget"] } },
  { label: "all within 3 lines", request: { queries: ["blue-green", "canary"], match_mode: "all_within_lines", line_count: 3 } },
]

export async function benchSearch(): Promise<BenchResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-bench-search-"))
  try {
    const bytes = writeWorkspace(root)
    // A folder at rest: files changed within the last SETTLE_MS are re-read by every query, by design.
    await sleep(SETTLE_MS)
    const backend = new LocalMemoryBackend({ root })
    const coldStart = performance.now()
    await backend.search(QUERIES[0]!.request)
    const coldMs = performance.now() - coldStart

    const details = [`workspace     ${SUMMARIES + 1} files, ${(bytes / 1024 / 1024).toFixed(1)} MB; first (cold) search ${coldMs.toFixed(0)} ms (no target)`]
    const checks: Check[] = []
    for (const { label, request } of QUERIES) {
      const expected = JSON.stringify(linearScan(root, request))
      const backendMs: number[] = []
      const linearMs: number[] = []
      let pages = 0
      let matches = 0
      let identical = true
      // Alternate the two so that machine noise hits both alike; the linear scan is slow, so fewer rounds.
      for (let round = 0; round < 6; round++) {
        for (let i = 0; i < 5; i++) {
          const start = performance.now()
          const answer = await allPages(backend, request)
          backendMs.push(performance.now() - start)
          // Compared outside the timed span, every run: what was timed is what was checked.
          identical &&= JSON.stringify(answer.matches) === expected
          pages = answer.pages
          matches = answer.matches.length
        }
        linearMs.push(await timed(() => linearScan(root, request)))
      }
      const backendMedian = median(backendMs)
      const linearMedian = median(linearMs)
      details.push(
        `${label.padEnd(19)} ${matches} matches on ${pages} page(s), ${identical ? "identical to" : "DIFFERENT from"} the linear scan in all ${backendMs.length} runs`,
        `   backend, all pages  ${backendMedian.toFixed(1)} ms median`,
        `   linear scan         ${linearMedian.toFixed(1)} ms median (the backend takes ${(backendMedian / linearMedian).toFixed(2)}x its time)`,
      )
      checks.push(
        { kind: "condition", what: `${label}: every page identical to the linear scan`, holds: identical },
        { kind: "absolute", what: `${label}: median of all pages, warm`, value: backendMedian, unit: "ms", max: TARGET_MS },
      )
    }
    // The floor the per-file identity check sets: one bare lstat of every file, in a tight loop.
    const everyFile = filesUnder(root, "").map((relative) => path.join(root, relative))
    const statMs: number[] = []
    for (let round = 0; round < 10; round++) statMs.push(await timed(() => everyFile.forEach((file) => fs.lstatSync(file))))
    details.push(`lstat of every file, bare loop: ${median(statMs).toFixed(1)} ms median (no target: the floor of every warm query, by design)`)
    return { name: "memory_search: warm query over 4,097 files (20 MB), every page", details, checks }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

async function timed(fn: () => unknown): Promise<number> {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

async function allPages(backend: LocalMemoryBackend, request: SearchRequest): Promise<{ matches: SearchMatch[]; pages: number }> {
  const matches: SearchMatch[] = []
  let pages = 0
  let cursor: string | undefined
  do {
    const page = await backend.search({ ...request, ...(cursor ? { cursor } : {}) })
    matches.push(...page.matches)
    pages++
    cursor = page.next_cursor
  } while (cursor)
  return { matches, pages }
}

// ---- The reference: the most direct implementation of the documented semantics. ----

function linearScan(root: string, request: SearchRequest): SearchMatch[] {
  const queries = request.queries
  const needles = queries.map((query) => query.toLowerCase())
  const window = request.match_mode === "all_within_lines" ? request.line_count! : 0
  const matches: SearchMatch[] = []
  for (const relative of filesUnder(root, "").sort(byBytes)) {
    const text = fs.readFileSync(path.join(root, relative), "utf8")
    const lines = text.split("\n")
    if (text.endsWith("\n")) lines.pop()
    const found = lines.map((line) => {
      const lower = line.replace(/\r$/, "").toLowerCase()
      return needles.map((needle) => lower.includes(needle))
    })
    const match = (first: number, last: number, held: boolean[]): SearchMatch => ({
      path: relative,
      line: first + 1,
      end_line: last + 1,
      text: lines.slice(first, last + 1).map((line) => line.replace(/\r$/, "")).join("\n"),
      matched_queries: queries.filter((_, q) => held[q]),
      context_before: [],
      context_after: [],
    })
    for (let first = 0; first < lines.length; first++) {
      if (!found[first]!.some(Boolean)) continue
      if (window === 0) {
        matches.push(match(first, first, found[first]!))
        continue
      }
      const held = queries.map(() => false)
      for (let last = first; last < Math.min(lines.length, first + window); last++) {
        found[last]!.forEach((has, q) => (held[q] ||= has))
        if (held.every(Boolean)) {
          matches.push(match(first, last, held))
          first = last
          break
        }
      }
    }
  }
  return matches
}

function filesUnder(root: string, relative: string): string[] {
  return fs.readdirSync(path.join(root, relative), { withFileTypes: true }).flatMap((entry) => {
    const child = relative ? `${relative}/${entry.name}` : entry.name
    return entry.isDirectory() ? filesUnder(root, child) : [child]
  })
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

// ---- The workspace: seeded pseudo-random prose, with the query terms planted in a few files. ----

// Words are drawn with Zipf weights (the k-th most common has weight 1/k), as in real prose: a few
// function words everywhere, domain words in many files, identifiers and paths in a few.
const FUNCTION_WORDS = "the a of to and in for is on that it with as was we by this be not or from at are an but they".split(" ")
const DOMAIN_WORDS = (
  "user agent model tool session summary memory rollout review change commit branch merge build test suite " +
  "fixture config option default value setting flag environment variable path folder file module package " +
  "dependency version release deploy server client request response timeout error warning log trace metric " +
  "cache index query database schema table column row migration script command shell terminal output input " +
  "prompt token budget limit retry preference workflow project repository issue ticket bug fix patch refactor " +
  "rename cleanup lint format type interface function method class object array string number promise async " +
  "worked failed passed skipped added removed updated checked verified confirmed noticed learned decided " +
  "prefers wants expects avoids uses runs keeps writes reads opens closes starts stops retries waits " +
  "quickly carefully always never usually often again first last next previous before after during"
).split(" ")
const SYLLABLES = "par se con fig load er cach ing han dle work spa ce sto re que ue sche du lo gin au th to ken ro ut mi gra te in dex".split(" ")
const EXTENSIONS = [".ts", ".md", ".json", ".py", ".rs", ".yaml"]
const HEADINGS = ["What happened", "Decisions", "User preferences", "Commands that worked", "Pitfalls", "Open questions", "Files touched"]

export function writeWorkspace(root: string): number {
  const random = mulberry32(SEED)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const coined = () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => pick(SYLLABLES)).join("")
  const tail = Array.from({ length: 1_000 }, (_, i) => {
    const kind = i % 4
    if (kind === 0) return coined()
    if (kind === 1) return `\`${coined()}${coined().replace(/^./, (c) => c.toUpperCase())}\``
    if (kind === 2) return `src/${coined()}/${coined()}${pick(EXTENSIONS)}`
    return `v${1 + Math.floor(random() * 4)}.${Math.floor(random() * 20)}.${Math.floor(random() * 10)}`
  })
  const vocabulary = [...FUNCTION_WORDS, ...DOMAIN_WORDS, ...tail]
  const cumulative: number[] = []
  vocabulary.reduce((sum, _, rank) => (cumulative[rank] = sum + 1 / (rank + 1)), 0)
  const word = () => {
    const target = random() * cumulative[cumulative.length - 1]!
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const mid = (low + high) >>> 1
      if (cumulative[mid]! < target) low = mid + 1
      else high = mid
    }
    return vocabulary[low]!
  }
  const sentence = () => `${Array.from({ length: 8 + Math.floor(random() * 14) }, word).join(" ").replace(/^./, (c) => c.toUpperCase())}.`
  const paragraph = () => Array.from({ length: 1 + Math.floor(random() * 3) }, sentence).join(" ")
  // About one line in 400 gets a term (some 3% of the files), so each query finds 100-200 matches
  // and never fills its first page early: every file is scanned.
  const plant = (line: string) => {
    const roll = random()
    if (roll < 0.0006) return `${line} Moved the pool behind ${pick(["PgBouncer", "pgbouncer", "PGBOUNCER"])} in transaction mode.`
    if (roll < 0.0012) return `${line} The retry budget was ${1 + Math.floor(random() * 9)} attempts.`
    if (roll < 0.0017) return `${line} Chose a blue-green switch for the web tier.\n- The canary stayed at 5% for an hour.`
    if (roll < 0.0021) return `${line} A canary release came first.`
    if (roll < 0.0025) return `${line} The blue-green cut-over was scripted.`
    return line
  }

  fs.mkdirSync(path.join(root, "rollout_summaries"))
  let bytes = 0
  const start = Date.UTC(2026, 0, 1)
  for (let i = 0; i < SUMMARIES; i++) {
    const stamp = new Date(start + i * 3_600_000 + Math.floor(random() * 3_000_000)).toISOString().slice(0, 19).replace(/:/g, "-")
    const hash = Array.from({ length: 4 }, () => pick([..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"])).join("")
    const slug = Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(DOMAIN_WORDS)).join("_")
    const size = 4_000 + Math.floor(random() * 1_000)
    let text = `# ${sentence()}\n\nthread: ${hash}${i}\n`
    while (text.length < size) {
      text += `\n## ${pick(HEADINGS)}\n\n${plant(paragraph())}\n`
      for (let b = Math.floor(random() * 4); b > 0; b--) text += `- ${plant(sentence())}\n`
      if (random() < 0.15) text += `\n\`\`\`sh\nnpm run ${word()} -- --${word()}\n\`\`\`\n`
    }
    fs.writeFileSync(path.join(root, "rollout_summaries", `${stamp}-${hash}-${slug}.md`), text)
    bytes += Buffer.byteLength(text)
  }
  let memory = "# Memory\n"
  while (memory.length < MEMORY_BYTES) memory += `\n## ${word()} ${word()}\n\n- ${plant(sentence())}\n- ${plant(paragraph())}\n`
  fs.writeFileSync(path.join(root, "MEMORY.md"), memory)
  return bytes + Buffer.byteLength(memory)
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
