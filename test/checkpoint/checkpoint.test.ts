import { describe, expect, it } from "vitest"
import {
  artifactOf,
  CHECKPOINT_CAPS,
  emptyCheckpoint,
  observeArtifact,
  observeTodos,
  observeUserMessage,
  type Artifact,
  type CheckpointV1,
  type FactRecord,
} from "../../src/checkpoint/checkpoint.js"
import { applyUpdate } from "../../src/checkpoint/update.js"
import { applied, deepFreeze, observedSession } from "./build.js"

const file = (uri: string, callId: string, hash?: string): Omit<Artifact, "lastObservedSeq"> => ({ uri, kind: "file", op: "read", callId, ...(hash ? { hash } : {}) })

describe("emptyCheckpoint", () => {
  it("starts at seq 0 with nothing recorded", () => {
    expect(emptyCheckpoint("ses_1")).toEqual({
      schemaVersion: 1,
      sessionId: "ses_1",
      seq: 0,
      task: null,
      plan: [],
      decisions: [],
      artifacts: [],
      facts: {},
      recentArtifacts: [],
      userMessages: [],
    })
  })
})

describe("the host's reducers", () => {
  it("never change their input and add exactly one to seq", () => {
    const cp = deepFreeze(observedSession())
    const before = JSON.stringify(cp)
    const results = [
      observeUserMessage(cp, { messageId: "msg_u2", text: "and the logout test" }),
      observeTodos(cp, [{ content: "a", status: "pending" }]),
      observeArtifact(cp, file("src/new.ts", "call_9", "sha256:9")),
      observeArtifact(cp, file("src/auth.ts", "call_9")),
    ]
    for (const next of results) {
      expect(next).not.toBe(cp)
      expect(next.seq).toBe(cp.seq + 1)
    }
    expect(JSON.stringify(cp)).toBe(before)
  })

  it("points the task at the latest user message, cut to maxTaskChars on a code point", () => {
    const cp = observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "first" })
    expect(cp.task).toEqual({ text: "first", evidence: { source: "user", ref: "m1" } })
    // 1,998 letters then emoji: the 2,000th code point is an emoji, the 2,001st forces the cut.
    const long = `${"a".repeat(1998)}🙂🙂🙂`
    const next = observeUserMessage(cp, { messageId: "m2", text: long })
    expect(next.task!.text).toBe(`${"a".repeat(1998)}🙂…`)
    expect([...next.task!.text]).toHaveLength(CHECKPOINT_CAPS.maxTaskChars)
    expect(next.task!.evidence).toEqual({ source: "user", ref: "m2" })
    const exact = `${"b".repeat(1999)}🙂`
    expect(observeUserMessage(cp, { messageId: "m3", text: exact }).task!.text).toBe(exact)
  })

  it("keeps the task when a user message has no text, but still records the message", () => {
    const cp = observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "the task" })
    const next = observeUserMessage(cp, { messageId: "m2", text: " \n " })
    expect(next.task).toEqual(cp.task)
    expect(next.userMessages).toEqual(["m1", "m2"])
  })

  it("keeps the ids of the last maxUserMessages user messages, each once", () => {
    let cp = emptyCheckpoint("s")
    for (let i = 0; i < 300; i++) cp = observeUserMessage(cp, { messageId: `m${i}`, text: "x" })
    expect(cp.userMessages).toHaveLength(256)
    expect(cp.userMessages[0]).toBe("m44")
    expect(cp.userMessages.at(-1)).toBe("m299")
    cp = observeUserMessage(cp, { messageId: "m100", text: "again" })
    expect(cp.userMessages.filter((id) => id === "m100")).toHaveLength(1)
    expect(cp.userMessages.at(-1)).toBe("m100")
  })
})

