// One redaction rule for every answer that quotes the memory folder: secrets typed by hand into
// MEMORY.md, a rollout summary, a skill and a note, and held by a record not consolidated yet, are
// never shown by any search mode, memory_read, memory_list, the injected block, or the CLI's
// search, view and recall; and a query made of the secret's own characters finds nothing.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LocalMemoryBackend } from "../../src/backend/local-backend.js"
import type { MatchMode, SearchRequest } from "../../src/backend/requests.js"
import { redactLines } from "../../src/redact/redact.js"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { runCliIn } from "../cli/run-cli.js"

const GITHUB = "ghp_R7kQ2mX9vL4pT8wN3cY6bH1jF5dS0aZeUuIi"
const AWS = "AKIAIOSFODNN7EXAMPLE"
const SECRETS = [GITHUB, AWS]
const NOW = Date.UTC(2026, 11, 1, 12)
const KEY_BLOCK = ["-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "QyNTUxOQAAACDx2nWUl9yfXb3ZQmK0b7l7rG8bq2V1e7nLQm1qYtWJbQAAAJg3y2Rt", "-----END OPENSSH PRIVATE KEY-----"]

const FILES: Record<string, string> = {
  "MEMORY.md": ["# Memory", "## Deploying", `- deploy bot token: ${GITHUB}`, "- the release key:", ...KEY_BLOCK, "- after the key, deploys use make ship", ""].join("\n"),
  "memory_summary.md": `v1\n## Deploying\nThe deploy bot token is ${GITHUB}.\n`,
  "rollout_summaries/2026-11-30T10-00-00-abcd-aws_setup.md": `session_id: ses_file\ncwd: /p\n\n## AWS setup\nThe deploy bot used access key ${AWS} in staging.\n`,
  "skills/deploy/SKILL.md": `# Deploy\nExport GITHUB_TOKEN=${GITHUB} before the deploy bot runs.\n`,
  "extensions/ad_hoc/notes/2026-11-30T10-00-00-deploy-bot.md": `# Deploy bot\nThe deploy bot token is ${GITHUB}; its AWS key is ${AWS}.\n`,
}

/** Queries that would show a secret if any answer quoted the text as written, or answered whether it is there. */
const QUERIES: string[][] = [["deploy bot token"], ["deploy", "bot"], ["ghp_"], [GITHUB], [GITHUB.slice(0, 10)], ["AKIA"], [AWS], [AWS.slice(0, 8)], ["access key"], ["GITHUB_TOKEN"]]
const MODES: Array<{ match_mode: MatchMode; line_count?: number }> = [{ match_mode: "any" }, { match_mode: "all_on_same_line" }, { match_mode: "all_within_lines", line_count: 3 }, { match_mode: "ranked" }]

let dir: string
let home: string
let root: string

function expectNoSecret(value: unknown): void {
  const text = typeof value === "string" ? value : JSON.stringify(value)
  for (const secret of SECRETS) {
    expect(text).not.toContain(secret)
    // Nor a long enough piece of it to count as shown.
    expect(text).not.toContain(secret.slice(4, 16))
  }
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-redaction-"))
  home = path.join(dir, "home")
  root = path.join(home, "memories")
  for (const [relative, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
    fs.writeFileSync(path.join(root, relative), text)
  }
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("the memory folder as the tools quote it", () => {
  const record = { sessionId: "ses_pending", rawMemory: `- the deploy bot token is ${GITHUB}`, rolloutSummary: `Deploy bot: key ${AWS}.`, slug: null, updatedAt: NOW, projectKey: null, projectName: null }
  const backendOf = () => new LocalMemoryBackend({ root, index: { records: () => ({ fingerprint: "1", rows: () => [record] }) } })

  it("no search mode shows a secret or finds one by its own characters", async () => {
    const backend = backendOf()
    let found = 0
    for (const mode of MODES) {
      for (const queries of QUERIES) {
        const request: SearchRequest = { queries, ...mode }
        const result = await backend.search(request).catch((error: Error) => ({ matches: [], error: error.message }))
        expectNoSecret(result)
        found += result.matches.length
        // A query that is the secret, or its start, matches nothing: no answer says it is there.
        if (queries.some((query) => SECRETS.some((secret) => secret.startsWith(query) && query.length > 4))) expect(result.matches, `${mode.match_mode} ${queries.join(" ")}`).toEqual([])
      }
    }
    // The searches did find the lines around the secrets, redacted.
    expect(found).toBeGreaterThan(20)
    const shown = await backend.search({ queries: ["deploy bot token"] })
    expect(shown.matches.map((m) => `${m.path}:${m.line}: ${m.text}`)).toContain("MEMORY.md:3: - deploy bot token: [REDACTED:github-token]")
    // A marker's words are found in a file that has a match as written.
    const marked = await backend.search({ queries: ["deploy bot", "github-token"], path: "MEMORY.md" })
    expect(marked.matches.map((m) => [m.line, m.matched_queries])).toEqual([[3, ["deploy bot", "github-token"]]])
    const ranked = await backend.search({ queries: ["deploy bot key"], match_mode: "ranked", max_results: 20 })
    expect(ranked.matches.some((m) => m.record?.session_id === "ses_pending")).toBe(true)
    backend.ranked.close()
  })

  it("keeps every line on its number: a private key block becomes its marker and the lines it covered", async () => {
    const backend = backendOf()
    const raw = FILES["MEMORY.md"]!.split("\n")
    const after = raw.findIndex((line) => line.includes("after the key")) + 1
    expect((await backend.search({ queries: ["make ship"] })).matches.map((m) => [m.path, m.line])).toEqual([["MEMORY.md", after]])
    const read = await backend.read({ path: "MEMORY.md" })
    expectNoSecret(read)
    expect(read.content).not.toContain(KEY_BLOCK[1])
    const lines = read.content.split("\n")
    expect(lines.length).toBe(raw.length - 1)
    expect(lines[after - 1]).toBe(raw[after - 1])
    expect(lines[4]).toBe("[REDACTED:private-key]")
    expect(redactLines(FILES["MEMORY.md"]!).split("\n").length).toBe(raw.length)
    // A window starting inside the block shows its blank stand-ins, never the key's lines.
    expect((await backend.read({ path: "MEMORY.md", line_offset: 6, max_lines: 2 })).content).toBe("\n")
    backend.ranked.close()
  })

  it("memory_read and memory_list quote nothing secret, the names included", async () => {
    fs.writeFileSync(path.join(root, `notes-${AWS}.md`), "a file named after a key\n")
    const backend = backendOf()
    for (const relative of Object.keys(FILES)) expectNoSecret(await backend.read({ path: relative }))
    expectNoSecret(await backend.read({ path: `notes-${AWS}.md` }))
    for (const folder of ["", "rollout_summaries", "skills/deploy", "extensions/ad_hoc/notes"]) expectNoSecret(await backend.list({ path: folder }))
    expect((await backend.list({})).entries.map((entry) => entry.path)).toContain("notes-[REDACTED:aws-access-key].md")
    expectNoSecret(await backend.search({ queries: ["named after"] }))
    backend.ranked.close()
  })
})

describe("the command-line tool", () => {
  beforeEach(() => {
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    const jobs = new Stage1Jobs(db, () => NOW)
    const claim = jobs.claim({ sessionId: "ses_pending", updatedAt: NOW - 1_000 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    // Typed into the database by hand, as the folder's files were: never through the redactor.
    jobs.succeed("ses_pending", claim.token, { rawMemory: `- the deploy bot token is ${GITHUB}`, rolloutSummary: `Deploy bot: key ${AWS}.`, slug: "s", cwd: "/p" })
    db.close()
  })

  it("search in every mode, view and recall print no secret", async () => {
    const run = (...argv: string[]) => runCliIn(dir, [...argv, "--home", home], NOW)
    let printed = 0
    for (const mode of ["any", "all_on_same_line", "ranked"]) {
      for (const queries of QUERIES) {
        for (const format of [[], ["--text"]]) {
          const ran = await run("search", ...queries, "--mode", mode, ...format)
          expectNoSecret(ran.stdout)
          expectNoSecret(ran.stderr)
          if (ran.code === 0 && !ran.stdout.includes("no matches")) printed++
        }
      }
    }
    const within = await run("search", "deploy", "token", "--mode", "all_within_lines", "--lines", "2", "--text")
    expect(within.stdout).toContain("[REDACTED:github-token]")
    expectNoSecret(within.stdout)
    expect(printed).toBeGreaterThan(10)
    const pending = await run("search", "deploy bot token")
    expect(JSON.stringify(pending.json.unconsolidated)).toContain("[REDACTED:github-token]")
    for (const argv of [["view"], ["view", "--all"], ["recall", "ses_pending"], ["view", "--text"], ["recall", "ses_pending", "--text"]]) {
      const ran = await run(...argv)
      expect(ran.code, argv.join(" ")).toBe(0)
      expectNoSecret(ran.stdout)
    }
    expect((await run("view")).stdout).toContain("[REDACTED:github-token]")
  })
})
