// The whole memory loop on a real OpenCode with a scripted model, in a throw-away home:
// session A states a fact; it becomes idle; phase 1 extracts it; phase 2 (the scripted
// consolidator of support/consolidator.ts, calling OpenCode's read and write tools) writes the
// version's files; a new session B is shown the fact; session A is deleted; a later consolidation
// forgets it. Runs for either memory version, with dual-write for both writers at once, and on
// either host line (OpenCode 1.18.33's serve, or 2.1.2's shared service). Used by the end-to-end
// tests, the demo and the benchmarks.
import fs from "node:fs"
import path from "node:path"
import type { MemoryVersion } from "../../../src/util/paths.js"
import { CONSOLIDATE, diffDrivenConsolidator } from "./consolidator.js"
import { FakeLlm, lastUserText, systemTexts, userText, type AgentHandler, type ChatRequest } from "./fake-llm.js"
import { phase2Status, query } from "./memory-db.js"
import { createSandbox, defaultPluginSpec, startServe, waitFor, type Sandbox, type ServeHandle } from "./opencode.js"
import { checkoutPlugin, createSandbox2, startServe2, type Sandbox2, type Serve2 } from "./opencode2.js"
import { ServerApi } from "./server-api.js"

const HOUR = 3_600_000
export const FACT = "The acme-api service is deployed with `make ship` from the repo root, never on Fridays."
const FACT_MARK = "make ship"
/** A sentence only each version's injected instructions carry (templates/read_path.md, templates/v2/read_path.md). */
export const V1_BLOCK = "You have a long-term memory built from earlier OpenCode sessions"
export const V2_BLOCK = "Below is a recap of this user's earlier OpenCode sessions"
/** The consolidator keeps this sentence as its one fact, wherever a line carries it. */
const FACT_PATTERN = new RegExp(FACT.replace(/[.*+?^${}()|[\]\\`]/g, "\\$&"))

export interface ClosedLoopOptions {
  log?: (line: string) => void
  /** Keep the sandbox folder afterwards (the demo shows where the files are). */
  keep?: boolean
  /** What session A says; it must contain FACT. */
  statement?: string
  /** Extra environment for every OpenCode process (e.g. a test switch). */
  env?: Record<string, string>
  /** The plugin's `version` option: what new sessions read, and (without dual-write) the one writer. */
  version?: MemoryVersion
  /** The plugin's `dual_write` option: both versions learn from the same sessions. */
  dualWrite?: boolean
  /** The host line: OpenCode 1.18.33 (default), or the released 2.1.2 run as its shared service. */
  host?: "opencode1" | "opencode2"
}

/** What the loop needs of a running host, on either line. */
interface LoopServer {
  createSession(title: string): Promise<string>
  prompt(sessionId: string, text: string): Promise<void>
  deleteSession(sessionId: string): Promise<void>
  stderr(): string
  stop(): Promise<void>
}

interface LoopHost {
  sandbox: Pick<Sandbox, "memoryHome" | "cleanup">
  start(offsetMs: number): Promise<LoopServer>
}

async function loopHost(options: ClosedLoopOptions, llm: FakeLlm, pluginOptions: Record<string, unknown>): Promise<LoopHost> {
  if (options.host === "opencode2") {
    const sandbox: Sandbox2 = await createSandbox2({ llmUrl: llm.url, plugins: [checkoutPlugin(pluginOptions)], ...(options.env ? { env: options.env } : {}) })
    return {
      sandbox,
      async start(offsetMs) {
        sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(offsetMs)
        const serve: Serve2 = await startServe2(sandbox, { service: true })
        return {
          createSession: () => serve.api.createSession(),
          prompt: (id, text) => serve.api.prompt(id, text),
          deleteSession: (id) => serve.api.deleteSession(id),
          stderr: serve.stderr,
          stop: serve.stop,
        }
      },
    }
  }
  const sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [[defaultPluginSpec(), pluginOptions]], ...(options.env ? { env: options.env } : {}) })
  return {
    sandbox,
    async start(offsetMs) {
      sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(offsetMs)
      const serve: ServeHandle = await startServe(sandbox)
      const api = new ServerApi(serve.url, sandbox.projectDir)
      return {
        createSession: async (title) => (await api.createSession(title)).id,
        prompt: async (id, text) => void (await api.prompt(id, text)),
        deleteSession: async (id) => void (await api.request("DELETE", `/session/${id}`)),
        stderr: serve.stderr,
        stop: serve.stop,
      }
    },
  }
}

/** One writing version's files during the loop. */
export interface VersionOutcome {
  memoryRoot: string
  /** memory_summary.md after the first consolidation. */
  learnedSummary: string
  /** MEMORY.md after the first consolidation (V1 only; V2 writes no handbook). */
  learnedHandbook: string | undefined
  /** memory_summary.md after session A was deleted and memory consolidated again. */
  forgottenSummary: string
  /** From the message that made A's extraction start to the fact being in this version's summary. */
  learnMs: number
  /**
   * From this version's phase-1 claim (its log line's time) to the fact being in its summary: the
   * plugin's part of learnMs, without OpenCode's own start-up of the first conversation turn.
   */
  fromClaimMs: number
  /** The files of rollout_summaries/ after the first consolidation. */
  rolloutFiles: string[]
}

export interface ClosedLoopResult {
  version: MemoryVersion
  memoryHome: string
  /** The selected version's folder. */
  memoryRoot: string
  sessionA: string
  /** Every version that wrote, the selected one first. */
  writers: Partial<Record<MemoryVersion, VersionOutcome>>
  /** The selected version's outcome (shorthands). */
  learnedSummary: string
  learnedHandbook: string | undefined
  forgottenSummary: string
  learnMs: number
  /** The memory block session B's model received. */
  injectedBlock: string
  /** Whether a session after the forgetting still saw the fact. */
  factAfterForgetting: boolean
  /** What a version that did not write left in the home: its folder, and its outputs (undefined: no database). */
  idle: Partial<Record<MemoryVersion, { folder: boolean; outputs: number | undefined }>>
  /** What the model received for session A's extraction and for the first consolidation's first turn (selected version). */
  helperRequests: { extraction: ChatRequest; consolidation: ChatRequest }
}

export async function runClosedLoop(options: ClosedLoopOptions = {}): Promise<ClosedLoopResult> {
  const log = options.log ?? (() => undefined)
  const version = options.version ?? "v1"
  const writers: MemoryVersion[] = options.dualWrite ? [version, version === "v1" ? "v2" : "v1"] : [version]
  const llm = await FakeLlm.start()
  const pluginOptions = { version, dual_write: options.dualWrite ?? false }
  const host = await loopHost(options, llm, pluginOptions)
  const sandbox = host.sandbox
  const statement = options.statement ?? `Please remember for later: ${FACT}`
  if (!statement.includes(FACT)) throw new Error("closed loop: the statement must contain FACT")
  const roots = Object.fromEntries(writers.map((v) => [v, memoryRootOf(sandbox, v)])) as Record<MemoryVersion, string>
  const consolidator = consolidatorFor(roots, options.host === "opencode2" ? "path" : "filePath")
  const summary = (v: MemoryVersion) => path.join(roots[v], "memory_summary.md")
  const script = () => {
    llm.setStructuredHandler(extractor)
    llm.setAgentHandler(consolidator)
  }
  let server: LoopServer | undefined
  try {
    script()

    // 1. Session A states a fact.
    server = await host.start(0)
    const sessionA = await server.createSession("deploy notes")
    await server.prompt(sessionA, statement)
    log(`session A (${sessionA}) stated: ${FACT}`)
    await server.stop()

    // 2. Hours later (the plugin's test clock), OpenCode starts again and the user opens a session.
    server = await host.start(7 * HOUR)
    const running = server
    const started = Date.now()
    const warmup = await server.createSession("morning")
    await server.prompt(warmup, "good morning")
    const learned = new Map<MemoryVersion, { summary: string; at: number; ms: number }>()
    // When each writer's phase-1 claim line appeared (2.x's stderr has no times of its own).
    const claimSeen = new Map<MemoryVersion, number>()
    await waitFor(
      () => {
        for (const v of writers) {
          if (!claimSeen.has(v) && claimLogged(running.stderr(), v, writers)) claimSeen.set(v, Date.now())
          const text = learned.has(v) ? undefined : readIf(summary(v), (t) => t.includes(FACT_MARK))
          if (text !== undefined) learned.set(v, { summary: text, at: Date.now(), ms: Date.now() - started })
        }
        return learned.size === writers.length
      },
      { timeoutMs: 90_000, intervalMs: 50, message: `the fact never reached memory_summary.md of ${writers.filter((v) => !learned.has(v)).join(", ")}` },
    )
    for (const v of writers) {
      await waitFor(() => phase2Status(sandbox, v) === "done", { timeoutMs: 30_000, message: `${v}: the first consolidation did not finish` })
      log(`${v}: phase 1 extracted session A and phase 2 wrote the summary in ${learned.get(v)!.ms} ms`)
    }
    const handbooks = new Map(writers.map((v) => [v, v === "v1" ? fs.readFileSync(path.join(roots[v], "MEMORY.md"), "utf8") : undefined]))
    const logged = claimTimes(server.stderr(), writers)
    const claims = new Map(writers.map((v) => [v, logged.get(v) ?? claimSeen.get(v)]))
    const rolloutFiles = new Map(writers.map((v) => [v, fs.readdirSync(path.join(roots[v], "rollout_summaries")).sort()]))
    const helperRequests = firstHelperRequests(llm, version, roots[version])

    // 3. A new session B is shown what was learned.
    llm.reset()
    script()
    const sessionB = await server.createSession("new task")
    await server.prompt(sessionB, "How do I deploy acme-api?")
    const injectedBlock = memoryBlockOf(llm.requests().find((r) => r.kind === "agent")?.body)
    log(`session B's system prompt carries the fact: ${injectedBlock.includes(FACT_MARK)}`)

    // 4. The user deletes session A; every version forgets it at its next consolidation.
    await server.deleteSession(sessionA)
    for (const v of writers) {
      await waitFor(() => outputsOf(sandbox, v, sessionA) === 0, { timeoutMs: 15_000, message: `${v}: session A's memory record was not deleted` })
    }
    await server.stop()
    server = await host.start(14 * HOUR)
    const later = await server.createSession("later")
    await server.prompt(later, "hello again")
    const forgotten = new Map<MemoryVersion, string>()
    for (const v of writers) {
      forgotten.set(v, await waitFor(() => readIf(summary(v), (t) => !t.includes(FACT_MARK)), { timeoutMs: 60_000, message: `${v}: the fact was never forgotten` }))
      await waitFor(() => phase2Status(sandbox, v) === "done", { timeoutMs: 30_000, message: `${v}: the second consolidation did not finish` })
    }
    llm.reset()
    script()
    const sessionD = await server.createSession("after forgetting")
    await server.prompt(sessionD, "How do I deploy acme-api?")
    const factAfterForgetting = JSON.stringify(llm.requests().filter((r) => r.kind === "agent").map((r) => systemTexts(r.body))).includes(FACT_MARK)
    log(`after deleting session A, a new session still sees the fact: ${factAfterForgetting}`)

    const outcomes: Partial<Record<MemoryVersion, VersionOutcome>> = {}
    for (const v of writers) {
      outcomes[v] = { memoryRoot: roots[v], learnedSummary: learned.get(v)!.summary, learnedHandbook: handbooks.get(v), forgottenSummary: forgotten.get(v)!, learnMs: learned.get(v)!.ms, fromClaimMs: learned.get(v)!.at - (claims.get(v) ?? Number.NaN), rolloutFiles: rolloutFiles.get(v)! }
    }
    const idle: ClosedLoopResult["idle"] = {}
    for (const v of (["v1", "v2"] as const).filter((v) => !writers.includes(v))) {
      idle[v] = { folder: fs.existsSync(memoryRootOf(sandbox, v)), outputs: fs.existsSync(dbOf(sandbox, v)) ? query<{ n: number }>(sandbox, "SELECT COUNT(*) AS n FROM stage1_outputs", v)[0]!.n : undefined }
    }
    const own = outcomes[version]!
    return {
      version,
      memoryHome: sandbox.memoryHome,
      memoryRoot: own.memoryRoot,
      sessionA,
      writers: outcomes,
      learnedSummary: own.learnedSummary,
      learnedHandbook: own.learnedHandbook,
      forgottenSummary: own.forgottenSummary,
      learnMs: own.learnMs,
      injectedBlock,
      factAfterForgetting,
      idle,
      helperRequests,
    }
  } finally {
    await server?.stop()
    await llm.close()
    if (!options.keep) await sandbox.cleanup()
  }
}

export function memoryRootOf(sandbox: Pick<Sandbox, "memoryHome">, version: MemoryVersion): string {
  return path.join(sandbox.memoryHome, version === "v1" ? "memories" : `memories_${version}`)
}

function dbOf(sandbox: Pick<Sandbox, "memoryHome">, version: MemoryVersion): string {
  return path.join(sandbox.memoryHome, version === "v1" ? "memory.db" : `memory_${version}.db`)
}

/** One diff-driven consolidator per writing version, each answering only for its own folder. */
export function consolidatorFor(roots: Partial<Record<MemoryVersion, string>>, pathKey: "filePath" | "path" = "filePath"): AgentHandler {
  const handlers = Object.entries(roots).map(([v, root]) => diffDrivenConsolidator(root, { layout: v as MemoryVersion, fact: FACT_PATTERN, pathKey }).handler)
  return (request) => {
    for (const handler of handlers) {
      const reply = handler(request)
      if (reply) return reply
    }
    return undefined
  }
}

/** Whether `log` holds a phase-1 claim line of `version` (with two writers the lines name their version). */
function claimLogged(log: string, version: MemoryVersion, writers: readonly MemoryVersion[]): boolean {
  return writers.length === 1 ? log.includes("phase1: claimed") : log.includes(`${version}/phase1: claimed`)
}

/** When each writer first logged a phase-1 claim (OpenCode 1.x's log times); with two writers the lines name their version. */
function claimTimes(log: string, writers: readonly MemoryVersion[]): Map<MemoryVersion, number> {
  const times = new Map<MemoryVersion, number>()
  for (const match of log.matchAll(/timestamp=(\S+) .*?message="codex-memory: (?:(v1|v2)\/)?phase1: claimed/g)) {
    const version = (match[2] as MemoryVersion | undefined) ?? (writers.length === 1 ? writers[0] : undefined)
    if (version && !times.has(version)) times.set(version, Date.parse(match[1]!))
  }
  return times
}


/**
 * The scripted extractor: the session that states the fact yields a record; others, nothing.
 * It answers in the shape the request's schema asks for: V1 with a raw memory, V2 without.
 */
export function extractor(request: ChatRequest): Record<string, unknown> {
  const v1 = extractionVersion(request) === "v1"
  const empty = v1 ? { rollout_summary: "", raw_memory: "", rollout_slug: "" } : { rollout_summary: "", rollout_slug: "" }
  if (!userText(request).includes(FACT_MARK)) return empty
  const rollout_summary = `The user explained how acme-api is deployed.\nContext: the acme-api repository.\n## Task 1: deployment notes\nOutcome: recorded. ${FACT}`
  if (!v1) return { rollout_summary, rollout_slug: "acme-api-deploys" }
  return {
    rollout_summary,
    raw_memory: `---\ndescription: how acme-api is deployed\ntask_outcome: success\ncwd: acme-api\nkeywords: deploy, make ship\n---\n### Task 1: deployment\nReusable knowledge:\n- ${FACT}`,
    rollout_slug: "acme-api-deploys",
  }
}

/** Which version's extraction a structured request is: V1's schema alone asks for a raw memory (a tool's, or in 2.x's one prompt). */
function extractionVersion(request: ChatRequest): MemoryVersion {
  return JSON.stringify(request.tools ?? []).includes('"raw_memory"') || userText(request).includes('"raw_memory"') ? "v1" : "v2"
}

/** Session A's extraction request and the first request of the selected version's first consolidation (before any tool result). */
function firstHelperRequests(llm: FakeLlm, version: MemoryVersion, root: string): { extraction: ChatRequest; consolidation: ChatRequest } {
  const requests = llm.requests()
  const inRoot = (body: ChatRequest) => systemTexts(body).some((text) => text.includes(`\`${root}\``))
  const extraction = requests.find((r) => r.kind === "structured" && userText(r.body).includes(FACT_MARK) && extractionVersion(r.body) === version)?.body
  const consolidation = requests.find((r) => r.kind === "agent" && lastUserText(r.body).includes(CONSOLIDATE) && inRoot(r.body))?.body
  if (!extraction || !consolidation) throw new Error("closed loop: the extraction or consolidation request was not logged")
  return { extraction, consolidation }
}

export function memoryBlockOf(body: ChatRequest | undefined): string {
  return (body ? systemTexts(body) : []).find((text) => text.includes("MEMORY SUMMARY BEGINS")) ?? ""
}

function readIf(file: string, accept: (text: string) => boolean): string | undefined {
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
  return text !== undefined && accept(text) ? text : undefined
}

function outputsOf(sandbox: Pick<Sandbox, "memoryHome">, version: MemoryVersion, sessionId: string): number {
  return query<{ n: number }>(sandbox, `SELECT COUNT(*) AS n FROM stage1_outputs WHERE session_id = '${sessionId}'`, version)[0]!.n
}
