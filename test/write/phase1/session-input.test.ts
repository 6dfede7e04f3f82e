// The session's own strings (the title OpenCode's title agent writes from the user's first
// message, the project folder) are sanitized like the user's text: the one step in
// sanitizeSession, and what reaches each sink after it (the extraction prompt, the stored record,
// the memory folder, the audit).
import { v1Extraction } from "../../../src/write/phase1/extraction-strategy.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import type { HostSession } from "../../../src/host.js"
import { openDatabase } from "../../../src/store/database.js"
import type { RedactionStage } from "../../../src/store/memory-store.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { runExtraction } from "../../../src/write/phase1/extraction-job.js"
import { dropCutWord, sanitizeSession } from "../../../src/write/phase1/session-input.js"
import { renderTranscript } from "../../../src/write/transcript/transcript.js"
import { syncInputs } from "../../../src/write/phase2/workspace.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
const FOLDER_TOKEN = "ghp_9876543210ZYXWVUTSRQponmlkjihg9876543210"
const PRIVATE = "Zorblat Quince"
/** What OpenCode's title agent makes of a first message it copies: the span, tags and all. */
const ECHOED_TITLE = `Deploy with ${TOKEN} <private>${PRIVATE}</private>`
const FOLDER = `/home/dev/${PRIVATE}/build-${FOLDER_TOKEN}`
const FORBIDDEN = [TOKEN, FOLDER_TOKEN, "Zorblat", "<private>"]
const leaks = (text: string) => FORBIDDEN.filter((secret) => text.includes(secret))

const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
const userMessage = (text: string) => ({ info: { role: "user" }, parts: [{ type: "text", text }] })
const assistantMessage = (...parts: unknown[]) => ({ info: { role: "assistant" }, parts })
const session = (overrides: Partial<HostSession> = {}): HostSession => ({
  id: "ses_x",
  title: "Fix flaky CI on main",
  directory: "/home/dev/projects/acme-api",
  createdAt: 0,
  updatedAt: 1,
  ...overrides,
})

describe("sanitizeSession", () => {
  it("leaves an ordinary title and folder byte for byte, and records nothing", () => {
    const input = sanitizeSession(session(), [userMessage("Why does CI fail?")])
    expect(input.session).toEqual({ id: "ses_x", title: "Fix flaky CI on main", directory: "/home/dev/projects/acme-api", updatedAt: 1 })
    expect(input.redactions()).toEqual({})
  })

  it("cuts a private span from the title and redacts a secret in it, counting both", () => {
    const input = sanitizeSession(session({ title: ECHOED_TITLE }), [userMessage(`Deploy with ${TOKEN} <private>${PRIVATE}</private>`)])
    expect(input.session.title).toBe("Deploy with [REDACTED:github-token] [private]")
    expect(input.redactions()).toEqual({ "github-token": 1, "private-span": 1 })
  })

  it("removes from the title and folder the text of a span the user marked private in a message", () => {
    // A title agent that paraphrases drops the tags: the words are still the user's private text.
    const input = sanitizeSession(session({ title: `Trip to ${PRIVATE} planning`, directory: FOLDER }), [
      userMessage(`Plan my trip. <private>${PRIVATE}</private>`),
    ])
    expect(input.session.title).toBe("Trip to [private] planning")
    expect(input.session.directory).toBe("/home/dev/[private]/build-[REDACTED:github-token]")
  })

  it("hides a span marked in the title wherever the transcript repeats it", () => {
    const messages = [userMessage("What do you know about me?"), assistantMessage({ type: "text", text: `You mentioned ${PRIVATE}.` })]
    const input = sanitizeSession(session({ title: `<private>${PRIVATE}</private> notes` }), messages)
    const transcript = renderTranscript(messages, { maxTokens: 10_000, ...input.transcript })
    expect(input.session.title).toBe("[private] notes")
    expect(transcript.text).toContain("You mentioned [private].")
    expect(transcript.text).not.toContain(PRIVATE)
  })

  it("gives the transcript the same hooks: user spans cut, their repeats and tool names scrubbed", () => {
    const messages = [
      userMessage(`Use <private>${PRIVATE}</private> as the label`),
      assistantMessage({ type: "tool", tool: `label_${PRIVATE}`, state: { status: "completed", input: {}, output: `labelled ${PRIVATE}` } }),
    ]
    const input = sanitizeSession(session(), messages)
    const transcript = renderTranscript(messages, { maxTokens: 10_000, ...input.transcript })
    expect(transcript.text).toBe("[user]\nUse [private] as the label\n\n[tool label_[private]]\nlabelled [private]")
    expect(input.redactions()).toEqual({ "private-span": 1 })
  })

  it("drops the word a host's cut went through, so no unrecognisable half of a token is left", () => {
    // OpenCode's cut: the first 97 characters and "...".
    const line = `Ship the release checklist for staging, canary and rollback; the CI runs with ${TOKEN} now`
    const title = `${line.slice(0, 97)}...`
    expect(title).toContain("ghp_0123")
    const input = sanitizeSession(session({ title }), [userMessage(line)])
    expect(input.session.title).toBe("Ship the release checklist for staging, canary and rollback; the CI runs with ...")
  })

  it("leaves titles that were not cut, or cut at a word's end, as they are", () => {
    expect(dropCutWord("Fix flaky CI on main")).toBe("Fix flaky CI on main")
    expect(dropCutWord("Fix flaky CI on ...")).toBe("Fix flaky CI on ...")
    expect(dropCutWord("Fix flaky CI on ma\u2026")).toBe("Fix flaky CI on \u2026")
    expect(dropCutWord("...")).toBe("...")
  })

  it("carries no metadata past the boundary", () => {
    const input = sanitizeSession(session({ metadata: { note: TOKEN } }), [])
    expect(JSON.stringify(input.session)).not.toContain(TOKEN)
    expect(Object.keys(input.session).sort()).toEqual(["directory", "id", "title", "updatedAt"])
  })
})

