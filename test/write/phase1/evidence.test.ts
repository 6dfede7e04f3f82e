import { describe, expect, it } from "vitest"
import { EVIDENCE_LIMITS, omittedMarker, selectEvidence, type EvidenceOptions } from "../../../src/write/phase1/evidence.js"
import { privateFilter } from "../../../src/write/transcript/transcript-private.js"
import type { TranscriptMessage, TranscriptPart } from "../../../src/write/transcript/transcript.js"
import { expectGolden } from "../../golden/golden.js"
import { estimateTokens } from "../../../src/util/token-estimate.js"

// ---- Builders: the shapes OpenCode's `GET /session/{id}/message` returns, trimmed to what matters. ----

const user = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "user" }, parts })
const assistant = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "assistant" }, parts })
const text = (value: string, extra: Record<string, unknown> = {}): TranscriptPart => ({ type: "text", text: value, ...extra })
const tool = (name: string, input: unknown, output: string): TranscriptPart => ({
  type: "tool",
  tool: name,
  callID: "call_1",
  state: { status: "completed", input, output, title: name, metadata: {}, time: { start: 1, end: 2 } },
})

const QUOTED_BLOCK = [
  "## Memory",
  "",
  "You have a long-term memory built from earlier OpenCode sessions of this user.",
  "",
  "----- MEMORY SUMMARY BEGINS -----",
  "v1",
  "- acme-api: REMEMBERED-FACT",
  "----- MEMORY SUMMARY ENDS -----",
].join("\n")

const BIG = 1_000_000
const select = (messages: readonly TranscriptMessage[], options: Partial<EvidenceOptions> = {}) => selectEvidence(messages, { budgetTokens: BIG, ...options })
const whole = (messages: readonly TranscriptMessage[], options: Partial<EvidenceOptions> = {}) => select(messages, options).chunks.join("")
const bytes = (value: string) => Buffer.byteLength(value, "utf8")

function realisticSession(): TranscriptMessage[] {
  return [
    user(
      text("The CI job for acme-api fails on `npm test`, but it passes on my machine. Can you find out why?"),
      { type: "file", mime: "image/png", filename: "ci-failure.png", url: "data:image/png;base64,iVBORw0KGgo=" },
      text('Called the Read tool with the following input: {"filePath":"ci-log.txt"}\nFAIL test/dates.test.ts', { synthetic: true }),
    ),
    assistant(
      { type: "step-start" },
      { type: "reasoning", text: "thinking about it" },
      text("Let me look at the workflow and run the tests."),
      tool("read", { filePath: "/repo/.github/workflows/ci.yml" }, "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest"),
      {
        type: "tool",
        tool: "bash",
        state: { status: "error", input: { command: "npm test" }, error: "FAIL test/dates.test.ts\nExpected: \"2024-03-01\"\nReceived: \"2024-02-29\"", time: { start: 1, end: 2 } },
      },
      tool("task", { description: "Find time zone use", subagent_type: "explore" }, "Only test/dates.test.ts builds dates from the local zone."),
      text("The test builds a date from the local time zone, and CI runs in UTC. I pinned `TZ=UTC` in the test setup."),
    ),
    user(text("Thanks. Please always run the tests with `TZ=UTC` here."), { type: "agent", name: "explore" }),
    assistant(
      tool("question", { questions: [{ question: "Add it to package.json too?" }] }, 'User answered: "Add it to package.json too?"="yes"'),
      text("Added `TZ=UTC` to the test script."),
    ),
    { info: { role: "assistant", error: { name: "MessageAbortedError", data: { message: "The operation was aborted." } } }, parts: [text("Checking the lockfile")] },
  ]
}

