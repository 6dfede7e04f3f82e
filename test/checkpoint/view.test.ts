import { describe, expect, it } from "vitest"
import {
  emptyCheckpoint,
  observeArtifact,
  observeTodos,
  observeUserMessage,
  type Artifact,
  type CheckpointV1,
  type DecisionRecord,
  type FactRecord,
  type PlanStep,
} from "../../src/checkpoint/checkpoint.js"
import { recordedHashes } from "../../src/checkpoint/staleness.js"
import { CHECKPOINT_VIEW_BEGIN, CHECKPOINT_VIEW_END, renderView, VIEW_CAPS, wrapView, type ViewCaps } from "../../src/checkpoint/view.js"
import { expectGolden } from "../golden/golden.js"
import { applied, fullSession } from "./build.js"

const SMALL: ViewCaps = { maxOpenPlanSteps: 2, maxDonePlanSteps: 1, maxDecisions: 2, maxFactsValid: 2, maxFactsSuspect: 1, maxRecentArtifacts: 2, maxValueChars: 24 }
const WIDE: ViewCaps = { maxOpenPlanSteps: 32, maxDonePlanSteps: 32, maxDecisions: 32, maxFactsValid: 64, maxFactsSuspect: 64, maxRecentArtifacts: 16, maxValueChars: 160 }

/** Every view is one line per entry: no trailing whitespace, one final newline. */
function expectWellFormed(view: string): void {
  expect(view.endsWith("\n")).toBe(true)
  expect(view.endsWith("\n\n")).toBe(false)
  for (const line of view.slice(0, -1).split("\n")) expect(line, JSON.stringify(line)).not.toMatch(/\s$/)
}

const step = (id: string, text: string, done = false): PlanStep => ({ id, text, done, source: "model" })
const file = (uri: string, seq: number, hash?: string): Artifact => ({ uri, kind: "file", op: "read", callId: `c${seq}`, lastObservedSeq: seq, ...(hash ? { hash } : {}) })
const decision = (id: string, seq: number, extra: Partial<DecisionRecord> = {}): DecisionRecord => ({
  decisionId: id,
  decision: `decision ${id}`,
  rationale: `why ${id}`,
  evidence: { source: "user", ref: "m1" },
  seq,
  ...extra,
})
const fact = (key: string, value: string, dependsOn: FactRecord["dependsOn"] = []): FactRecord => ({
  key,
  value,
  evidence: dependsOn.length ? { source: "file", ref: dependsOn[0]!.uri } : { source: "user", ref: "m1" },
  dependsOn,
  lastTouchedSeq: 1,
})

/** More than SMALL shows in every section, with values longer than its 24 characters. */
function crowded(): CheckpointV1 {
  return {
    ...emptyCheckpoint("ses_caps"),
    seq: 40,
    task: { text: "Make the importer\nstream large files without\tloading them whole", evidence: { source: "user", ref: "m1" } },
    plan: [
      step("o1", "Open step one"),
      step("d1", "Done step one", true),
      step("o2", "An open step whose text is far longer than the cap"),
      step("d2", "Done step two", true),
      step("o3", "Open step three"),
      step("d3", "Done step three", true),
    ],
    decisions: [
      decision("x1", 1, { topic: "parser" }),
      decision("x2", 2, { supersedes: "x1", topic: "parser" }),
      decision("x3", 3),
      decision("x4", 4, { decision: "A decision long enough to be cut at the cap", rationale: "🙂".repeat(30) }),
    ],
    artifacts: [
      file("src/importer/stream-reader.ts", 30, "sha256:aaaaaaaaaaaa"),
      file("a.ts", 29),
      file("b.ts", 28, "sha256:bbbbbbbbbbbb"),
      { uri: "cmd:c31", kind: "command", op: "run", command: "node scripts/import.js --input fixtures/huge.csv", exitStatus: 0, callId: "c31", lastObservedSeq: 31 },
    ],
    recentArtifacts: ["cmd:c31", "src/importer/stream-reader.ts", "a.ts", "b.ts"],
    facts: {
      "v.c": fact("v.c", "valid three"),
      "v.a": fact("v.a", "valid one, with a value longer than the cap"),
      "v.b": fact("v.b", "valid two", [{ uri: "b.ts", hash: "sha256:bbbbbbbbbbbb" }]),
      "s.a": fact("s.a", "suspect one", [{ uri: "a.ts" }]),
      "s.b": fact("s.b", "suspect two", [{ uri: "src/importer/stream-reader.ts", hash: "sha256:old" }]),
    },
    userMessages: ["m1"],
  }
}

