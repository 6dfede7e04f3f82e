// The OpenCode 2 adapter on the OpenCode 2 fake: the read path, the tools, citations, extraction
// through generate.text, the consolidator's sandbox, discovery, and location instances.
import fs from "node:fs"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { V2_MIGRATIONS } from "../../src/store/migrations.js"
import { MEMORY_RPC, type MemoryStatus } from "../../src/v2/rpc.js"
import { denyHelpersAsSubagents } from "../../src/v2/agents.js"
import { transcriptBudget } from "../../src/write/phase1/extraction-job.js"
import { diffDrivenConsolidator } from "../e2e/support/consolidator.js"
import { contentText, type ChatRequest } from "../e2e/support/fake-llm.js"
import { HOUR, settle, v2Setup, type V2Setup } from "./support.js"

let setup: V2Setup
afterEach(async () => setup?.cleanup())

const SUMMARY = "v1\n## User profile\nPrefers tabs; deploys with make ship.\n"
const CITATION = "Done.\n\n<memory-citation>\n<citation_entries>\nmemory_summary.md:1-2|note=[deploy]\n</citation_entries>\n<session_ids>\nses_source01\n</session_ids>\n</memory-citation>"

function seedSummary(home: string, version: "v1" | "v2" = "v1", text = SUMMARY): void {
  const dir = path.join(home, version === "v1" ? "memories" : "memories_v2")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "memory_summary.md"), text)
}

function catalog<T>(home: string, sql: string): T[] {
  const { db } = openDatabase(path.join(home, "memory.db"))
  try {
    return db.prepare(sql).all<T>()
  } finally {
    db.close()
  }
}

async function started(s: V2Setup, options: Record<string, unknown> = {}, dir = s.projectDir): Promise<void> {
  await s.fake.setup(s.plugin(), dir, options)
  // Start-up (databases) runs right after setup.
  await settle(100)
}

const memoryBlocks = (system: readonly string[]) => system.filter((text) => text.includes("----- MEMORY SUMMARY BEGINS -----"))

describe("the read path on OpenCode 2", () => {
  it("appends one byte-identical block to every primary request, and none to title, compaction or generate requests", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    await started(setup)
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await setup.fake.prompt(id, "first")
    await setup.fake.prompt(id, "second")
    const primary = setup.fake.requests.filter((r) => r.kind === "primary")
    expect(primary).toHaveLength(2)
    const blocks = primary.map((r) => memoryBlocks(r.system))
    expect(blocks[0]).toHaveLength(1)
    expect(blocks[0]![0]).toContain("Prefers tabs")
    expect(blocks[1]).toEqual(blocks[0])
    await setup.fake.generateTitle(id)
    await setup.fake.compact(id)
    for (const request of setup.fake.requests.filter((r) => r.kind !== "primary")) expect(memoryBlocks(request.system)).toEqual([])
  })

  it("strips citation blocks kept in stored replies before every later request, and counts each reply once", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    await started(setup)
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    setup.fake.model.script({ text: CITATION })
    await setup.fake.prompt(id, "how do I deploy?")
    // OpenCode 2 keeps the markup in the stored reply, for its own UI.
    expect(JSON.stringify(setup.fake.session(id)!.messages)).toContain("<memory-citation>")
    await setup.fake.prompt(id, "thanks")
    await setup.fake.prompt(id, "and again")
    const later = setup.fake.requests.filter((r) => r.kind === "primary").slice(1)
    for (const request of later) {
      const history = JSON.stringify(request.request.messages!.filter((m) => m.role !== "system"))
      expect(history).not.toContain("memory-citation")
      expect(history).toContain("Done.")
    }
    expect(catalog<{ n: number }>(setup.home, "SELECT COUNT(*) AS n FROM citation_parts")).toEqual([{ n: 1 }])
    expect(catalog<{ path: string; usage_count: number }>(setup.home, "SELECT path, usage_count FROM cited_files")).toEqual([{ path: "memory_summary.md", usage_count: 1 }])
    // Title and compaction requests never reach `context`: their own hooks strip the markup too.
    setup.fake.model.script({ text: "Deploy notes" }, { text: "summary of the deploy talk" })
    await setup.fake.generateTitle(id)
    await setup.fake.compact(id)
    const auxiliary = setup.fake.requests.filter((r) => r.kind === "title" || r.kind === "compaction")
    expect(auxiliary.map((r) => r.kind)).toEqual(["title", "compaction"])
    for (const request of auxiliary) {
      const history = JSON.stringify(request.request.messages!.filter((m) => m.role !== "system"))
      expect(history).not.toContain("memory-citation")
      expect(history).toContain("Done.")
    }
  })
})