describe("selectEvidence: rows and tiers", () => {
  it("renders a realistic session byte for byte", () => {
    const evidence = select(realisticSession())
    expectGolden("evidence.session.txt", evidence.chunks.join(""))
    // The image joins the user's row (13 rows, not 14).
    expect(evidence).toMatchObject({ kept: 13, omitted: 0, redactions: {} })
    expect(evidence.bytes).toBe(bytes(evidence.chunks.join("")))
  })

  it("labels each tier in words, in chronological order", () => {
    const out = whole([
      user(text("please fix it"), text("added by OpenCode", { synthetic: true }), { type: "subtask", agent: "general", description: "look around" }),
      assistant(text("looking"), tool("bash", { command: "ls" }, "a.txt"), tool("task", { description: "explore" }, "found a.txt"), text("fixed")),
    ])
    expect(out).toBe(
      [
        "[human user]\nplease fix it\n",
        "[context]\nadded by OpenCode\n",
        "[other agent]\n[subtask general] look around\n",
        "[assistant commentary]\nlooking\n",
        '[tool bash] {"command":"ls"}\na.txt\n',
        '[other agent]\n[tool task] {"description":"explore"}\nfound a.txt\n',
        "[assistant final]\nfixed\n",
      ].join("\n"),
    )
  })

  it("calls final the assistant's last text before the user speaks again, and at the end", () => {
    const out = whole([
      user(text("one")),
      assistant(text("a1")),
      assistant(text("a2"), tool("bash", { command: "x" }, "y")),
      user(text("added", { synthetic: true })),
      assistant(text("a3")),
      user(text("two")),
      assistant(text("b1"), tool("bash", { command: "z" }, "w")),
    ])
    expect(out.match(/^\[assistant (?:final|commentary)\]\n.*$/gm)).toEqual([
      "[assistant commentary]\na1",
      "[assistant commentary]\na2",
      "[assistant final]\na3",
      "[assistant final]\nb1",
    ])
  })

  it("keeps consecutive texts of one tier in one row, and ignored text out", () => {
    const out = whole([user(text("a"), text("b"), text("hidden", { ignored: true }), text("c", { synthetic: true }))])
    expect(out).toBe("[human user]\na\n\nb\n\n[context]\nc\n")
  })

  it("shows files as a placeholder line and never their content", () => {
    const out = whole([user(text("see"), { type: "file", mime: "text/plain", filename: "notes.txt", url: "data:text/plain;base64,SECRETBYTES" })])
    expect(out).toContain("[context]\n[file] notes.txt (text/plain)\n")
    expect(out).not.toContain("SECRETBYTES")
  })

  it("keeps an image or audio file inside the user's row as a placeholder, never its bytes", () => {
    const out = whole([user(text("see"), { type: "file", mime: "image/png", filename: "shot.png", url: "data:image/png;base64,SECRETPIXELS" })])
    expect(out).toBe("[human user]\nsee\n\n[image omitted]\n")
  })

  it("demotes a compaction summary to context", () => {
    const out = whole([user(text("go on")), { info: { role: "assistant", summary: true } as never, parts: [text("So far: fixed CI")] }])
    expect(out).toBe("[human user]\ngo on\n\n[context]\nSo far: fixed CI\n")
  })

  it("returns nothing for no messages, and drops roles it does not know", () => {
    expect(select([])).toEqual({ chunks: [], bytes: 0, tokens: 0, kept: 0, omitted: 0, redactions: {} })
    expect(select([{ info: { role: "system" }, parts: [text("x")] }]).chunks).toEqual([])
  })

  it("is a pure function of its input", () => {
    expect(select(realisticSession(), { budgetTokens: 175 })).toEqual(select(realisticSession(), { budgetTokens: 175 }))
  })
})

