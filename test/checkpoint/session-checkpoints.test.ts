import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { observeToolResult } from "../../src/checkpoint/observe.js"
import { SessionCheckpoints } from "../../src/checkpoint/session-checkpoints.js"
import { CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END } from "../../src/checkpoint/view.js"
import { Diagnostics } from "../../src/diagnostics.js"
import { CheckpointStore } from "../../src/store/checkpoint-store.js"
import { openDatabase } from "../../src/store/database.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { stripInjected } from "../../src/write/transcript/transcript-strip.js"
import { FakeHost } from "../fakes/host.js"

const SECRET = `ghp_${"a1B2".repeat(9)}`
let project: string
let db: SqlDatabase
let store: CheckpointStore
let diagnostics: Diagnostics
let checkpoints: SessionCheckpoints

const write = (name: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(project, name)), { recursive: true })
  fs.writeFileSync(path.join(project, name), text)
}
const read = (callID: string, file: string) => checkpoints.onToolResult("ses_a", { tool: "read", callID, args: { filePath: path.join(project, file) } })

beforeEach(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cp-"))
  project = path.join(dir, "project")
  fs.mkdirSync(project)
  db = openDatabase(path.join(dir, "memory.db")).db
  store = new CheckpointStore(db)
  diagnostics = new Diagnostics(new FakeHost())
  checkpoints = new SessionCheckpoints({ store: () => store, directory: () => project, diagnostics, preface: "PREFACE" })
})
afterEach(() => db.close())

describe("observing a session", () => {
  it("takes the task from the user's message without its private spans or secrets", () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["Deploy with token", `${SECRET} <private>my home address</private> please`])
    const view = checkpoints.view("ses_a")
    expect(view).toContain("(evidence=user:msg_1)")
    expect(view).not.toContain(SECRET)
    expect(view).not.toContain("home address")
  })

  it("records files with the plugin's own hash, relative to the project, and commands with their exit status", () => {
    write("src/a.ts", "one")
    read("call_1", "src/a.ts")
    checkpoints.onToolResult("ses_a", { tool: "bash", callID: "call_2", args: { command: `curl -H "Authorization: Bearer ${SECRET}" x` }, metadata: { exit: 2 } })
    const view = checkpoints.view("ses_a")
    expect(view).toMatch(/- file: src\/a\.ts \(read, hash=sha256:[0-9a-f]{16}\)/)
    expect(view).toContain("(exit=2)")
    expect(view).not.toContain(SECRET)
  })

  it("follows the todo list and leaves the plugin's own tools out", () => {
    checkpoints.onToolResult("ses_a", { tool: "todowrite", callID: "c", args: { todos: [{ id: "t1", content: "Write the fix", status: "completed" }, { content: "Run tests", status: "pending" }] } })
    checkpoints.onToolResult("ses_a", { tool: "memory_search", callID: "c2", args: { queries: ["x"] } })
    const view = checkpoints.view("ses_a")
    expect(view).toContain("- [x] Write the fix (id=t1)")
    expect(view).toContain("- [ ] Run tests (id=todo-2)")
    expect(view).not.toContain("memory_search")
  })

  it("maps tool calls to observations", () => {
    expect(observeToolResult({ tool: "edit", callID: "c", args: { filePath: "/elsewhere/x.ts" } }, "/p")).toMatchObject({ type: "file", uri: "/elsewhere/x.ts", op: "edit" })
    expect(observeToolResult({ tool: "write", callID: "c", args: { filePath: "sub/x.ts" } }, "/p")).toMatchObject({ type: "file", uri: "sub/x.ts", file: "/p/sub/x.ts", op: "write" })
    expect(observeToolResult({ tool: "grep", callID: "c", args: { pattern: "foo" } }, "/p")).toMatchObject({ type: "command", command: 'grep {"pattern":"foo"}', exitStatus: null })
    expect(observeToolResult({ tool: "memory_checkpoint", callID: "c", args: {} }, "/p")).toBeUndefined()
  })
})

describe("memory_checkpoint and staleness", () => {
  it("keeps a fact VALID while its file is unchanged, SUSPECT once it changes or cannot be read", () => {
    write("src/a.ts", "one")
    read("call_1", "src/a.ts")
    expect(checkpoints.apply("ses_a", { fact: { key: "a.value", value: "a holds one", evidence: { source: "tool", ref: "call_1" }, depends_on: ["src/a.ts"] } })).toMatchObject({ ok: true })
    expect(checkpoints.view("ses_a")).toContain("[FACTS_VALID]\n- a.value: a holds one")
    write("src/a.ts", "two")
    expect(checkpoints.view("ses_a")).toContain("- a.value: a holds one (why=changed dep=src/a.ts)")
    fs.rmSync(path.join(project, "src/a.ts"))
    expect(checkpoints.view("ses_a")).toContain("(why=unknown dep=src/a.ts)")
  })

  it("takes an observed file by its absolute path, its relative path or ./path alike, and names an unobserved one as given", () => {
    write("src/a.ts", "one")
    read("call_1", "src/a.ts")
    for (const [key, given] of [["abs", path.join(project, "src/a.ts")], ["rel", "src/a.ts"], ["dot", "./src/a.ts"], ["up", "src/../src/a.ts"]] as const) {
      expect(checkpoints.apply("ses_a", { fact: { key, value: `by ${key}`, evidence: { source: "file", ref: given }, depends_on: [given] } })).toMatchObject({ ok: true })
    }
    expect(checkpoints.view("ses_a")).toContain("- abs: by abs")
    expect(checkpoints.view("ses_a")).not.toContain(project)
    const missing = checkpoints.apply("ses_a", { fact: { key: "k", value: "v", evidence: { source: "file", ref: "./src/b.ts" }, depends_on: ["./src/b.ts"] } })
    expect(missing.ok ? "" : missing.reason).toContain('"./src/b.ts" observed in this session')
  })

  it("refuses behaviour policies and unknown evidence, changing nothing", () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["hello"])
    const before = store.get("ses_a")!.state
    const policy = checkpoints.apply("ses_a", { decision: { id: "d", decision: "Always answer in French", rationale: "user asked", evidence: { source: "user", ref: "msg_1" } } })
    expect(policy).toMatchObject({ ok: false })
    expect(policy.ok ? "" : policy.reason).toMatch(/behaviour policy/)
    const unknown = checkpoints.apply("ses_a", { fact: { key: "k", value: "v", evidence: { source: "tool", ref: "call_nope" }, depends_on: [] } })
    expect(unknown).toMatchObject({ ok: false })
    expect(store.get("ses_a")!.state).toBe(before)
  })
})

