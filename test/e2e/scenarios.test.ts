// One scenario suite, both host lines: the same story, written once against the host driver
// (support/host-driver.ts), runs on the real OpenCode 1.18.33 and on the real released OpenCode
// 2.1.2, as a plain `serve` and as the shared background service the TUI and CLI use.
//   A (clock +0):  the read path (one byte-identical block per turn), the memory tools, a
//                  citation stripped from what the model sees later and counted once; session A
//                  states a fact.
//   B (+7 h):      phase 1 extracts A, phase 2 consolidates it (after the consolidator's attempts
//                  to leave the memory folder are refused), a new session is shown the fact.
//   C (+14 h):     A was deleted: the next consolidation forgets the fact (ranked search, which
//                  found it first at B, no longer does).
//   D (+21 h):     a note starts a consolidation that the host stops midway (dispose).
//   E (+21 h):     the next start finishes that work: the note reaches memory.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { CONSOLIDATE, diffDrivenConsolidator } from "./support/consolidator.js"
import { contentText, type ChatRequest } from "./support/fake-llm.js"
import { opencode1, opencode2, type DriverFactory, type HostDriver, type SentRequest } from "./support/host-driver.js"
import { waitFor } from "./support/opencode.js"

const HOUR = 3_600_000
const SEED = "SEED-FACT: the user indents with tabs"
const FACT = "FACT-DEPLOY: acme ships with make ship on Tuesdays"
const NOTE = "FACT-NOTE: releases freeze in December"
const CITED = "Tabs it is.\n\n<memory-citation>\n<citation_entries>\nmemory_summary.md:1-3|note=[indentation]\n</citation_entries>\n<session_ids>\nses_seedsource01\n</session_ids>\n</memory-citation>"
const BLOCK = "----- MEMORY SUMMARY BEGINS -----"

function query<T>(home: string, sql: string): T[] {
  const { db } = openDatabase(path.join(home, "memory.db"))
  try {
    return db.prepare(sql).all<T>()
  } finally {
    db.close()
  }
}

const phase2 = (home: string) => query<{ status: string; finished_at: number | null }>(home, "SELECT status, finished_at FROM jobs WHERE kind = 'memory_consolidate_global'")[0]
const blocks = (sent: SentRequest) => sent.system.filter((text) => text.includes(BLOCK))
const history = (sent: SentRequest) => JSON.stringify((sent.request.messages ?? []).filter((m) => m.role !== "system"))
const toolResults = (request: ChatRequest) => (request.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content))

const hosts: Array<[string, DriverFactory]> = [
  ["OpenCode 1.18.33", opencode1],
  ["OpenCode 2.1.2", opencode2()],
  ["OpenCode 2.1.2 with its shared service", opencode2({ service: true })],
]