describe("the session's title and folder at every sink", () => {
  let clock: number
  let db: SqlDatabase
  let host: FakeHost
  let jobs: Stage1Jobs
  let dir: string
  let recorded: Array<{ counts: Readonly<Record<string, number>>; stage: RedactionStage }>

  beforeEach(() => {
    clock = Date.UTC(2026, 10, 30, 12)
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-si-"))
    db = openDatabase(path.join(dir, "memory.db")).db
    host = new FakeHost(() => clock)
    jobs = new Stage1Jobs(db, () => clock)
    recorded = []
    host.responder = () => ({ text: "", structured: { rollout_summary: "Set up deploys.", raw_memory: "- deploys run from CI", rollout_slug: "deploys" } })
  })
  afterEach(() => db.close())

  async function extract(): Promise<void> {
    const source = host.addSession({ id: "ses_x", title: ECHOED_TITLE, directory: FOLDER, updatedAt: clock - 7 * HOUR, metadata: { note: TOKEN } }, [
      userMessage(`Deploy with ${TOKEN} <private>${PRIVATE}</private>`),
      assistantMessage({ type: "text", text: "Done." }),
    ])
    const [claim] = jobs.claimMany([{ sessionId: source.id, updatedAt: source.updatedAt }], { workerId: "w", maxClaims: 1, maxRunning: 1 })
    const result = await runExtraction(
      {
        host,
        jobs,
        now: () => clock,
        diagnostics: new Diagnostics(host, () => clock),
        strategy: v1Extraction(templates),
        memoryRoot: path.join(dir, "memories"),
        helperSessions: new Set(),
        extractionModel: () => undefined,
        signal: new AbortController().signal,
        breaker: new RateLimitBreaker(() => clock),
        recordRedactions: (_id, counts, stage) => recorded.push({ counts, stage }),
      },
      claim!,
      source,
    )
    expect(result.outcome).toBe("stored")
  }

  it("the extraction prompt holds the cleaned title and folder", async () => {
    await extract()
    const [{ prompt }] = host.prompts as [{ prompt: { text: string } }]
    expect(prompt.text).toContain("Title: Deploy with [REDACTED:github-token] [private]")
    expect(prompt.text).toContain("Project folder: /home/dev/[private]/build-[REDACTED:github-token]")
    expect(leaks(JSON.stringify(host.prompts))).toEqual([])
  })

  it("the stored record keeps the cleaned folder as its cwd, and no table holds the originals", async () => {
    await extract()
    expect(db.prepare("SELECT cwd FROM stage1_outputs").get<{ cwd: string }>()?.cwd).toBe("/home/dev/[private]/build-[REDACTED:github-token]")
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>()
    for (const { name } of tables) expect(leaks(JSON.stringify(db.prepare(`SELECT * FROM ${name}`).all())), name).toEqual([])
  })

  it("the memory folder's inputs carry only the cleaned folder", async () => {
    await extract()
    const root = path.join(dir, "memories")
    fs.mkdirSync(root)
    await syncInputs(root, new Phase2Jobs(db, () => clock).selectInputs(10, 30), { now: () => clock })
    const files = fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
    expect(files.length).toBeGreaterThanOrEqual(2)
    for (const file of files) {
      const text = fs.readFileSync(path.join(file.parentPath, file.name), "utf8")
      expect(leaks(text), file.name).toEqual([])
      expect(text).toContain("cwd: /home/dev/[private]/build-[REDACTED:github-token]")
    }
  })

  it("the audit counts what the title and folder held, with the transcript's own", async () => {
    await extract()
    // github-token: the message, the title and the folder; private-span: the message and the title.
    expect(recorded).toEqual([{ stage: "transcript", counts: { "github-token": 3, "private-span": 2 } }])
  })
})
