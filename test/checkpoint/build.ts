// Shared builders for the checkpoint tests: a session the host has observed, and a frozen copy
// helper so any mutation of a reducer's input throws.
import { expect } from "vitest"
import { emptyCheckpoint, observeArtifact, observeTodos, observeUserMessage, type CheckpointV1 } from "../../src/checkpoint/checkpoint.js"
import { applyUpdate } from "../../src/checkpoint/update.js"

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}

/** Applies an update that must succeed. */
export function applied(cp: CheckpointV1, update: unknown): CheckpointV1 {
  const result = applyUpdate(cp, update)
  if (!result.ok) expect.fail(result.reason)
  return result.checkpoint
}

/** The reason an update that must fail gives. */
export function refused(cp: CheckpointV1, update: unknown): string {
  const result = applyUpdate(cp, update)
  if (result.ok) expect.fail(`expected a refusal, got ${result.applied.join(", ")}`)
  return result.reason
}

/** A session with a user message, two files (one hashed, one not) and a command. */
export function observedSession(): CheckpointV1 {
  let cp = emptyCheckpoint("ses_test")
  cp = observeUserMessage(cp, { messageId: "msg_u1", text: "Fix the flaky login test" })
  cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "read", hash: "sha256:1111aaaa2222", callId: "call_1" })
  cp = observeArtifact(cp, { uri: "test/auth.test.ts", kind: "file", op: "read", callId: "call_2" })
  cp = observeArtifact(cp, { uri: "cmd:call_3", kind: "command", op: "run", command: "npm test -- auth", exitStatus: 1, callId: "call_3" })
  return cp
}

/** The full session the view's golden file shows: every section filled, one fact of each status. */
export function fullSession(): CheckpointV1 {
  let cp = emptyCheckpoint("ses_full")
  cp = observeUserMessage(cp, { messageId: "msg_u1", text: "Fix the flaky login test in\nsrc/auth.ts;\tkeep the API" })
  cp = observeTodos(cp, [
    { id: "t1", content: "Reproduce the failure", status: "completed" },
    { id: "t2", content: "Fix the race in refresh()", status: "in_progress" },
    { content: "Run the whole suite", status: "pending" },
  ])
  cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "read", hash: "sha256:1111aaaa2222", callId: "call_1" })
  cp = observeArtifact(cp, { uri: "cmd:call_2", kind: "command", op: "run", command: "npm test -- auth", exitStatus: 1, callId: "call_2" })
  cp = observeArtifact(cp, { uri: "test/auth.test.ts", kind: "file", op: "read", callId: "call_3" })
  cp = applied(cp, {
    plan: [{ id: "m1", text: "Add a regression test for two timers" }],
    fact: { key: "auth.refresh", value: "refresh() is called from two timers", evidence: { source: "file", ref: "src/auth.ts" }, depends_on: ["src/auth.ts"] },
  })
  cp = applied(cp, {
    fact: { key: "test.runner", value: "vitest with fake timers", evidence: { source: "file", ref: "test/auth.test.ts" }, depends_on: ["test/auth.test.ts"] },
  })
  cp = applied(cp, {
    decision: { id: "d1", topic: "locking", decision: "Use a mutex around refresh()", rationale: "Two refreshes raced on the token", evidence: { source: "tool", ref: "call_2" } },
  })
  cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "edit", hash: "sha256:3333bbbb4444", callId: "call_4" })
  cp = observeArtifact(cp, { uri: "cmd:call_5", kind: "command", op: "run", command: "npx tsc --noEmit", callId: "call_5" })
  cp = applied(cp, {
    decision: {
      id: "d2",
      topic: "locking",
      decision: "Serialise refresh() through one shared promise",
      rationale: "Simpler than a mutex, and no new dependency",
      supersedes: "d1",
      evidence: { source: "file", ref: "src/auth.ts" },
    },
  })
  cp = applied(cp, {
    done: ["t2"],
    decision: { id: "d3", decision: "Keep the public API unchanged", rationale: "Callers outside this repository use it", evidence: { source: "user", ref: "msg_u1" } },
    fact: { key: "auth.lock", value: "refresh() now awaits one shared promise", evidence: { source: "tool", ref: "call_4" }, depends_on: ["src/auth.ts"] },
  })
  cp = applied(cp, { fact: { key: "auth.token-ttl", value: "Tokens live 15 minutes", evidence: { source: "user", ref: "msg_u1" }, depends_on: [] } })
  return cp
}
