// The session checkpoint and segment capture on a real OpenCode: a session reads and edits a file
// through tool calls and records a fact and a plan step with memory_checkpoint, then is
// summarized. The compaction request carries the view; the following turns carry the frozen view,
// byte for byte; a change of the file on disk turns the fact SUSPECT at the next compaction; and
// each compaction's segment is extracted at once (the session is minutes old, far from the idle
// gate), each segment's text exactly once.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END } from "../../src/checkpoint/view.js"
import { FakeLlm, lastUserText, systemTexts, userText, type LoggedRequest } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { createSandbox, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const views = (texts: readonly string[]) => texts.flatMap((text) => viewsIn(text))
function viewsIn(text: string): string[] {
  const out: string[] = []
  for (let at = text.indexOf(CHECKPOINT_VIEW_BEGIN); at >= 0; at = text.indexOf(CHECKPOINT_VIEW_BEGIN, at + 1)) {
    const end = text.indexOf(CHECKPOINT_VIEW_END, at)
    out.push(text.slice(at, end < 0 ? text.length : end + CHECKPOINT_VIEW_END.length))
  }
  return out
}

describe("checkpoints and segment capture on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle
  let api: ServerApi
  let sessionId: string
  let configFile: string
  const compactions: LoggedRequest[] = []
  const frozenTurns: LoggedRequest[] = []
  let segments: Array<{ session_id: string; raw_memory: string }> = []

  const summarize = async () => {
    const before = llm.requests().length
    await api.request("POST", `/session/${sessionId}/summarize`, { providerID: "fake", modelID: "fake-model" })
    const request = llm.requests().slice(before).find((r) => lastUserText(r.body).includes(CHECKPOINT_VIEW_BEGIN))
    if (!request) throw new Error(`no compaction request carried the checkpoint view; requests: ${llm.requests().slice(before).map((r) => lastUserText(r.body).slice(0, 80)).join(" | ")}`)
    compactions.push(request)
  }
  /** What happened, for a failed wait: the jobs, what the model was asked, and the plugin's log. */
  const evidence = () => {
    const logs = server.stderr().split("\n").filter((line) => /codex-memory|ERROR|rror/.test(line)).slice(-40).join("\n")
    const asked = llm.requests().map((r) => `${r.kind}: ${lastUserText(r.body).slice(0, 60)}`)
    return `jobs: ${JSON.stringify(query(sandbox, "SELECT kind, job_key, status, last_error FROM jobs"))}\nllm: ${JSON.stringify(asked)}\nplugin log:\n${logs}`
  }
  const records = () => query<{ session_id: string; raw_memory: string }>(sandbox, "SELECT session_id, raw_memory FROM stage1_outputs ORDER BY session_id")

  beforeAll(async () => {
    llm = await FakeLlm.start()
    // Global config, as the README says: the helper sessions run in the memory folder, another project.
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global" })
    configFile = path.join(sandbox.projectDir, "service.conf")
    fs.writeFileSync(configFile, "port = 8080\nworkers = 2\n")
    // The extractor writes back the marker words of what it was shown.
    llm.setStructuredHandler((request) => {
      const seen = [...new Set(userText(request).match(/SEGMENT-[A-Z]+-TEXT/g) ?? [])]
      return { rollout_summary: `Saw ${seen.join(", ")}.`, raw_memory: `---\ndescription: d\n---\n- ${seen.join(" ")}`, rollout_slug: "segment" }
    })
    server = await startServe(sandbox)
    api = new ServerApi(server.url, sandbox.projectDir)
    sessionId = (await api.createSession("tuning the service")).id

    llm.script(
      { match: "STEP-ONE", toolCalls: [{ name: "read", arguments: { filePath: configFile }, id: "call_read1" }] },
      { match: "STEP-ONE", toolCalls: [{ name: "edit", arguments: { filePath: configFile, oldString: "workers = 2", newString: "workers = 4" }, id: "call_edit1" }] },
      {
        match: "STEP-ONE",
        toolCalls: [
          {
            name: "memory_checkpoint",
            id: "call_cp1",
            arguments: {
              fact: { key: "service.workers", value: "service.conf runs 4 workers", evidence: { source: "tool", ref: "call_edit1" }, depends_on: ["service.conf"] },
              plan: [{ id: "restart", text: "Restart the service with the new worker count" }],
            },
          },
        ],
      },
      { match: "STEP-ONE", text: "Raised the workers to 4." },
    )
    await api.prompt(sessionId, "STEP-ONE: raise the workers in service.conf to 4. SEGMENT-ONE-TEXT")
    await summarize()
    await waitFor(() => records().some((r) => r.session_id === `${sessionId}#1`), { timeoutMs: 60_000, message: "the first segment was not extracted" }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${evidence()}`)
    })

    await api.prompt(sessionId, "STEP-TWO: what next? SEGMENT-TWO-TEXT")
    await api.prompt(sessionId, "STEP-THREE: and then?")
    frozenTurns.push(...llm.requests().filter((r) => r.kind === "agent" && /STEP-(TWO|THREE)/.test(lastUserText(r.body))))
    // Someone changes the file outside the session.
    fs.writeFileSync(configFile, "port = 8080\nworkers = 8\n")
    await summarize()
    await waitFor(() => records().some((r) => r.session_id === `${sessionId}#2`), { timeoutMs: 60_000, message: "the second segment was not extracted" }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${evidence()}`)
    })
    segments = records()
  }, 240_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("gives the compaction the checkpoint: task, plan, the files with the plugin's hashes, and the fact", () => {
    const [view] = views([lastUserText(compactions[0]!.body)])
    expect(view).toBeDefined()
    expect(view).toContain("[SESSION_CHECKPOINT v1]")
    expect(view).toContain("STEP-ONE: raise the workers")
    expect(view).toContain("- [ ] Restart the service with the new worker count (id=restart)")
    expect(view).toMatch(/- file: service\.conf \(edit, hash=sha256:[0-9a-f]{16}\)/)
    expect(view).toContain("[FACTS_VALID]\n- service.workers: service.conf runs 4 workers (evidence=tool:call_edit1 deps=1)")
  })

  it("carries the frozen view of that compaction on every later turn, byte for byte", () => {
    const [compacted] = views([lastUserText(compactions[0]!.body)])
    expect(frozenTurns.length).toBeGreaterThanOrEqual(2)
    for (const turn of frozenTurns) expect(views(systemTexts(turn.body))).toEqual([compacted])
  })

  it("turns the fact SUSPECT at the next compaction once the file changed on disk", () => {
    const [view] = views([lastUserText(compactions[1]!.body)])
    // The compaction request itself carries the new view only, not the frozen one in its system prompt.
    expect(views(systemTexts(compactions[1]!.body))).toEqual([])
    expect(view).toContain("[FACTS_SUSPECT]\n- service.workers: service.conf runs 4 workers (why=changed dep=service.conf)")
    expect(view).toContain("STEP-THREE")
  })

  it("extracts each compacted segment at once and each segment's text exactly once", () => {
    const extractions = llm.requests().filter((r) => r.kind === "structured")
    const showing = (marker: string) => extractions.filter((r) => userText(r.body).includes(marker)).length
    expect(showing("SEGMENT-ONE-TEXT")).toBe(1)
    expect(showing("SEGMENT-TWO-TEXT")).toBe(1)
    expect(segments.find((r) => r.session_id === `${sessionId}#1`)?.raw_memory).toContain("SEGMENT-ONE-TEXT")
    expect(segments.find((r) => r.session_id === `${sessionId}#2`)?.raw_memory).toContain("SEGMENT-TWO-TEXT")
    expect(segments.find((r) => r.session_id === `${sessionId}#2`)?.raw_memory).not.toContain("SEGMENT-ONE-TEXT")
    // No helper was ever shown the plugin's own view.
    for (const request of extractions) expect(userText(request.body)).not.toContain(CHECKPOINT_VIEW_BEGIN)
  })
})
