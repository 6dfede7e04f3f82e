// Dual-write and version stamps on a real OpenCode. One set of sessions teaches both writers; new
// sessions read the selected version; a session that first used memory under `version: "v2"`
// keeps reading V2 after OpenCode restarts with `version: "v1"`.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkV2Summary } from "../../src/write/phase2/summary-v2.js"
import type { MemoryVersion } from "../../src/util/paths.js"
import { FACT, consolidatorFor, extractor, memoryBlockOf, memoryRootOf } from "./support/closed-loop.js"
import { FakeLlm } from "./support/fake-llm.js"
import { phase2Status, query } from "./support/memory-db.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const HOUR = 3_600_000
const V1_BLOCK = "You have a long-term memory built from earlier OpenCode sessions"
const V2_BLOCK = "Below is a recap of this user's earlier OpenCode sessions"

describe("dual-write and version stamps on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle | undefined
  const ids: { a?: string; stamped?: string; fresh?: string } = {}
  const seen: { summaries?: Record<MemoryVersion, string>; handbook?: string; freshBlock?: string; stampedBlock?: string; stampedBefore?: string } = {}

  const stampOf = (id: string | undefined) =>
    query<{ version: string }>(sandbox, `SELECT version FROM memory_session_versions WHERE session_id = '${id}'`)[0]?.version
  const summaryOf = (version: MemoryVersion) => {
    const file = path.join(memoryRootOf(sandbox, version), "memory_summary.md")
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  }
  const usePlugin = (version: MemoryVersion) =>
    editConfig(sandbox, (config) => {
      config.plugin = [[defaultPluginSpec(), { version, dual_write: true }]]
    })
  /** The memory block of the first conversation request of `sessionId`'s next turn. */
  async function turn(api: ServerApi, sessionId: string, text: string): Promise<string> {
    const before = llm.requests().length
    await api.prompt(sessionId, text)
    const request = llm.requests().slice(before).find((r) => r.kind === "agent" && JSON.stringify(r.body.messages).includes(text))
    return memoryBlockOf(request?.body)
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global" })
    llm.setStructuredHandler(extractor)
    llm.setAgentHandler(consolidatorFor({ v1: memoryRootOf(sandbox, "v1"), v2: memoryRootOf(sandbox, "v2") }))

    // Under version "v2": session A states a fact; another session uses memory once (stamped V2).
    usePlugin("v2")
    server = await startServe(sandbox)
    let api = new ServerApi(server.url, sandbox.projectDir)
    ids.a = (await api.createSession("deploy notes")).id
    await api.prompt(ids.a, `Please remember for later: ${FACT}`)
    ids.stamped = (await api.createSession("stamped under v2")).id
    await api.prompt(ids.stamped, "what do you remember?")
    seen.stampedBefore = stampOf(ids.stamped)
    await server.stop()

    // Hours later, OpenCode restarts with version "v1", still dual-writing; a turn wakes phase 1.
    usePlugin("v1")
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(7 * HOUR)
    server = await startServe(sandbox)
    api = new ServerApi(server.url, sandbox.projectDir)
    const morning = (await api.createSession("morning")).id
    await api.prompt(morning, "good morning")
    await waitFor(() => summaryOf("v1").includes("make ship") && summaryOf("v2").includes("make ship"), {
      timeoutMs: 90_000,
      message: `both writers did not learn the fact\n${server.stderr().split("\n").filter((l) => l.includes("codex-memory")).slice(-20).join("\n")}`,
    })
    for (const version of ["v1", "v2"] as const) await waitFor(() => phase2Status(sandbox, version) === "done", { timeoutMs: 30_000, message: `${version}: consolidation did not finish` })
    seen.summaries = { v1: summaryOf("v1"), v2: summaryOf("v2") }
    seen.handbook = fs.readFileSync(path.join(memoryRootOf(sandbox, "v1"), "MEMORY.md"), "utf8")

    // A new session reads V1; the session stamped earlier still reads V2.
    ids.fresh = (await api.createSession("new task")).id
    seen.freshBlock = await turn(api, ids.fresh, "How do I deploy acme-api?")
    seen.stampedBlock = await turn(api, ids.stamped, "And how do I deploy acme-api?")
  }, 300_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("one set of sessions produces both workspaces", () => {
    expect(seen.summaries?.v1.split("\n")[0]).toBe("v1")
    expect(seen.summaries?.v1).toContain(FACT)
    expect(seen.handbook).toContain(FACT)
    expect(checkV2Summary(seen.summaries!.v2)).toEqual({ valid: true })
    expect(seen.summaries?.v2).toContain(FACT)
    expect(fs.existsSync(path.join(memoryRootOf(sandbox, "v2"), "MEMORY.md"))).toBe(false)
    // Session A was extracted once by each writer, each into its own database.
    const outputs = (version: MemoryVersion) => query<{ session_id: string; raw_memory: string }>(sandbox, `SELECT session_id, raw_memory FROM stage1_outputs WHERE session_id = '${ids.a}'`, version)
    expect(outputs("v1")).toHaveLength(1)
    expect(outputs("v1")[0]?.raw_memory).toContain(FACT)
    expect(outputs("v2")).toHaveLength(1)
    expect(outputs("v2")[0]?.raw_memory).toBe("")
  })

  it("a new session reads V1, the selected version", () => {
    expect(seen.freshBlock).toContain(V1_BLOCK)
    expect(seen.freshBlock).toContain(FACT)
    expect(seen.freshBlock).not.toContain(V2_BLOCK)
  })

  it('a session stamped V2 earlier keeps reading V2 after a restart with version "v1"', () => {
    // Its first turn, before anything was learned (so with no block to show), stamped it.
    expect(seen.stampedBefore).toBe("v2")
    expect(seen.stampedBlock).toContain(V2_BLOCK)
    expect(seen.stampedBlock).toContain(FACT)
    expect(seen.stampedBlock).not.toContain(V1_BLOCK)
    expect(stampOf(ids.stamped)).toBe("v2")
    expect(stampOf(ids.fresh)).toBe("v1")
  })
})