describe("selectEvidence: caps", () => {
  it("cuts a tool's result to 2,000 estimated tokens, in the middle, keeping the call", () => {
    const output = `HEAD-LINE\n${"x".repeat(50_000)}\nTAIL-LINE`
    const out = whole([user(text("run it")), assistant(tool("bash", { command: "make" }, output))])
    const row = out.slice(out.indexOf("[tool bash]"))
    const result = row.slice(row.indexOf("\n") + 1)
    expect(estimateTokens(result)).toBeLessThanOrEqual(EVIDENCE_LIMITS.TOOL_OUTPUT_TOKENS + estimateTokens("\n"))
    expect(estimateTokens(result)).toBeGreaterThan(EVIDENCE_LIMITS.TOOL_OUTPUT_TOKENS * 0.9)
    expect(result).toMatch(/^HEAD-LINE\n/)
    expect(result).toMatch(/TAIL-LINE\n$/)
    expect(result).toMatch(/\[\.\.\. \d+ tokens truncated \.\.\.\]/)
  })

  it("caps any row at 10,000 bytes, label included, without splitting a character", () => {
    const long = "é€😀".repeat(20_000)
    for (const messages of [[user(text(long))], [assistant(tool("task", { description: "d" }, long))]]) {
      const out = whole(messages)
      expect(bytes(out)).toBeLessThanOrEqual(EVIDENCE_LIMITS.MAX_ROW_BYTES)
      expect(bytes(out)).toBeGreaterThan(EVIDENCE_LIMITS.MAX_ROW_BYTES - 200)
      expect(out).not.toContain("\uFFFD")
      expect(out.startsWith("[human user]\n") || out.startsWith("[other agent]\n")).toBe(true)
    }
  })
})

describe("selectEvidence: budget", () => {
  // One human row, one final, one commentary, and tool rows, each about 1 KB.
  const filler = (tag: string) => `${tag} ${"w".repeat(1_000)}`
  const session = (): TranscriptMessage[] => [
    user(text(filler("U1"))),
    assistant(text(filler("C1")), tool("bash", { n: 1 }, filler("T1")), tool("bash", { n: 2 }, filler("T2")), text(filler("F1"))),
    user(text(filler("U2"))),
    assistant(tool("bash", { n: 3 }, filler("T3")), text(filler("F2"))),
  ]

  const row = (label: string, body: string) => estimateTokens(`${label}\n${body}\n`)
  /** What a gap costs at most (its marker, its line break and the separator), and a separator. */
  const join = estimateTokens("\n")
  const gap = estimateTokens(omittedMarker(8)) + 3 * join

  it("takes the tiers in order and marks each run of rows left out once", () => {
    // Room for the two human rows and the two final answers, not for anything else: the slack is
    // under what a row needs to be cut into the room.
    const wanted = [row("[human user]", filler("U1")), row("[human user]", filler("U2")), row("[assistant final]", filler("F1")), row("[assistant final]", filler("F2"))]
    const budget = wanted.reduce((sum, size) => sum + size + join, 0) + 2 * gap + 10
    expect(budget - wanted.reduce((sum, size) => sum + size, 0)).toBeLessThan(EVIDENCE_LIMITS.MIN_CUT_ROW_TOKENS)
    const evidence = select(session(), { budgetTokens: budget })
    const out = evidence.chunks.join("")
    expect(out.match(/^\[[^\]]+\]/gm)).toEqual(["[human user]", "[... 3 rows omitted ...]", "[assistant final]", "[human user]", "[... 1 row omitted ...]", "[assistant final]"])
    expect(evidence).toMatchObject({ kept: 4, omitted: 4 })
  })

  it("takes the newest rows of a tier first", () => {
    const messages = [1, 2, 3, 4].map((n) => user(text(filler(`U${n}`))))
    const out = whole(messages, { budgetTokens: row("[human user]", filler("U3")) + row("[human user]", filler("U4")) + 2 * join + gap + 10 })
    expect(out.match(/U\d/g)).toEqual(["U3", "U4"])
    expect(out.startsWith(`${omittedMarker(2)}\n\n[human user]\nU3`)).toBe(true)
  })

  it("cuts the row that does not fit whole when enough room is left, else skips it for older rows that fit", () => {
    const newest = `${"x".repeat(3_000)}NEWEST`
    const budget = Math.floor(row("[human user]", newest) * 0.6)
    expect(budget).toBeGreaterThan(EVIDENCE_LIMITS.MIN_CUT_ROW_TOKENS + gap)
    const cut = select([user(text(filler("OLD"))), user(text(newest))], { budgetTokens: budget })
    expect(cut.kept).toBe(1)
    expect(cut.chunks.join("")).toMatch(/tokens truncated[\s\S]*NEWEST/)
    expect(cut.tokens).toBeLessThanOrEqual(budget)
    const small = row("[human user]", "small old")
    const skip = select([user(text("small old")), user(text("n".repeat(5_000)))], { budgetTokens: small + join + gap + EVIDENCE_LIMITS.MIN_CUT_ROW_TOKENS - 20 })
    expect(skip.chunks.join("")).toBe("[human user]\nsmall old\n\n[... 1 row omitted ...]\n")
  })

  it("never exceeds the budget, and keeps everything when it fits", () => {
    const messages = realisticSession()
    const full = select(messages)
    for (let budget = 0; budget <= full.tokens + 10; budget += 3) {
      const evidence = select(messages, { budgetTokens: budget })
      expect(evidence.tokens).toBeLessThanOrEqual(budget)
      expect(evidence.bytes).toBe(bytes(evidence.chunks.join("")))
      expect(evidence.tokens).toBe(estimateTokens(evidence.chunks.join("")))
      expect(evidence.kept + evidence.omitted).toBe(full.kept)
    }
    expect(select(messages, { budgetTokens: full.tokens })).toEqual(full)
  })

  it("returns no chunks when nothing fits", () => {
    expect(select(session(), { budgetTokens: 10 })).toEqual({ chunks: [], bytes: 0, tokens: 0, kept: 0, omitted: 8, redactions: {} })
  })
})