describe("observeTodos", () => {
  it("replaces every todo step, keeps the model's steps after them, and marks completed and cancelled as done", () => {
    let cp = observeTodos(emptyCheckpoint("s"), [{ id: "a", content: "old", status: "pending" }])
    cp = applied(observeUserMessage(cp, { messageId: "m1", text: "task" }), { plan: [{ id: "mine", text: "my step" }] })
    cp = observeTodos(cp, [
      { id: "b", content: "write", status: "completed" },
      { content: "skip", status: "cancelled" },
      { content: "test", status: "in_progress" },
      { id: "c", content: "ship", status: "pending" },
    ])
    expect(cp.plan).toEqual([
      { id: "b", text: "write", done: true, source: "todo" },
      { id: "todo-2", text: "skip", done: true, source: "todo" },
      { id: "todo-3", text: "test", done: false, source: "todo" },
      { id: "c", text: "ship", done: false, source: "todo" },
      { id: "mine", text: "my step", done: false, source: "model" },
    ])
    expect(observeTodos(cp, []).plan).toEqual([{ id: "mine", text: "my step", done: false, source: "model" }])
  })

  it("keeps the first step of a repeated id, and a todo id takes over a model step's", () => {
    const cp = applied(observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "task" }), { plan: [{ id: "x", text: "model x" }] })
    const next = observeTodos(cp, [
      { id: "x", content: "todo x", status: "pending" },
      { id: "x", content: "todo x again", status: "pending" },
    ])
    expect(next.plan).toEqual([{ id: "x", text: "todo x", done: false, source: "todo" }])
  })

  it("caps the plan at maxPlanSteps, todo steps first", () => {
    const cp = applied(observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "task" }), { plan: [{ id: "mine", text: "my step" }] })
    const todos = Array.from({ length: 40 }, (_, i) => ({ content: `step ${i + 1}`, status: "pending" }))
    const next = observeTodos(cp, todos)
    expect(next.plan).toHaveLength(CHECKPOINT_CAPS.maxPlanSteps)
    expect(next.plan.at(-1)).toEqual({ id: "todo-32", text: "step 32", done: false, source: "todo" })
    const fewer = observeTodos(cp, todos.slice(0, 31))
    expect(fewer.plan.map((step) => step.id).slice(-2)).toEqual(["todo-31", "mine"])
  })

  it("redacts and cuts a todo's text", () => {
    const next = observeTodos(emptyCheckpoint("s"), [{ content: `push with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 ${"x".repeat(300)}`, status: "pending" }])
    expect(next.plan[0]!.text).not.toContain("ghp_a1B2")
    expect(next.plan[0]!.text).toMatch(/^push with \[REDACTED:[\w-]+\] x+…$/)
    expect([...next.plan[0]!.text]).toHaveLength(CHECKPOINT_CAPS.maxValueChars)
  })
})

describe("observeArtifact", () => {
  it("replaces the record with the newest observation: a read without a hash makes the hash unknown", () => {
    let cp = observeArtifact(emptyCheckpoint("s"), file("a.ts", "c1", "sha256:1"))
    expect(artifactOf(cp, "a.ts")).toEqual({ uri: "a.ts", kind: "file", op: "read", hash: "sha256:1", callId: "c1", lastObservedSeq: 1 })
    cp = observeArtifact(cp, { uri: "a.ts", kind: "file", op: "edit", hash: "sha256:2", callId: "c2" })
    expect(artifactOf(cp, "a.ts")).toEqual({ uri: "a.ts", kind: "file", op: "edit", hash: "sha256:2", callId: "c2", lastObservedSeq: 2 })
    cp = observeArtifact(cp, file("a.ts", "c3"))
    expect(artifactOf(cp, "a.ts")).toEqual({ uri: "a.ts", kind: "file", op: "read", callId: "c3", lastObservedSeq: 3 })
  })

  it("keeps a command's exit status and its command, redacted and cut to maxCommandChars", () => {
    const command = `curl -H "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345" https://example.com/${"p".repeat(400)}`
    const cp = observeArtifact(emptyCheckpoint("s"), { uri: "cmd:c1", kind: "command", op: "run", command, exitStatus: null, callId: "c1" })
    const stored = artifactOf(cp, "cmd:c1")!
    expect(stored.exitStatus).toBeNull()
    expect(stored.command).not.toContain("abcdefghijklmnop")
    expect([...stored.command!]).toHaveLength(CHECKPOINT_CAPS.maxCommandChars)
    expect(stored.command!.endsWith("…")).toBe(true)
  })

  it("keeps recentArtifacts unique, most recent first, within maxRecentArtifacts", () => {
    let cp = emptyCheckpoint("s")
    for (let i = 0; i < 20; i++) cp = observeArtifact(cp, file(`f${i}.ts`, `c${i}`))
    expect(cp.recentArtifacts).toEqual(Array.from({ length: 16 }, (_, i) => `f${19 - i}.ts`))
    cp = observeArtifact(cp, file("f10.ts", "again"))
    expect(cp.recentArtifacts.slice(0, 3)).toEqual(["f10.ts", "f19.ts", "f18.ts"])
    expect(cp.recentArtifacts).toHaveLength(16)
    expect(new Set(cp.recentArtifacts).size).toBe(16)
    cp = observeArtifact(cp, file("f0.ts", "old one"))
    expect(cp.recentArtifacts.slice(0, 2)).toEqual(["f0.ts", "f10.ts"])
    expect(cp.recentArtifacts).not.toContain("f4.ts")
  })

  it("evicts the least recently observed artifact past maxArtifacts, never one a fact depends on", () => {
    let cp = observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "task" })
    for (let i = 0; i < 256; i++) cp = observeArtifact(cp, file(`f${String(i).padStart(3, "0")}.ts`, `c${i}`, `sha256:${i}`))
    cp = applied(cp, { fact: { key: "k", value: "v", evidence: { source: "file", ref: "f000.ts" }, depends_on: ["f000.ts"] } })
    expect(cp.artifacts).toHaveLength(256)
    cp = observeArtifact(cp, file("new.ts", "c-new"))
    expect(cp.artifacts).toHaveLength(256)
    expect(artifactOf(cp, "f000.ts")).toBeDefined()
    expect(artifactOf(cp, "f001.ts")).toBeUndefined()
    expect(artifactOf(cp, "new.ts")).toBeDefined()
    cp = observeArtifact(cp, file("newer.ts", "c-newer"))
    expect(artifactOf(cp, "f002.ts")).toBeUndefined()
    expect(artifactOf(cp, "f000.ts")).toBeDefined()
  })

  it("breaks a tie in lastObservedSeq by uri", () => {
    const tied = (uri: string): Artifact => ({ uri, kind: "file", op: "read", callId: uri, lastObservedSeq: 1 })
    const uris = Array.from({ length: 256 }, (_, i) => `z${String(i).padStart(3, "0")}`).reverse()
    const base: CheckpointV1 = { ...emptyCheckpoint("s"), seq: 5, artifacts: [...uris, "a-first"].slice(1).map(tied) }
    const next = observeArtifact(base, file("late.ts", "c"))
    expect(artifactOf(next, "a-first")).toBeUndefined()
    expect(next.artifacts).toHaveLength(256)
  })

  it("treats a path named like an Object property as any other path", () => {
    const cp = observeArtifact(observeArtifact(emptyCheckpoint("s"), file("constructor", "c1", "h1")), file("__proto__", "c2", "h2"))
    expect(cp.artifacts.map((artifact) => artifact.uri)).toEqual(["constructor", "__proto__"])
    expect(artifactOf(cp, "constructor")?.hash).toBe("h1")
    expect(cp.recentArtifacts).toEqual(["__proto__", "constructor"])
  })
})

