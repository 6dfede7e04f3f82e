// The whole memory loop on a real OpenCode with a scripted model, in a throw-away home:
// session A states a fact; it becomes idle; phase 1 extracts it; phase 2 (the scripted
// consolidator calling OpenCode's write tool) writes MEMORY.md and the summary; a new session
// B is shown the fact; session A is deleted; a later consolidation forgets it. Used by the
// end-to-end test, the demo and the benchmark.
import fs from "node:fs"
import path from "node:path"
import { openDatabase } from "../../../src/store/database.js"
import { FakeLlm, contentText, lastUserText, systemTexts, type ChatRequest, type FakeReply } from "./fake-llm.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./opencode.js"
import { ServerApi } from "./server-api.js"

const HOUR = 3_600_000
export const FACT = "The acme-api service is deployed with `make ship` from the repo root, never on Fridays."
const FACT_MARK = "make ship"
/** The consolidator's user message starts with this (src/write/consolidate-prompt.ts). */
const CONSOLIDATE = "Consolidate the memory folder now"

export interface ClosedLoopResult {
  memoryHome: string
  memoryRoot: string
  sessionA: string
  /** memory_summary.md and MEMORY.md after the first consolidation. */
  learnedSummary: string
  learnedHandbook: string
  /** The memory block session B's model received. */
  injectedBlock: string
  /** memory_summary.md after session A was deleted and memory consolidated again. */
  forgottenSummary: string
  /** Whether a session after the forgetting still saw the fact. */
  factAfterForgetting: boolean
  /** From the message that made A's extraction start to the fact being in the summary. */
  learnMs: number
  /** What the model received for session A's extraction and for the first consolidation's first turn. */
  helperRequests: { extraction: ChatRequest; consolidation: ChatRequest }
}

export interface ClosedLoopOptions {
  log?: (line: string) => void
  /** Keep the sandbox folder afterwards (the demo shows where the files are). */
  keep?: boolean
  /** What session A says; it must contain FACT. */
  statement?: string
  /** Extra environment for every OpenCode process (e.g. a test switch). */
  env?: Record<string, string>
}

export async function runClosedLoop(options: ClosedLoopOptions = {}): Promise<ClosedLoopResult> {
  const log = options.log ?? (() => undefined)
  const llm = await FakeLlm.start()
  const sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [defaultPluginSpec()], ...(options.env ? { env: options.env } : {}) })
  const statement = options.statement ?? `Please remember for later: ${FACT}`
  if (!statement.includes(FACT)) throw new Error("closed loop: the statement must contain FACT")
  const memoryRoot = path.join(sandbox.memoryHome, "memories")
  let server: ServeHandle | undefined
  try {
    llm.setStructuredHandler(extractor)

    // 1. Session A states a fact.
    server = await startServe(sandbox)
    let api = new ServerApi(server.url, sandbox.projectDir)
    const sessionA = (await api.createSession("deploy notes")).id
    await api.prompt(sessionA, statement)
    log(`session A (${sessionA}) stated: ${FACT}`)
    await server.stop()

    // 2. Hours later (the plugin's test clock), OpenCode starts again and the user opens a session.
    server = await restartAt(sandbox, 7 * HOUR)
    api = new ServerApi(server.url, sandbox.projectDir)
    llm.script(...consolidatorWrites(memoryRoot, summaryWith(FACT), handbookWith(FACT), false))
    const started = Date.now()
    const warmup = (await api.createSession("morning")).id
    await api.prompt(warmup, "good morning")
    const learnedSummary = await waitFor(() => readIf(path.join(memoryRoot, "memory_summary.md"), (text) => text.includes(FACT_MARK)), {
      timeoutMs: 60_000,
      message: "the fact never reached memory_summary.md",
    })
    const learnMs = Date.now() - started
    await waitFor(() => phase2Status(sandbox) === "done", { timeoutMs: 30_000, message: "the first consolidation did not finish" })
    const learnedHandbook = fs.readFileSync(path.join(memoryRoot, "MEMORY.md"), "utf8")
    log(`phase 1 extracted session A and phase 2 wrote the summary in ${learnMs} ms`)
    const helperRequests = firstHelperRequests(llm)

    // 3. A new session B is shown what was learned.
    llm.reset()
    llm.setStructuredHandler(extractor)
    const sessionB = (await api.createSession("new task")).id
    await api.prompt(sessionB, "How do I deploy acme-api?")
    const injectedBlock = memoryBlockOf(llm.requests().find((r) => r.kind === "agent")?.body)
    log(`session B's system prompt carries the fact: ${injectedBlock.includes(FACT_MARK)}`)

    // 4. The user deletes session A; memory forgets it at the next consolidation.
    await api.request("DELETE", `/session/${sessionA}`)
    await waitFor(() => count(sandbox, `SELECT COUNT(*) AS n FROM stage1_outputs WHERE session_id = '${sessionA}'`) === 0, {
      timeoutMs: 15_000,
      message: "session A's memory record was not deleted",
    })
    await server.stop()
    server = await restartAt(sandbox, 14 * HOUR)
    api = new ServerApi(server.url, sandbox.projectDir)
    llm.script(...consolidatorWrites(memoryRoot, summaryWith("No durable facts remain."), handbookWith("Nothing remembered yet."), true))
    const later = (await api.createSession("later")).id
    await api.prompt(later, "hello again")
    const forgottenSummary = await waitFor(() => readIf(path.join(memoryRoot, "memory_summary.md"), (text) => !text.includes(FACT_MARK)), {
      timeoutMs: 60_000,
      message: "the fact was never forgotten",
    })
    await waitFor(() => phase2Status(sandbox) === "done", { timeoutMs: 30_000, message: "the second consolidation did not finish" })
    llm.reset()
    const sessionD = (await api.createSession("after forgetting")).id
    await api.prompt(sessionD, "How do I deploy acme-api?")
    const factAfterForgetting = JSON.stringify(llm.requests().filter((r) => r.kind === "agent").map((r) => systemTexts(r.body))).includes(FACT_MARK)
    log(`after deleting session A, a new session still sees the fact: ${factAfterForgetting}`)
    return { memoryHome: sandbox.memoryHome, memoryRoot, sessionA, learnedSummary, learnedHandbook, injectedBlock, forgottenSummary, factAfterForgetting, learnMs, helperRequests }
  } finally {
    await server?.stop()
    await llm.close()
    if (!options.keep) await sandbox.cleanup()
  }
}

