// The session checkpoint and segment capture on the real OpenCode 2.1.2, run as its shared
// background service (where the TUI and the CLI put their sessions): a session reads and edits a
// file and records a fact and a plan step with memory_checkpoint, then is compacted
// (POST /api/session/:id/compact). The compaction hook gives the compaction model the view; later
// turns carry the frozen view byte for byte; a change of the file on disk turns the fact SUSPECT
// at the next compaction; each compaction's end (the session.compaction.ended event) has its
// segment extracted at once. With checkpoint.mode "replace" 2.1.2 still asks its compaction model
// (its hook reads back no result): the view is what that model builds on, and inspect says so.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END } from "../../src/checkpoint/view.js"
import { COMPACTION_TEMPLATE_HEADING, FakeLlm, lastUserText, systemTexts, userText, type LoggedRequest } from "./support/fake-llm.js"
import { query } from "./support/memory-db.js"
import { waitFor } from "./support/opencode.js"
import { checkoutPlugin, createSandbox2, startServe2, type Serve2, type Sandbox2 } from "./support/opencode2.js"

function views(texts: readonly string[]): string[] {
  const out: string[] = []
  for (const text of texts) {
    for (let at = text.indexOf(CHECKPOINT_VIEW_BEGIN); at >= 0; at = text.indexOf(CHECKPOINT_VIEW_BEGIN, at + 1)) {
      const end = text.indexOf(CHECKPOINT_VIEW_END, at)
      out.push(text.slice(at, end < 0 ? text.length : end + CHECKPOINT_VIEW_END.length))
    }
  }
  return out
}
const isCompaction = (request: LoggedRequest) => request.kind === "agent" && lastUserText(request.body).includes(COMPACTION_TEMPLATE_HEADING)