describe("selectEvidence: chunks", () => {
  it("keeps every chunk within chunkBytes, multi-byte text included, and loses nothing", () => {
    const messages = [
      user(text("日本語のテキスト😀".repeat(400))),
      assistant(text("ok"), tool("bash", { c: "é" }, "ß€😀\n".repeat(900)), text("done ✓")),
      user(text("x".repeat(20))),
    ]
    const reference = whole(messages)
    for (const chunkBytes of [4, 5, 37, 100, 999, 8_900]) {
      const { chunks } = select(messages, { chunkBytes })
      expect(chunks.join("")).toBe(reference)
      for (const chunk of chunks) {
        expect(bytes(chunk)).toBeLessThanOrEqual(chunkBytes)
        expect(chunk).not.toContain("\uFFFD")
      }
    }
  })

  it("splits at row boundaries when the rows fit a chunk", () => {
    const messages = [1, 2, 3, 4, 5, 6].map((n) => user(text(`${n}`.repeat(300))))
    const { chunks } = select(messages, { chunkBytes: 700 })
    expect(chunks).toHaveLength(3)
    for (const chunk of chunks) expect(chunk.startsWith("[human user]\n")).toBe(true)
  })
})

describe("selectEvidence: what never reaches the extractor", () => {
  it("redacts secrets in every tier and counts them", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    const evidence = select([user(text(`use ${token}`)), assistant(tool("bash", { command: `echo ${token}` }, token), text(`set ${token}`))])
    const out = evidence.chunks.join("")
    expect(out).not.toContain(token)
    expect(evidence.redactions).toEqual({ "github-token": 4 })
  })

  it("cuts <private> spans from the user's text and their repeats anywhere", () => {
    const messages = [user(text("my server is <private>db-7.internal.example</private>, fix it")), assistant(tool("bash", { host: "db-7.internal.example" }, "ping db-7.internal.example ok"), text("db-7.internal.example is up"))]
    const filter = privateFilter(messages)
    const out = whole(messages, { transformUserText: filter.transformUserText, scrub: filter.scrub })
    expect(out).not.toContain("db-7.internal")
    expect(out).toContain("[human user]\nmy server is [private], fix it")
  })

  it("strips the plugin's memory block and injected markers, in text and tool output", () => {
    const marker = "<<INJECTED>>"
    const out = whole([user(text(`Before.\n\n${QUOTED_BLOCK}\n\nAfter. ${marker}`)), assistant(tool("read", { f: "x" }, `a\n${QUOTED_BLOCK}`), text(`ok ${marker}`))], {
      injectedMarkers: [marker],
    })
    expect(out).not.toContain("REMEMBERED-FACT")
    expect(out).not.toContain(marker)
    expect(out).toContain("[human user]\nBefore.\n\nAfter.\n")
  })
})