describe("the tools on OpenCode 2", () => {
  it("puts the memory and control tools on the native list with JSON-schema inputs, and runs them like V1", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    await started(setup)
    const native = setup.fake.nativeTools(setup.projectDir)
    for (const name of ["memory_read", "memory_search", "memory_list", "memory_add_note", "memory_inspect", "memory_mode", "memory_reset"]) expect(native).toContain(name)
    expect(native).not.toContain("execute")
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    setup.fake.model.script(
      { match: "find tabs", toolCalls: [{ name: "memory_search", arguments: { queries: ["tabs"] } }, { name: "memory_read", arguments: { path: "../outside.md" } }, { name: "memory_list", arguments: { max_results: "many" } }] },
      { match: "find tabs", text: "found" },
    )
    await setup.fake.prompt(id, "find tabs")
    const results = (setup.fake.requests.at(-1)!.request.messages ?? []).filter((m) => m.role === "tool").map((m) => contentText(m.content))
    expect(results[0]).toContain("Prefers tabs")
    expect(results[1]).toMatch(/^Error \(invalid_path\)/)
    expect(results[2]).toMatch(/^Error \(invalid_argument\)/)
  })

  it("offers only the control tools when use_memories is off", async () => {
    setup = v2Setup()
    await started(setup, { use_memories: false })
    const native = setup.fake.nativeTools(setup.projectDir)
    expect(native).toEqual(expect.arrayContaining(["memory_inspect", "memory_mode", "memory_reset"]))
    expect(native).not.toContain("memory_read")
  })

  it("makes every other agent ask before memory_reset, and refuses a reset the user did not approve", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    await started(setup)
    expect(setup.fake.agent(setup.projectDir, "build")?.permissions).toContainEqual({ action: "memory_reset", resource: "*", effect: "ask" })
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    setup.fake.model.script({ match: "erase", toolCalls: [{ name: "memory_reset", arguments: { confirm: true } }] }, { match: "erase", text: "ok" })
    await setup.fake.prompt(id, "erase everything")
    expect(fs.existsSync(path.join(setup.home, "memories", "memory_summary.md"))).toBe(true)
    setup.fake.onAsk = (action) => action === "memory_reset"
    setup.fake.model.script({ match: "erase", toolCalls: [{ name: "memory_reset", arguments: { confirm: true } }] }, { match: "erase", text: "ok" })
    await setup.fake.prompt(id, "erase everything now")
    expect(fs.existsSync(path.join(setup.home, "memories", "memory_summary.md"))).toBe(false)
  })
})

describe("the helpers on OpenCode 2's subagent tool", () => {
  it("are denied to every other agent as subagents, unless the user wrote a rule for one", () => {
    const own = { action: "subagent", resource: "memorize", effect: "allow" } as const
    expect(denyHelpersAsSubagents([own])).toEqual([own, { action: "subagent", resource: "memorize-extract", effect: "deny" }])
    expect(denyHelpersAsSubagents([]).map((rule) => rule.resource)).toEqual(["memorize", "memorize-extract"])
  })
})

/** A session that states `fact`, aged so that phase 1 finds it idle. */
async function pastSession(s: V2Setup, fact: string): Promise<string> {
  const id = await s.fake.createSession(s.projectDir, "deploy notes")
  await s.fake.prompt(id, `Please remember: ${fact}`)
  return id
}