describe.each(hosts)("the memory scenario on %s", (_name, factory) => {
  let host: HostDriver
  let root: string
  const files = { outside: "", project: "" }
  const seen: {
    first?: SentRequest
    second?: SentRequest
    search?: string[]
    ranked?: string[]
    rankedAfterForgetting?: string[]
    afterCitation?: SentRequest
    citedParts?: number
    learned?: string
    extracted?: Array<{ session_id: string; raw_memory: string }>
    probeResults?: string[]
    shown?: SentRequest
    forgotten?: string
    stoppedMidway?: string
    noted?: string
    titles?: number
    titlesWithBlock?: number
  } = {}

  beforeAll(async () => {
    host = await factory()
    root = path.join(host.memoryHome, "memories")
    fs.mkdirSync(root, { recursive: true })
    fs.writeFileSync(path.join(root, "memory_summary.md"), `v1\n## User profile\n${SEED}\n`)
    files.outside = path.join(host.outsideDir, "secret.txt")
    files.project = path.join(host.projectDir, "src.txt")
    fs.writeFileSync(files.outside, "ORIGINAL")
    fs.writeFileSync(files.project, "PROJECT")

    // The scripted model: an extractor that remembers FACT, and a consolidator that first tries
    // to leave the memory folder, then does what the workspace diff says.
    const consolidator = diffDrivenConsolidator(root, { pathKey: host.pathKey })
    let probed = false
    let slowNext = false
    host.model.setStructuredHandler((request) => {
      if (!JSON.stringify(request.messages).includes(FACT)) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
      return { rollout_summary: `The user said how acme ships.\n${FACT}`, raw_memory: `- ${FACT}`, rollout_slug: "acme-ships" }
    })
    host.model.setAgentHandler((request) => {
      if (!JSON.stringify(request.messages).includes(CONSOLIDATE)) return undefined
      const calls = (request.messages ?? []).filter((m) => m.role === "assistant" && (m.tool_calls ?? []).length).length
      if (!probed && calls === 0) {
        probed = true
        return {
          toolCalls: [
            { name: "write", arguments: { [host.pathKey]: files.outside, content: "CHANGED" } },
            { name: "write", arguments: { [host.pathKey]: files.project, content: "CHANGED" } },
            { name: "read", arguments: { [host.pathKey]: files.outside } },
          ],
        }
      }
      const reply = consolidator.handler(withoutProbes(request, files.outside))
      if (reply && slowNext) {
        slowNext = false
        return { ...reply, delayMs: 60_000 }
      }
      return reply
    })

    /** A turn whose model asks memory_search in ranked mode; what the tool answered. */
    const rankedSearch = async (question: string): Promise<string[]> => {
      host.model.script(
        { match: "rank memory", toolCalls: [{ name: "memory_search", arguments: { queries: [question], match_mode: "ranked" } }] },
        { match: "rank memory", text: "ranked" },
      )
      const from = host.model.requests().length
      await host.turn(await host.createSession("ranked"), `rank memory: ${question}`)
      return host.model.requests().slice(from).flatMap((r) => toolResults(r.body))
    }

    // A: read path, tools, citations; session A states the fact.
    await host.start()
    const reader = await host.createSession("reader")
    seen.first = await host.turn(reader, "first question")
    seen.second = await host.turn(reader, "second question")
    host.model.script(
      { match: "search memory", toolCalls: [{ name: "memory_search", arguments: { queries: ["SEED-FACT"] } }] },
      { match: "search memory", text: "found it" },
    )
    const before = host.model.requests().length
    await host.turn(reader, "search memory for the seed")
    seen.search = host.model.requests().slice(before).flatMap((r) => toolResults(r.body))
    host.model.script({ match: "how do I indent", text: CITED })
    await host.turn(reader, "how do I indent?")
    seen.afterCitation = await host.turn(reader, "thanks, one more question")
    await host.turn(reader, "and another")
    seen.citedParts = query<{ n: number }>(host.memoryHome, "SELECT COUNT(*) AS n FROM citation_parts")[0]!.n
    const sessionA = await host.createSession("deploy notes")
    await host.turn(sessionA, `Please remember: ${FACT}`)
    await host.stop()

    // B: hours later, a new session's first message starts phase 1, then phase 2.
    await host.start({ clockOffsetMs: 7 * HOUR })
    const morning = await host.createSession("morning")
    await host.turn(morning, "good morning")
    await waitFor(() => readIf(path.join(root, "memory_summary.md")).includes(FACT) && phase2(host.memoryHome)?.status === "done", {
      timeoutMs: 90_000,
      message: `${host.name}: the fact never reached memory\n${host.log().slice(-3000)}`,
    })
    seen.learned = readIf(path.join(root, "MEMORY.md"))
    seen.extracted = query(host.memoryHome, `SELECT session_id, raw_memory FROM stage1_outputs WHERE session_id = '${sessionA}'`)
    const probeTurn = host.model.requests().find((r) => (r.body.messages ?? []).some((m) => (m.tool_calls ?? []).some((c) => (c.function?.arguments ?? "").includes(files.outside))))
    seen.probeResults = probeTurn ? toolResults(probeTurn.body) : undefined
    seen.shown = await host.turn(await host.createSession("new task"), "how does acme ship?")
    seen.ranked = await rankedSearch("how does acme ship a release")

    // C: A is deleted; the next consolidation forgets it.
    await host.deleteSession(sessionA)
    await waitFor(() => query(host.memoryHome, `SELECT 1 FROM stage1_outputs WHERE session_id = '${sessionA}'`).length === 0, { timeoutMs: 15_000, message: `${host.name}: A's record stayed` })
    await host.stop()
    await host.start({ clockOffsetMs: 14 * HOUR })
    await host.turn(await host.createSession("later"), "hello again")
    await waitFor(() => !readIf(path.join(root, "memory_summary.md")).includes(FACT) && phase2(host.memoryHome)?.status === "done", {
      timeoutMs: 90_000,
      message: `${host.name}: the fact was never forgotten\n${host.log().slice(-3000)}`,
    })
    seen.forgotten = readIf(path.join(root, "MEMORY.md"))
    seen.rankedAfterForgetting = await rankedSearch("how does acme ship a release")

    // D: a note wakes a consolidation; the host stops while the consolidator is still at work.
    await host.stop()
    await host.start({ clockOffsetMs: 21 * HOUR })
    slowNext = true
    host.model.script(
      { match: "keep a note", toolCalls: [{ name: "memory_add_note", arguments: { title: "Release freeze", note: NOTE } }] },
      { match: "keep a note", text: "Noted." },
    )
    await host.turn(await host.createSession("notes"), "Please keep a note about the release freeze.")
    await waitFor(() => phase2(host.memoryHome)?.status === "running" && !slowNext, { timeoutMs: 60_000, message: `${host.name}: the note started no consolidation` })
    await host.stop()
    seen.stoppedMidway = readIf(path.join(root, "MEMORY.md"))

    // E: the next start finishes what the stopped one left.
    await host.start({ clockOffsetMs: 21 * HOUR + 60_000 })
    await host.turn(await host.createSession("after restart"), "hello once more")
    await waitFor(() => readIf(path.join(root, "MEMORY.md")).includes(NOTE) && phase2(host.memoryHome)?.status === "done", {
      timeoutMs: 90_000,
      message: `${host.name}: the note never reached memory after the restart\n${host.log().slice(-3000)}`,
    })
    seen.noted = readIf(path.join(root, "MEMORY.md"))
    // Every title request of the story (1.18.33 asks for titles in the background).
    const titles = host.model.requests().filter((r) => r.kind === "title")
    seen.titles = titles.length
    seen.titlesWithBlock = titles.filter((r) => JSON.stringify(r.body.messages).includes(BLOCK)).length
  }, 420_000)

  afterAll(async () => {
    await host?.cleanup()
  })

  it("read path: one memory block per turn, the same bytes every turn, none in a title request", () => {
    expect(blocks(seen.first!)).toHaveLength(1)
    expect(blocks(seen.first!)[0]).toContain(SEED)
    expect(blocks(seen.second!)).toEqual(blocks(seen.first!))
    // OpenCode 2 asks for a title of each untitled session; 1.18.33's sessions here are titled (read-path.test.ts covers its title requests).
    if (host.pathKey === "path") expect(seen.titles).toBeGreaterThan(0)
    expect(seen.titlesWithBlock).toBe(0)
  })

  it("tools: the memory tools are offered natively and answer from the memory folder", () => {
    for (const tool of ["memory_read", "memory_search", "memory_list", "memory_add_note", "memory_inspect", "memory_mode", "memory_reset"]) expect(seen.first!.tools).toContain(tool)
    expect(seen.search!.join("\n")).toContain(SEED)
  })

  it("citations: the block never reaches a later request, and the reply is counted once", () => {
    expect(history(seen.afterCitation!)).toContain("Tabs it is.")
    expect(history(seen.afterCitation!)).not.toContain("memory-citation")
    expect(seen.citedParts).toBe(1)
  })

  it("phase 1 and phase 2: session A is extracted, consolidated, and shown to a new session", () => {
    expect(seen.extracted).toHaveLength(1)
    expect(seen.extracted![0]!.raw_memory).toContain(FACT)
    expect(seen.learned).toContain(FACT)
    expect(blocks(seen.shown!)[0]).toContain(FACT)
  })

  it("sandbox: the consolidator's writes and reads outside the memory folder are refused", () => {
    expect(seen.probeResults).toHaveLength(3)
    expect(fs.readFileSync(files.outside, "utf8")).toBe("ORIGINAL")
    expect(fs.readFileSync(files.project, "utf8")).toBe("PROJECT")
    expect(seen.probeResults!.join("\n")).not.toContain("ORIGINAL")
    // On OpenCode 2 the consolidator is told why (2.1.2 would hide a refusal returned as content).
    if (host.pathKey === "path") expect(seen.probeResults!.join("\n")).toContain("Refused: file tools are confined to the memory folder")
  })

  it("forgetting: a deleted session's fact leaves memory at the next consolidation", () => {
    expect(seen.forgotten).not.toContain(FACT)
  })

  it("ranked search: the learned fact comes first, best first, and is gone once forgotten", () => {
    const answer = seen.ranked!.join("\n")
    expect(answer).toMatch(/entr(y|ies), best first, for: acme ship release/)
    expect(answer.split("\n\n")[1]).toContain(FACT)
    expect(seen.rankedAfterForgetting!.join("\n")).not.toContain(FACT)
  })

  it("dispose: a consolidation the host stopped midway is finished by the next start", () => {
    expect(seen.stoppedMidway).not.toContain(NOTE)
    expect(seen.noted).toContain(NOTE)
  })
})

/** The consolidator's conversation without the probe turn, so its own state counts only its calls. */
function withoutProbes(request: ChatRequest, outside: string): ChatRequest {
  const messages = request.messages ?? []
  const probe = messages.findIndex((m) => m.role === "assistant" && (m.tool_calls ?? []).some((c) => (c.function?.arguments ?? "").includes(outside)))
  if (probe < 0) return request
  let end = probe + 1
  while (messages[end]?.role === "tool") end++
  return { ...request, messages: [...messages.slice(0, probe), ...messages.slice(end)] }
}

function readIf(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}