describe("renderView golden files", () => {
  it("renders a full checkpoint, every section filled", () => {
    const cp = fullSession()
    const view = renderView(cp, recordedHashes(cp))
    expectWellFormed(view)
    expectGolden("checkpoint.full.txt", view)
  })

  it("renders an empty checkpoint with every section present", () => {
    const view = renderView(emptyCheckpoint("ses_empty"), () => undefined)
    expectWellFormed(view)
    expectGolden("checkpoint.empty.txt", view)
  })

  it("cuts long values and says how many entries each cap hid", () => {
    const cp = crowded()
    const view = renderView(cp, recordedHashes(cp), SMALL)
    expectWellFormed(view)
    expectGolden("checkpoint.caps.txt", view)
  })

  it("shows what the checkpoint's own caps kept after eviction", () => {
    let cp = observeUserMessage(emptyCheckpoint("ses_evict"), { messageId: "m1", text: "Rename the config keys" })
    // 30 todo steps and 5 of the model's: the plan keeps the first 32 (todos first).
    cp = applied(cp, { plan: Array.from({ length: 5 }, (_, i) => ({ id: `m${i + 1}`, text: `model step ${i + 1}` })) })
    cp = observeTodos(cp, Array.from({ length: 30 }, (_, i) => ({ id: `t${String(i + 1).padStart(2, "0")}`, content: `todo ${i + 1}`, status: i < 3 ? "completed" : "pending" })))
    // 20 files: the 16 most recent stay listed, f07 moved to the front by a second observation.
    for (let i = 0; i < 20; i++) cp = observeArtifact(cp, { uri: `f${String(i).padStart(2, "0")}.ts`, kind: "file", op: "read", hash: `sha256:${String(i).padStart(12, "0")}`, callId: `c${i}` })
    cp = observeArtifact(cp, { uri: "f07.ts", kind: "file", op: "edit", hash: "sha256:0000000007ff", callId: "c-again" })
    // 65 facts, keys descending: the first stored (k64) is evicted, not the smallest key.
    for (let i = 64; i >= 0; i--) cp = applied(cp, { fact: { key: `k${String(i).padStart(2, "0")}`, value: `fact ${i}`, evidence: { source: "user", ref: "m1" }, depends_on: [] } })
    // 33 decisions: the oldest (y00) is evicted.
    for (let i = 0; i < 33; i++) {
      cp = applied(cp, { decision: { id: `y${String(i).padStart(2, "0")}`, decision: `decision ${i}`, rationale: "r", evidence: { source: "tool", ref: "c19" } } })
    }
    const view = renderView(cp, recordedHashes(cp), WIDE)
    expectWellFormed(view)
    expect(view).not.toContain("k64:")
    expect(view).not.toContain("id=y00")
    expectGolden("checkpoint.eviction.txt", view)
  })

  it("renders SUSPECT facts with the first failing dependency and why", () => {
    const cp: CheckpointV1 = {
      ...emptyCheckpoint("ses_suspect"),
      seq: 9,
      artifacts: [file("a.ts", 1, "h-a"), file("b.ts", 2, "h-b2"), file("c.ts", 3)],
      recentArtifacts: ["c.ts", "b.ts", "a.ts"],
      facts: {
        "ok.user": fact("ok.user", "said by the user"),
        "ok.file": fact("ok.file", "a.ts unchanged", [{ uri: "a.ts", hash: "h-a" }]),
        "bad.changed": fact("bad.changed", "b.ts changed since", [{ uri: "a.ts", hash: "h-a" }, { uri: "b.ts", hash: "h-b1" }, { uri: "c.ts" }]),
        "bad.unrecorded": fact("bad.unrecorded", "no hash when stored", [{ uri: "c.ts" }]),
        "bad.gone": fact("bad.gone", "file no longer known", [{ uri: "gone.ts", hash: "h-g" }]),
      },
    }
    const view = renderView(cp, recordedHashes(cp))
    expectWellFormed(view)
    expectGolden("checkpoint.suspect.txt", view)
  })
})