const extractor = (fact: string) => (request: ChatRequest) => {
  const text = JSON.stringify(request.messages)
  if (!text.includes(fact)) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
  return { rollout_summary: `The user stated: ${fact}`, raw_memory: `- ${fact}`, rollout_slug: "deploys" }
}

describe("learning on OpenCode 2", () => {
  it("budgets extraction by the model's window from the model domain, and says so in memory_inspect", async () => {
    setup = v2Setup({ clockOffsetMs: 7 * HOUR, variant: { contextLimit: 16_000 } })
    const fact = "FACT-WINDOW: the window is small"
    setup.fake.model.setStructuredHandler(extractor(fact))
    await pastSession(setup, fact)
    await started(setup)
    await setup.fake.prompt(await setup.fake.createSession(setup.projectDir, "morning"), "good morning")
    await waitUntil(() => catalog<{ n: number }>(setup.home, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]!.n > 0, "nothing was extracted")
    const inspect = ((await setup.fake.callRpc(setup.projectDir, "opencode-codex-memory", "status")) as { text: string }).text
    expect(inspect).toMatch(/extraction: OpenCode's default model, a window of 16,000 tokens as OpenCode reports it; transcripts budgeted at [\d,]+ tokens \(last extraction/)
    expect(inspect).not.toContain("the default for a window not known")
  })

  it("budgets extraction by the window of the extract_model OpenCode knows by its config key, whatever name its provider is sent", async () => {
    // providers.fake.models["alias-16k"] = { modelID: "upstream-16k", limit: { context: 16000, output: 4096 } } (2.1.2 config).
    setup = v2Setup({ clockOffsetMs: 7 * HOUR, variant: { models: [{ id: "alias-16k", modelID: "upstream-16k", limit: { context: 16_000, output: 4_096 } }] } })
    const fact = "FACT-ALIAS: the model has another name upstream"
    setup.fake.model.setStructuredHandler(extractor(fact))
    await pastSession(setup, fact)
    await started(setup, { extract_model: "fake/alias-16k" })
    await setup.fake.prompt(await setup.fake.createSession(setup.projectDir, "morning"), "good morning")
    await waitUntil(() => catalog<{ n: number }>(setup.home, "SELECT COUNT(*) AS n FROM stage1_outputs")[0]!.n > 0, `nothing was extracted\n${setup.logs.join("\n")}`)
    const inspect = ((await setup.fake.callRpc(setup.projectDir, "opencode-codex-memory", "status")) as { text: string }).text
    expect(inspect).toContain(`extraction: fake/alias-16k, a window of 16,000 tokens as OpenCode reports it; transcripts budgeted at ${transcriptBudget(16_000).toLocaleString("en-US")} tokens (last extraction`)
  })

  it("extracts through generate.text with one prompt, and consolidates in a helper session confined to the memory root", async () => {
    setup = v2Setup({ clockOffsetMs: 7 * HOUR })
    await setup.fake.startService(setup.stateDir)
    const fact = "FACT-DEPLOY: acme ships with make ship"
    const outside = path.join(setup.root, "outside.txt")
    fs.writeFileSync(outside, "ORIGINAL")
    const root = path.join(setup.home, "memories")
    const consolidator = diffDrivenConsolidator(root, { pathKey: "path" })
    const probes: string[] = []
    setup.fake.model.setStructuredHandler(extractor(fact))
    setup.fake.model.setAgentHandler((request) => {
      // The consolidator first tries to leave its folder, then does its work.
      if (!probes.length && JSON.stringify(request.messages).includes("Consolidate the memory folder now")) {
        probes.push("sent")
        return {
          toolCalls: [
            { name: "write", arguments: { path: outside, content: "CHANGED" } },
            { name: "read", arguments: { path: path.join(setup.root, "outside.txt") } },
            { name: "glob", arguments: { pattern: "*", path: setup.root } },
            { name: "grep", arguments: { pattern: "ORIGINAL", path: "../.." } },
            { name: "glob", arguments: { pattern: "rollout_summaries/*" } },
            { name: "shell", arguments: { command: "cat /etc/passwd" } },
          ],
        }
      }
      return consolidator.handler(withoutProbes(request))
    })
    const source = await pastSession(setup, fact)
    await started(setup)
    const morning = await setup.fake.createSession(setup.projectDir, "morning")
    await setup.fake.prompt(morning, "good morning")
    await waitUntil(() => readIf(path.join(root, "memory_summary.md")).includes(fact), "the fact never reached the summary")

    // Extraction: one completion per session, no helper session, the transcript inside the prompt.
    const completions = setup.fake.model.requests().filter((r) => r.kind === "structured")
    const forSource = completions.filter((r) => contentText(r.body.messages![0]!.content).includes(fact))
    expect(forSource).toHaveLength(1)
    expect(contentText(forSource[0]!.body.messages![0]!.content)).toContain("----- END OF THE SESSION -----")
    const helpers = setup.fake.sessionIds().map((id) => setup.fake.session(id)).filter((s) => s?.info.title?.startsWith("[memory]"))
    expect(helpers).toEqual([])
    expect(catalog<{ session_id: string }>(setup.home, `SELECT session_id FROM stage1_outputs WHERE session_id = '${source}'`)).toHaveLength(1)

    // Consolidation: in the plugin's location, with rules naming the memory root, and refused outside it.
    const consolidation = setup.fake.requests.find((r) => r.agent === "memorize")!
    expect(consolidation.tools.sort()).toEqual(["edit", "glob", "grep", "read", "write"])
    expect(consolidation.system.join("\n")).toContain("# Memory consolidation")
    const probeResults = setup.fake.requests.filter((r) => r.agent === "memorize")[1]!.request.messages!.filter((m) => m.role === "tool").map((m) => contentText(m.content))
    expect(probeResults[0]).toMatch(/confined to the memory folder|permission denied/)
    expect(probeResults[1]).toMatch(/confined to the memory folder|permission denied/)
    expect(probeResults[2]).toMatch(/^Refused: searches are confined to the memory folder/)
    expect(probeResults[3]).toMatch(/^Refused: searches are confined to the memory folder/)
    expect(probeResults[4]).toContain(path.join(root, "rollout_summaries"))
    expect(probeResults[5]).toMatch(/permission denied|unknown tool/)
    expect(fs.readFileSync(outside, "utf8")).toBe("ORIGINAL")
  })

  it("on 2.0.16, without a service, learns only from the conversations this process observed, and says so", async () => {
    setup = v2Setup({ clockOffsetMs: 7 * HOUR, variant: { release: "2.0.16" } })
    const fact = "FACT-SEEN: the build uses bun"
    setup.fake.model.setStructuredHandler(extractor(fact))
    const unseen = await pastSession(setup, "FACT-UNSEEN: nobody saw this")
    await started(setup)
    const seen = await setup.fake.createSession(setup.projectDir, "seen")
    await setup.fake.prompt(seen, `Please remember: ${fact}`)
    // A later conversation's first message starts the pass (the current session is never a candidate).
    const later = await setup.fake.createSession(setup.projectDir, "later")
    await setup.fake.prompt(later, "hello")
    await waitUntil(() => catalog<{ session_id: string }>(setup.home, "SELECT session_id FROM stage1_outputs").length > 0, `the observed session was not extracted\n${setup.logs.join("\n")}\n${JSON.stringify(catalog(setup.home, "SELECT * FROM jobs"))}`)
    const extracted = catalog<{ session_id: string }>(setup.home, "SELECT session_id FROM stage1_outputs").map((row) => row.session_id)
    expect(extracted).toEqual([seen])
    expect(extracted).not.toContain(unseen)
    const status = (await setup.fake.callRpc(setup.projectDir, MEMORY_RPC.id, "status")) as MemoryStatus
    expect(status.sessions).toEqual({ source: "observed", detail: expect.stringContaining("the OpenCode service is unavailable (no OpenCode service is registered") })
    expect(status.text).toContain("## Host\nsessions: the OpenCode service is unavailable")
    expect(status.text).toContain("only conversations this process observed are learned from")
    // 2.0.16 has no model domain: no window, so the default budget, and inspect says which.
    expect(status.text).toContain(`extraction: OpenCode's default model, a window OpenCode does not report; transcripts budgeted at ${transcriptBudget(undefined).toLocaleString("en-US")} tokens, the default for a window not known (last extraction`)
  })
})

describe("location instances on OpenCode 2", () => {
  it("shares one memory across locations, re-points it to a survivor, and shuts it down with the last", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    const plugin = setup.plugin()
    const second = setup.project("second")
    await setup.fake.setup(plugin, setup.projectDir)
    await setup.fake.setup(plugin, second)
    await settle(100)
    await setup.fake.dispose(setup.projectDir)
    // The survivor still injects, and its tools still answer.
    const id = await setup.fake.createSession(second, "chat")
    setup.fake.model.script({ match: "list", toolCalls: [{ name: "memory_list", arguments: {} }] }, { match: "list", text: "ok" })
    await setup.fake.prompt(id, "list memory")
    const last = setup.fake.requests.filter((r) => r.sessionID === id)
    expect(memoryBlocks(last[0]!.system)).toHaveLength(1)
    expect(contentText(last.at(-1)!.request.messages!.find((m) => m.role === "tool")!.content)).toContain("memory_summary.md")
    await setup.fake.dispose(second)
    // The last dispose closed the databases: the file can be opened for an exclusive transaction.
    const { db } = openDatabase(path.join(setup.home, "memory.db"))
    db.exec("BEGIN EXCLUSIVE; COMMIT")
    db.close()
  })

  it("shuts memory down with the last location while it can still stop and delete a running consolidator", async () => {
    setup = v2Setup({ clockOffsetMs: 7 * HOUR })
    await setup.fake.startService(setup.stateDir)
    setup.fake.model.setStructuredHandler(extractor("FACT-SLOW: consolidation is slow"))
    // The consolidator's model takes a minute: the location is disposed while it waits.
    setup.fake.model.setAgentHandler((request) => (JSON.stringify(request.messages).includes("Consolidate the memory folder now") ? { text: "thinking", delayMs: 60_000 } : undefined))
    await pastSession(setup, "FACT-SLOW: consolidation is slow")
    await started(setup)
    await setup.fake.prompt(await setup.fake.createSession(setup.projectDir, "morning"), "good morning")
    // The consolidator's model is at work: its helper session exists and has sent its request.
    await waitUntil(() => setup.fake.requests.some((r) => r.agent === "memorize"), "no consolidation started")
    const helper = setup.fake.requests.find((r) => r.agent === "memorize")!.sessionID
    expect(setup.fake.session(helper)).toBeDefined()
    await setup.fake.dispose(setup.projectDir)
    expect(setup.fake.session(helper)).toBeUndefined()
    const job = catalog<{ status: string; lease_until: number | null }>(setup.home, "SELECT status, lease_until FROM jobs WHERE kind = 'memory_consolidate_global'")[0]
    expect(job?.status).not.toBe("running")
    expect(job?.lease_until).toBeNull()
  })

  it("keeps the panel's switches across later setups, persisted in the plugin's storage", async () => {
    setup = v2Setup()
    seedSummary(setup.home)
    await started(setup)
    const status = async (dir: string) => (await setup.fake.callRpc(dir, MEMORY_RPC.id, "status")) as MemoryStatus
    expect((await status(setup.projectDir)).switches).toEqual({ use_memories: true, generate_memories: true })
    await setup.fake.callRpc(setup.projectDir, MEMORY_RPC.id, "setSwitch", { name: "use_memories", value: false })
    const later = setup.project("later")
    await setup.fake.setup(setup.plugin(), later)
    await settle(100)
    expect((await status(setup.projectDir)).switches.use_memories).toBe(false)
    const id = await setup.fake.createSession(later, "chat")
    await setup.fake.prompt(id, "hello")
    expect(memoryBlocks(setup.fake.requests.at(-1)!.system)).toEqual([])
    // A new process (a fresh definition) reads them back from storage.
    await setup.fake.disposeAll()
    await setup.fake.setup(setup.plugin(), setup.projectDir)
    await settle(100)
    expect((await status(setup.projectDir)).switches.use_memories).toBe(false)
  })

  it("reports V2 readiness in the status", async () => {
    setup = v2Setup()
    seedSummary(setup.home, "v2", "v1\n## User Profile\nx\n## User preferences\n## General Tips\n## What's in Memory\n")
    await started(setup, { version: "v2" })
    const { db } = openDatabase(path.join(setup.home, "memory_v2.db"), { migrations: V2_MIGRATIONS })
    db.close()
    const status = (await setup.fake.callRpc(setup.projectDir, MEMORY_RPC.id, "status")) as MemoryStatus
    expect(status.versions.find((v) => v.version === "v2")).toMatchObject({ selected: true, writes: true, ready: false, readiness: "0 of 20 sessions in one consolidation" })
  })
})