async function restartAt(sandbox: Sandbox, offsetMs: number): Promise<ServeHandle> {
  sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(offsetMs)
  return startServe(sandbox)
}

/** The scripted extractor: the session that states the fact yields a record; others, nothing. */
function extractor(request: ChatRequest): Record<string, unknown> {
  if (!userTexts(request).includes(FACT_MARK)) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
  return {
    rollout_summary: `The user explained how acme-api is deployed.\nContext: the acme-api repository.\n## Task 1: deployment notes\nOutcome: recorded. ${FACT}`,
    raw_memory: `---\ndescription: how acme-api is deployed\ntask_outcome: success\ncwd: acme-api\nkeywords: deploy, make ship\n---\n### Task 1: deployment\nReusable knowledge:\n- ${FACT}`,
    rollout_slug: "acme-api-deploys",
  }
}

function summaryWith(line: string): string {
  return `v1\n## User profile\nA developer working on acme-api.\n\n## What's in memory\n- ${line}\n`
}

function handbookWith(line: string): string {
  return `# Task group: acme-api deployments\nscope: deploying acme-api\napplies_to: cwd=any; reuse_rule=when deploying\n\n## Reusable knowledge\n- ${line}\n`
}

/** The consolidator's turns: read what exists (OpenCode's write tool wants that), write both files, report. */
function consolidatorWrites(root: string, summary: string, handbook: string, filesExist: boolean): FakeReply[] {
  const reads: FakeReply[] = filesExist
    ? [{ match: CONSOLIDATE, toolCalls: [{ name: "read", arguments: { filePath: path.join(root, "MEMORY.md") } }, { name: "read", arguments: { filePath: path.join(root, "memory_summary.md") } }] }]
    : []
  return [
    ...reads,
    { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "MEMORY.md"), content: handbook } }] },
    { match: CONSOLIDATE, toolCalls: [{ name: "write", arguments: { filePath: path.join(root, "memory_summary.md"), content: summary } }] },
    { match: CONSOLIDATE, text: "Updated MEMORY.md and memory_summary.md." },
  ]
}

/** Session A's extraction request and the first request of the first consolidation (before any tool result). */
function firstHelperRequests(llm: FakeLlm): { extraction: ChatRequest; consolidation: ChatRequest } {
  const requests = llm.requests()
  const extraction = requests.find((r) => r.kind === "structured" && userTexts(r.body).includes(FACT_MARK))?.body
  const consolidation = requests.find((r) => r.kind === "agent" && lastUserText(r.body).includes(CONSOLIDATE))?.body
  if (!extraction || !consolidation) throw new Error("closed loop: the extraction or consolidation request was not logged")
  return { extraction, consolidation }
}

function userTexts(body: ChatRequest): string {
  return (body.messages ?? []).filter((m) => m.role === "user").map((m) => contentText(m.content)).join("\n")
}

function memoryBlockOf(body: ChatRequest | undefined): string {
  return (body ? systemTexts(body) : []).find((text) => text.includes("MEMORY SUMMARY BEGINS")) ?? ""
}

function readIf(file: string, accept: (text: string) => boolean): string | undefined {
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
  return text !== undefined && accept(text) ? text : undefined
}

function phase2Status(sandbox: Sandbox): string | undefined {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return db.prepare("SELECT status FROM jobs WHERE kind = 'memory_consolidate_global'").get<{ status: string }>()?.status
  } finally {
    db.close()
  }
}

function count(sandbox: Sandbox, sql: string): number {
  const { db } = openDatabase(path.join(sandbox.memoryHome, "memory.db"))
  try {
    return Number(db.prepare(sql).get<{ n: number }>()?.n ?? 0)
  } finally {
    db.close()
  }
}