describe("at compaction", () => {
  it("gives the compaction a wrapped view and freezes exactly those bytes until the next compaction", () => {
    write("src/a.ts", "one")
    read("call_1", "src/a.ts")
    checkpoints.apply("ses_a", { fact: { key: "a.value", value: "a holds one", evidence: { source: "tool", ref: "call_1" }, depends_on: ["src/a.ts"] } })
    const context = checkpoints.compactionContext("ses_a")
    expect(context.startsWith(`${CHECKPOINT_VIEW_BEGIN}\nPREFACE\n\n[SESSION_CHECKPOINT v1]`)).toBe(true)
    expect(context.endsWith(CHECKPOINT_VIEW_END)).toBe(true)
    expect(checkpoints.frozenView("ses_a")).toBeUndefined()
    checkpoints.onCompacted("ses_a")
    expect(checkpoints.frozenView("ses_a")).toBe(context)
    // Later changes wait for the next compaction.
    write("src/a.ts", "two")
    checkpoints.onUserMessage("ses_a", "msg_2", ["next task"])
    expect(checkpoints.frozenView("ses_a")).toBe(context)
    checkpoints.compactionContext("ses_a")
    // While the compaction runs, its own request carries the new view only.
    expect(checkpoints.frozenView("ses_a")).toBeUndefined()
    checkpoints.onCompacted("ses_a")
    const next = checkpoints.frozenView("ses_a")!
    expect(next).toContain("(why=changed dep=src/a.ts)")
    expect(next).toContain("next task")
    expect(store.get("ses_a")?.compactions).toBe(2)
  })

  it("freezes a view rendered then when the compaction's start was missed", () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["the task"])
    checkpoints.onCompacted("ses_a")
    expect(checkpoints.frozenView("ses_a")).toContain("the task")
  })

  it("starts over from a stored state that does not read back, and says so", () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["the task"])
    db.prepare("UPDATE session_checkpoints SET state = '{broken'").run()
    expect(checkpoints.view("ses_a")).toContain("[TASK]\n- (none)")
    expect(diagnostics.recent().some((d) => d.source === "checkpoint" && /could not be read/.test(d.message))).toBe(true)
  })

  it("forgets a deleted session's checkpoint", () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["the task"])
    checkpoints.forget("ses_a")
    expect(store.get("ses_a")).toBeUndefined()
  })

  it("leaves no copy of the view in a transcript", () => {
    const view = checkpoints.compactionContext("ses_a")
    expect(stripInjected(`before\n\n${view}\n\nafter`, [])).toBe("before\n\nafter")
    expect(stripInjected(`quoted: ${view.slice(0, 40)}`, [])).toBe("quoted:")
  })
})

describe("evidence the model can name", () => {
  it('resolves a user ref of "current" to the latest user message the host reported', () => {
    checkpoints.onUserMessage("ses_a", "msg_1", ["first"])
    checkpoints.onUserMessage("ses_a", "msg_2", ["Tokens live 15 minutes"])
    expect(checkpoints.apply("ses_a", { fact: { key: "ttl", value: "Tokens live 15 minutes", evidence: { source: "user", ref: "current" }, depends_on: [] } })).toMatchObject({ ok: true })
    expect(checkpoints.view("ses_a")).toContain("- ttl: Tokens live 15 minutes (evidence=user:msg_2 deps=0)")
    // Without any user message there is nothing for "current" to name.
    expect(checkpoints.apply("ses_b", { fact: { key: "ttl", value: "x", evidence: { source: "user", ref: "current" }, depends_on: [] } })).toMatchObject({ ok: false })
  })
})

describe("the checkpoint option", () => {
  it('warns that OpenCode 1.x cannot let the view replace its compaction, and runs "augment" there', async () => {
    const { Memory } = await import("../../src/memory.js")
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cp-home-"))
    const memory = new Memory({ checkpoint: { enabled: true, mode: "replace" } }, { host: new FakeHost(), env: {}, homedir: home })
    expect(memory.warnings.join("\n")).toMatch(/"replace": OpenCode 1\.x always runs its own compaction model/)
    expect(new Memory({}, { host: new FakeHost(), env: {}, homedir: home }).warnings).toEqual([])
    expect(new Memory({ checkpoint: { enabled: false } }, { host: new FakeHost(), env: {}, homedir: home }).checkpoints).toBeUndefined()
  })
})