describe("renderView", () => {
  it("shows only the '(+N more)' line when a cap is 0, and '(none)' only when a section is empty", () => {
    const zero: ViewCaps = { maxOpenPlanSteps: 0, maxDonePlanSteps: 0, maxDecisions: 0, maxFactsValid: 0, maxFactsSuspect: 0, maxRecentArtifacts: 0, maxValueChars: 24 }
    const cp = crowded()
    expect(renderView(cp, recordedHashes(cp), zero)).toBe(
      [
        "[SESSION_CHECKPOINT v1]",
        "",
        "[TASK]",
        "- Make the importer strea… (evidence=user:m1)",
        "",
        "[PLAN]",
        "- (+6 more)",
        "",
        "[RECENT_ARTIFACTS]",
        "- (+4 more)",
        "",
        "[DECISIONS]",
        "- (+3 more)",
        "",
        "[FACTS_VALID]",
        "- (+3 more)",
        "",
        "[FACTS_SUSPECT]",
        "- (+2 more)",
        "",
      ].join("\n"),
    )
  })

  it("hides past the default caps too", () => {
    const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i))
    const uris = many(17, (i) => `f${i}.ts`)
    const cp: CheckpointV1 = {
      ...emptyCheckpoint("s"),
      plan: [...many(17, (i) => step(`o${i}`, "open")), ...many(5, (i) => step(`d${i}`, "done", true))],
      decisions: many(13, (i) => decision(`x${i}`, i)),
      artifacts: uris.map((uri, i) => file(uri, i, "h")),
      recentArtifacts: uris,
      facts: Object.fromEntries([
        ...many(33, (i) => [`v${i}`, fact(`v${i}`, "valid")] as const),
        ...many(17, (i) => [`s${i}`, fact(`s${i}`, "suspect", [{ uri: "f0.ts" }])] as const),
      ]),
    }
    const more = renderView(cp, recordedHashes(cp), VIEW_CAPS).split("\n").filter((line) => line.startsWith("- (+"))
    expect(more).toEqual(["- (+2 more)", "- (+1 more)", "- (+1 more)", "- (+1 more)", "- (+1 more)"])
  })

  it("is deterministic: the same bytes twice, and whatever order the keys were inserted in", () => {
    const cp = fullSession()
    const first = renderView(cp, recordedHashes(cp))
    expect(renderView(cp, recordedHashes(cp))).toBe(first)
    expect(renderView(JSON.parse(JSON.stringify(cp)) as CheckpointV1, recordedHashes(cp))).toBe(first)
    // Every object rebuilt with its keys in reverse order.
    const reversed = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversed)
      if (value === null || typeof value !== "object") return value
      return Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reversed(item)]))
    }
    const shuffled = reversed(cp) as CheckpointV1
    expect(Object.keys(shuffled.facts)).not.toEqual(Object.keys(cp.facts))
    expect(renderView(shuffled, recordedHashes(shuffled))).toBe(first)
    const crowd = crowded()
    const crowdShuffled = reversed(crowd) as CheckpointV1
    expect(renderView(crowdShuffled, recordedHashes(crowdShuffled), SMALL)).toBe(renderView(crowd, recordedHashes(crowd), SMALL))
  })

  it("does not change the checkpoint it renders", () => {
    const cp = crowded()
    const before = JSON.stringify(cp)
    renderView(cp, recordedHashes(cp), SMALL)
    expect(JSON.stringify(cp)).toBe(before)
  })
})

describe("wrapView", () => {
  it("puts the caller's preface and the view between fixed markers", () => {
    const view = renderView(emptyCheckpoint("s"), () => undefined)
    const wrapped = wrapView(view, "Continue from this checkpoint.")
    expect(wrapped).toBe(`${CHECKPOINT_VIEW_BEGIN}\nContinue from this checkpoint.\n\n${view}${CHECKPOINT_VIEW_END}`)
    expect(wrapped.startsWith("<session-checkpoint>\n")).toBe(true)
    expect(wrapped.endsWith("\n</session-checkpoint>")).toBe(true)
  })
})