describe("eviction of facts and decisions", () => {
  const session = () => observeUserMessage(emptyCheckpoint("s"), { messageId: "m1", text: "task" })
  const fact = (key: string, value = "v") => ({ fact: { key, value, evidence: { source: "user", ref: "m1" }, depends_on: [] } })

  it("evicts the least recently touched fact past maxFacts; touching a fact keeps it", () => {
    let cp = session()
    // Keys in reverse order of insertion, so the oldest is not the smallest key.
    for (let i = 63; i >= 0; i--) cp = applied(cp, fact(`k${String(i).padStart(2, "0")}`))
    cp = applied(cp, fact("k63", "touched"))
    const result = applied(cp, fact("new"))
    expect(Object.keys(result.facts)).toHaveLength(CHECKPOINT_CAPS.maxFacts)
    expect(result.facts.k63!.value).toBe("touched")
    expect(result.facts.k62).toBeUndefined()
    expect(result.facts.new).toBeDefined()
  })

  it("breaks a tie in lastTouchedSeq by key", () => {
    const record = (key: string): FactRecord => ({ key, value: "v", evidence: { source: "user", ref: "m1" }, dependsOn: [], lastTouchedSeq: 1 })
    const keys = Array.from({ length: 64 }, (_, i) => `b${String(i).padStart(2, "0")}`).reverse()
    const cp = { ...session(), facts: Object.fromEntries(keys.map((key) => [key, record(key)])) }
    const result = applied(cp, fact("a-new"))
    expect(result.facts.b00).toBeUndefined()
    expect(result.facts.b01).toBeDefined()
    expect(result.facts["a-new"]).toBeDefined()
  })

  it("evicts the oldest decision past maxDecisions, and says so", () => {
    let cp = session()
    for (let i = 0; i < 32; i++) {
      cp = applied(cp, { decision: { id: `d${i}`, decision: `choice ${i}`, rationale: "r", evidence: { source: "user", ref: "m1" } } })
    }
    // Replacing d0 makes it the newest: d1 is now the oldest.
    cp = applied(cp, { decision: { id: "d0", decision: "choice 0, revised", rationale: "r", evidence: { source: "user", ref: "m1" } } })
    expect(cp.decisions).toHaveLength(32)
    const result = applyUpdate(cp, { decision: { id: "d32", decision: "choice 32", rationale: "r", evidence: { source: "user", ref: "m1" } } })
    if (!result.ok) expect.fail(result.reason)
    expect(result.checkpoint.decisions).toHaveLength(CHECKPOINT_CAPS.maxDecisions)
    expect(result.checkpoint.decisions.map((d) => d.decisionId)).not.toContain("d1")
    expect(result.checkpoint.decisions.map((d) => d.decisionId)).toContain("d0")
    expect(result.applied).toEqual(["decision d32 recorded", "decision d1 evicted (cap 32)"])
  })
})
