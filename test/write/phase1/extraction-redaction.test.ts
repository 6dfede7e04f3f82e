// What one extraction keeps from the model and from storage: secrets and <private> spans never
// reach the helper, a secret the model writes back is redacted before it is stored, failure
// messages are redacted before they reach the job row, and every extraction records its counts.
import { v1Extraction } from "../../../src/write/phase1/extraction-strategy.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import type { RedactionStage } from "../../../src/store/memory-store.js"
import { openDatabase } from "../../../src/store/database.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { runExtraction, type ExtractionContext } from "../../../src/write/phase1/extraction-job.js"
import { FakeHost } from "../../fakes/host.js"

const HOUR = 3_600_000
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
const PRIVATE = "my partner's name is Alexandra Quinn"
const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))

let clock: number
let db: SqlDatabase
let host: FakeHost
let jobs: Stage1Jobs
let recorded: Array<{ sessionId: string; counts: Readonly<Record<string, number>>; stage: RedactionStage }>

beforeEach(() => {
  clock = Date.UTC(2026, 10, 30, 12)
  db = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-xr-")), "memory.db")).db
  host = new FakeHost(() => clock)
  jobs = new Stage1Jobs(db, () => clock)
  recorded = []
})
afterEach(() => db.close())

function context(overrides: Partial<ExtractionContext> = {}): ExtractionContext {
  return {
    host,
    jobs,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    strategy: v1Extraction(templates),
    memoryRoot: "/memories",
    helperSessions: new Set(),
    extractionModel: () => undefined,
    signal: new AbortController().signal,
    recordRedactions: (sessionId, counts, stage) => recorded.push({ sessionId, counts, stage }),
    ...overrides,
  }
}

async function extract(userText: string, ctx: ExtractionContext = context()) {
  const session = host.addSession({ id: "ses_x", updatedAt: clock - 7 * HOUR }, [
    { info: { id: "m1", role: "user" }, parts: [{ id: "p1", type: "text", text: userText }] },
    { info: { id: "m2", role: "assistant" }, parts: [{ id: "p2", type: "text", text: "Understood." }] },
  ])
  const [claim] = jobs.claimMany([{ sessionId: session.id, updatedAt: session.updatedAt }], { workerId: "w", maxClaims: 1, maxRunning: 1 })
  const result = await runExtraction(ctx, claim!, session)
  return { result, sent: JSON.stringify(host.prompts), row: db.prepare("SELECT * FROM jobs WHERE job_key = 'ses_x'").get<Record<string, unknown>>() }
}

describe("an extraction", () => {
  it("sends neither secrets nor private spans, and records what it kept out, by class", async () => {
    host.responder = () => ({ text: "", structured: { rollout_summary: "Set up deploys.", raw_memory: "- deploys use the CI token", rollout_slug: "deploys" } })
    const { result, sent } = await extract(`Deploy with ${TOKEN} and API_KEY=s3cr3t-Value9. <private>${PRIVATE}</private>`)
    expect(result.outcome).toBe("stored")
    expect(sent).not.toContain(TOKEN)
    expect(sent).not.toContain("s3cr3t-Value9")
    expect(sent).not.toContain("Alexandra")
    expect(sent).toContain("[private]")
    expect(recorded).toEqual([{ sessionId: "ses_x", stage: "transcript", counts: { "github-token": 1, "secret-assignment": 1, "private-span": 1 } }])
  })

  it("redacts a secret the model writes back before storing it, and records that too", async () => {
    host.responder = () => ({ text: "", structured: { rollout_summary: `Used ${TOKEN}.`, raw_memory: `- the token is ${TOKEN}`, rollout_slug: "tokens" } })
    await extract("How do I deploy?")
    const stored = JSON.stringify(db.prepare("SELECT * FROM stage1_outputs").all())
    expect(stored).not.toContain(TOKEN)
    expect(stored).toContain("[REDACTED:github-token]")
    expect(recorded).toEqual([{ sessionId: "ses_x", stage: "answer", counts: { "github-token": 2 } }])
  })

  it("redacts the model's error before it reaches the job row", async () => {
    host.responder = () => ({ text: "", error: { name: "APIError", message: `invalid x-api-key: sk-ant-api03-${"a1B2".repeat(10)}` } })
    const { result, row } = await extract("How do I deploy?")
    expect(result.outcome).toBe("failed")
    expect(String(row?.last_error)).toContain("[REDACTED:anthropic-api-key]")
    expect(JSON.stringify(row)).not.toContain("a1B2a1B2")
    expect(result.detail).not.toContain("a1B2a1B2")
  })

  it("still finishes when the audit cannot be written", async () => {
    host.responder = () => ({ text: "", structured: { rollout_summary: "x happened.", raw_memory: "- x", rollout_slug: null } })
    const diagnostics = new Diagnostics(host, () => clock)
    const failing = context({
      diagnostics,
      recordRedactions: () => {
        throw new Error("database is locked")
      },
    })
    const { result } = await extract(`token ${TOKEN}`, failing)
    expect(result.outcome).toBe("stored")
    expect(diagnostics.recent().map((d) => d.message)).toEqual(["could not record the redaction counts of ses_x: database is locked"])
  })
})