describe("checkpoints and segment capture on the real OpenCode 2.1.2", () => {
  let llm: FakeLlm
  let sandbox: Sandbox2
  let serve: Serve2
  let sessionId: string
  let configFile: string
  const compactions: LoggedRequest[] = []
  const frozenTurns: LoggedRequest[] = []
  let segments: Array<{ session_id: string; raw_memory: string }> = []
  let inspect = ""

  const records = () => query<{ session_id: string; raw_memory: string }>(sandbox, "SELECT session_id, raw_memory FROM stage1_outputs ORDER BY session_id")
  const evidence = () => `jobs: ${JSON.stringify(query(sandbox, "SELECT kind, job_key, status, last_error FROM jobs"))}\nplugin log:\n${serve.stderr().slice(-3000)}`
  const compact = async () => {
    const before = llm.requests().length
    const compaction = (await serve.api.request<{ data: { id: string } }>("POST", `/api/session/${sessionId}/compact`, {})).data.id
    await waitFor(async () => (await serve.api.messages(sessionId)).some((m) => m.id === compaction && m.status === "completed"), { timeoutMs: 60_000, message: "the compaction did not complete", state: evidence })
    const request = llm.requests().slice(before).find(isCompaction)
    if (!request) throw new Error("2.1.2 sent no compaction request")
    compactions.push(request)
  }

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox2({ llmUrl: llm.url, plugins: [checkoutPlugin({ checkpoint: { mode: "replace" } })] })
    configFile = path.join(sandbox.projectDir, "service.conf")
    fs.writeFileSync(configFile, "port = 8080\nworkers = 2\n")
    // The extractor writes back the marker words of what it was shown.
    llm.setStructuredHandler((request) => {
      const seen = [...new Set(userText(request).match(/SEGMENT-[A-Z]+-TEXT/g) ?? [])]
      return { rollout_summary: `Saw ${seen.join(", ")}.`, raw_memory: `---\ndescription: d\n---\n- ${seen.join(" ")}`, rollout_slug: "segment" }
    })
    serve = await startServe2(sandbox, { service: true })
    sessionId = await serve.api.createSession()
    llm.script(
      { match: "STEP-ONE", toolCalls: [{ name: "read", arguments: { path: configFile }, id: "call_read1" }] },
      { match: "STEP-ONE", toolCalls: [{ name: "edit", arguments: { path: configFile, oldString: "workers = 2", newString: "workers = 4" }, id: "call_edit1" }] },
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
    await serve.api.prompt(sessionId, "STEP-ONE: raise the workers in service.conf to 4. SEGMENT-ONE-TEXT")
    await compact()
    await waitFor(() => records().some((r) => r.session_id === `${sessionId}#1`), { timeoutMs: 60_000, message: "the first segment was not extracted", state: evidence })
    await serve.api.prompt(sessionId, "STEP-TWO: what next? SEGMENT-TWO-TEXT")
    await serve.api.prompt(sessionId, "STEP-THREE: and then?")
    frozenTurns.push(...llm.requests().filter((r) => r.kind === "agent" && /STEP-(TWO|THREE)/.test(lastUserText(r.body))))
    // Someone changes the file outside the session.
    fs.writeFileSync(configFile, "port = 8080\nworkers = 8\n")
    await compact()
    await waitFor(() => records().some((r) => r.session_id === `${sessionId}#2`), { timeoutMs: 60_000, message: "the second segment was not extracted", state: evidence })
    segments = records()
    llm.script({ match: "how is memory", toolCalls: [{ name: "memory_inspect", arguments: {} }] }, { match: "how is memory", text: "fine" })
    const before = llm.requests().length
    await serve.api.prompt(sessionId, "how is memory doing?")
    inspect = llm.requests().slice(before).flatMap((r) => (r.body.messages ?? []).filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content))).join("\n")
  }, 300_000)

  afterAll(async () => {
    await serve?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("gives the compaction model the checkpoint: task, plan, the files with the plugin's hashes, and the fact", () => {
    const [view] = views(systemTexts(compactions[0]!.body))
    expect(view).toBeDefined()
    expect(view).toContain("[SESSION_CHECKPOINT v1]")
    expect(view).toContain("STEP-ONE: raise the workers")
    expect(view).toContain("- [ ] Restart the service with the new worker count (id=restart)")
    expect(view).toMatch(/- file: service\.conf \(edit, hash=sha256:[0-9a-f]{16}\)/)
    expect(view).toContain("[FACTS_VALID]\n- service.workers: service.conf runs 4 workers (evidence=tool:call_edit1 deps=1)")
  })

  it("carries the frozen view of that compaction on every later turn, byte for byte", () => {
    const [compacted] = views(systemTexts(compactions[0]!.body))
    expect(frozenTurns.length).toBeGreaterThanOrEqual(2)
    for (const turn of frozenTurns) expect(views(systemTexts(turn.body))).toEqual([compacted])
  })

  it("turns the fact SUSPECT at the next compaction once the file changed on disk", () => {
    const texts = views(systemTexts(compactions[1]!.body))
    expect(texts.some((view) => view.includes("[FACTS_SUSPECT]\n- service.workers: service.conf runs 4 workers (why=changed dep=service.conf)") && view.includes("STEP-THREE"))).toBe(true)
  })

  it("extracts each compacted segment at once and each segment's text exactly once", () => {
    const extractions = llm.requests().filter((r) => r.kind === "structured")
    const showing = (marker: string) => extractions.filter((r) => userText(r.body).includes(marker)).length
    expect(showing("SEGMENT-ONE-TEXT")).toBe(1)
    expect(showing("SEGMENT-TWO-TEXT")).toBe(1)
    expect(segments.find((r) => r.session_id === `${sessionId}#1`)?.raw_memory).toContain("SEGMENT-ONE-TEXT")
    expect(segments.find((r) => r.session_id === `${sessionId}#2`)?.raw_memory).toContain("SEGMENT-TWO-TEXT")
    expect(segments.find((r) => r.session_id === `${sessionId}#2`)?.raw_memory).not.toContain("SEGMENT-ONE-TEXT")
    for (const request of extractions) expect(userText(request.body)).not.toContain(CHECKPOINT_VIEW_BEGIN)
  })

  it('runs checkpoint.mode "replace" as augment: the compaction model was asked each time, and inspect says why', () => {
    expect(compactions).toHaveLength(2)
    for (const request of compactions) expect(views(systemTexts(request.body)).length).toBeGreaterThan(0)
    expect(inspect).toContain('= \\"replace\\": OpenCode 2 (2.1.2 reads no result from its compaction hook) always runs its own compaction model')
  })
})