describe("OpenCode 1.18's registration-only setup", () => {
  it("registers the helper agents, reloads the agent domain, and starts no memory", async () => {
    setup = v2Setup()
    const updated = new Map<string, { system?: string; permissions: unknown[]; mode?: string; hidden?: boolean }>()
    let reloads = 0
    const ctx = {
      options: {},
      agent: {
        transform: async (callback: (editor: never) => void) => {
          callback({ list: () => ["build"], update: (id: string, edit: (a: never) => void) => {
            const agent = updated.get(id) ?? { permissions: [] }
            edit(agent as never)
            updated.set(id, agent)
          } } as never)
          return { dispose: async () => undefined }
        },
        reload: async () => void reloads++,
      },
    }
    const cleanup = await setup.plugin().setup(ctx as never)
    expect(reloads).toBe(1)
    expect(updated.get("memorize")).toMatchObject({ mode: "subagent", hidden: true, system: expect.stringMatching(/^You are the memory consolidator/) })
    expect(updated.get("memorize")!.permissions[0]).toEqual({ action: "*", resource: "*", effect: "deny" })
    expect(updated.get("memorize-extract")!.permissions).toEqual([{ action: "*", resource: "*", effect: "deny" }])
    const build = updated.get("build")!.permissions as Array<{ action: string; resource: string; effect: string }>
    expect(build.slice(0, 3)).toEqual([
      { action: "memory_reset", resource: "*", effect: "ask" },
      { action: "subagent", resource: "memorize", effect: "deny" },
      { action: "subagent", resource: "memorize-extract", effect: "deny" },
    ])
    // And the memory folders are kept out of its reach.
    const root = path.join(setup.home, "memories")
    expect(build).toContainEqual({ action: "edit", resource: `${root}/*`, effect: "deny" })
    expect(build).toContainEqual({ action: "shell", resource: `*${root}*`, effect: "deny" })
    await cleanup?.()
    expect(fs.existsSync(path.join(setup.home, "memory.db"))).toBe(false)
    expect(setup.logs).toEqual([])
  })
})

/** The consolidator's conversation as if the probe turn had not happened (its state counts its own calls). */
function withoutProbes(request: ChatRequest): ChatRequest {
  const messages = request.messages ?? []
  const first = messages.findIndex((m) => m.role === "assistant" && (m.tool_calls ?? []).some((c) => c.function?.name === "shell"))
  if (first < 0) return request
  let end = first + 1
  while (messages[end]?.role === "tool") end++
  return { ...request, messages: [...messages.slice(0, first), ...messages.slice(end)] }
}

function readIf(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}

async function waitUntil(check: () => boolean, message: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(message)
    await settle(50)
  }
}

