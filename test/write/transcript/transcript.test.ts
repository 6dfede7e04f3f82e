import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { loadReadPathTemplates, renderMemoryBlock } from "../../../src/read/render.js"
import { selectEvidence } from "../../../src/write/phase1/evidence.js"
import { estimateTokens } from "../../../src/util/tokens.js"
import { cutChars, fitBlocks } from "../../../src/write/transcript/transcript-cut.js"
import { renderTranscript, type TranscriptMessage, type TranscriptOptions, type TranscriptPart } from "../../../src/write/transcript/transcript.js"
import { expectGolden } from "../../golden/golden.js"

// ---- Builders: the shapes OpenCode's `GET /session/{id}/message` returns, trimmed to what matters. ----

const user = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "user" }, parts })
const assistant = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "assistant" }, parts })
const text = (value: string, extra: Record<string, unknown> = {}): TranscriptPart => ({ type: "text", text: value, ...extra })
const reasoning = (value: string): TranscriptPart => ({ type: "reasoning", text: value })
const stepStart: TranscriptPart = { type: "step-start", snapshot: "4b825dc6" }
const stepFinish: TranscriptPart = { type: "step-finish", reason: "tool-calls", cost: 0, tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } } }
const completed = (tool: string, input: unknown, output: string): TranscriptPart => ({
  type: "tool",
  tool,
  callID: "call_1",
  state: { status: "completed", input, output, title: tool, metadata: {}, time: { start: 1, end: 2 } },
})
const failed = (tool: string, input: unknown, error: string): TranscriptPart => ({
  type: "tool",
  tool,
  state: { status: "error", input, error, time: { start: 1, end: 2 } },
})

const CITATION = [
  "<memory-citation>",
  "<citation_entries>",
  "MEMORY.md:12-19|note=[CI runs in UTC]",
  "</citation_entries>",
  "<session_ids>",
  "ses_0123456789abcdef",
  "</session_ids>",
  "</memory-citation>",
].join("\n")

const QUOTED_BLOCK = [
  "## Memory",
  "",
  "You have a long-term memory built from earlier OpenCode sessions of this user.",
  "",
  "### Citing memory",
  "",
  "When memory shaped your reply, end the reply with exactly one citation block.",
  "",
  "----- MEMORY SUMMARY BEGINS -----",
  "v1",
  "- acme-api: CI runs in UTC; tests must not depend on the local time zone",
  "----- MEMORY SUMMARY ENDS -----",
].join("\n")

const render = (messages: readonly TranscriptMessage[], options: Partial<TranscriptOptions> = {}) =>
  renderTranscript(messages, { maxTokens: 100_000, ...options })

function realisticSession(): TranscriptMessage[] {
  return [
    user(
      text("The CI job for acme-api fails on `npm test`, but it passes on my machine. Can you find out why?"),
      { type: "file", mime: "text/plain", filename: "ci-log.txt", url: "data:text/plain;base64,RkFJTCB0ZXN0L2RhdGVzLnRlc3QudHM=" },
      text('Called the Read tool with the following input: {"filePath":"ci-log.txt"}\nFAIL test/dates.test.ts', { synthetic: true }),
    ),
    assistant(
      stepStart,
      reasoning("The user wants the CI failure explained. Reading the workflow first is cheapest."),
      text("Let me look at the workflow and run the tests."),
      completed("read", { filePath: "/repo/.github/workflows/ci.yml" }, "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n"),
      failed("bash", { command: "npm test", description: "Run the unit tests" }, "Command failed with exit code 1\nFAIL test/dates.test.ts > formats the release date\nExpected: \"2024-03-01\"\nReceived: \"2024-02-29\""),
      stepFinish,
    ),
    assistant(
      stepStart,
      { type: "patch", hash: "9f2c1e0", files: ["/repo/test/dates.test.ts"] },
      text(`The test builds a date from the local time zone, and CI runs in UTC. I pinned \`TZ=UTC\` in the test setup.\n\n${CITATION}`),
      stepFinish,
    ),
    user(text(`Thanks. Why does my prompt contain this?\n\n${QUOTED_BLOCK}\n\nCan I turn it off for this repository?`)),
    {
      info: { role: "assistant", error: { name: "MessageAbortedError", data: { message: "The operation was aborted." } } },
      parts: [
        stepStart,
        text("That is the memory block. Let me check the current mode."),
        { type: "tool", tool: "memory_mode", state: { status: "running", input: { action: "get" }, time: { start: 1 } } },
      ],
    },
  ]
}

describe("renderTranscript", () => {
  it("renders a realistic session byte for byte", () => {
    const rendered = render(realisticSession())
    expectGolden("transcript.session.txt", rendered.text)
    expect(rendered.stats).toEqual({ messages: 5, parts: 9, dropped: 8, truncated: false, tokens: estimateTokens(rendered.text) })
    expect(rendered.redactions).toEqual({})
  })

  it("is a pure function of its input", () => {
    expect(render(realisticSession())).toEqual(render(realisticSession()))
  })

  it("renders an empty session as empty text", () => {
    expect(render([])).toEqual({
      text: "",
      redactions: {},
      stats: { messages: 0, parts: 0, dropped: 0, truncated: false, tokens: 0 },
    })
  })

  it("labels each speaker and separates user turns after the first with a rule", () => {
    const { text: out } = render([user(text("first")), assistant(text("answer")), user(text("second"))])
    expect(out).toBe("[user]\nfirst\n\n[assistant]\nanswer\n\n---\n[user]\nsecond")
  })

  it("keeps consecutive text parts of one message under one label", () => {
    const { text: out } = render([assistant(text("one"), reasoning("hidden"), text("two"), completed("bash", { command: "ls" }, "a"), text("three"))])
    expect(out).toBe("[assistant]\none\n\ntwo\n\n[tool bash] {\"command\":\"ls\"}\na\n\n[assistant]\nthree")
  })
})

describe("renderTranscript drops", () => {
  it("reasoning parts", () => {
    const rendered = render([assistant(reasoning("secret plan"), text("visible"))])
    expect(rendered.text).toBe("[assistant]\nvisible")
    expect(rendered.stats).toMatchObject({ parts: 1, dropped: 1 })
  })

  it.each([["synthetic"], ["ignored"]])("text parts marked %s", (flag) => {
    const rendered = render([user(text("typed by the user"), text("added by OpenCode", { [flag]: true }))])
    expect(rendered.text).toBe("[user]\ntyped by the user")
    expect(rendered.stats).toMatchObject({ parts: 1, dropped: 1 })
  })

  it.each([
    ["step-start", stepStart],
    ["step-finish", stepFinish],
    ["snapshot", { type: "snapshot", snapshot: "4b825dc6" }],
    ["patch", { type: "patch", hash: "9f2c1e0", files: ["/repo/a.ts"] }],
    ["retry", { type: "retry", attempt: 2, error: { name: "APIError", data: { message: "overloaded", isRetryable: true } }, time: { created: 1 } }],
    ["compaction", { type: "compaction", auto: true }],
  ])("%s markers", (_, part) => {
    const rendered = render([assistant(part as TranscriptPart, text("kept"))])
    expect(rendered.text).toBe("[assistant]\nkept")
    expect(rendered.stats).toMatchObject({ parts: 1, dropped: 1 })
  })

  it("citation blocks inside text, and a part left empty by the removal", () => {
    const rendered = render([assistant(text(`Use \`make release\`.\n\n${CITATION}`), text(CITATION))])
    expect(rendered.text).toBe("[assistant]\nUse `make release`.")
    expect(rendered.stats).toMatchObject({ parts: 1, dropped: 1 })
  })

  it("the memory block quoted in a user message, keeping the text around it", () => {
    const { text: out } = render([user(text(`Before.\n\n${QUOTED_BLOCK}\n\nAfter.`))])
    expect(out).toBe("[user]\nBefore.\n\nAfter.")
  })

  it("the plugin's own rendered block, whatever summary it carried", () => {
    const templates = loadReadPathTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
    const block = renderMemoryBlock(templates, { memoryRoot: "/m", summary: "v1\n- REMEMBERED-FACT", dedicatedTools: true })
    const { text: out } = render([user(text(`Look:\n${block}`))])
    expect(out).not.toContain("REMEMBERED-FACT")
    expect(out).not.toContain("## Memory")
    expect(out).not.toContain("MEMORY SUMMARY")
    expect(out.startsWith("[user]\nLook:\n\n")).toBe(true)
  })

  it("the plugin's own Memory V2 block too, in V1's transcript and in V2's evidence", () => {
    const templates = loadReadPathTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)), "v2")
    const summary = "v1\n## User Profile\nREMEMBERED-RECAP\n## User preferences\n## General Tips\n## What's in Memory"
    const block = renderMemoryBlock(templates, { memoryRoot: "/m", summary, dedicatedTools: true })
    const messages = [user(text(`Look:\n${block}`))]
    const { text: out } = render(messages)
    expect(out).not.toContain("REMEMBERED-RECAP")
    expect(out).not.toContain("MEMORY SUMMARY")
    const evidence = selectEvidence(messages as never, { budgetTokens: 25_000 }).chunks.join("")
    expect(evidence).toContain("Look:")
    expect(evidence).not.toContain("REMEMBERED-RECAP")
    expect(evidence).not.toContain("## Memory")
  })

  it("the summary markers and what is between them when the heading is missing", () => {
    const summaryOnly = QUOTED_BLOCK.slice(QUOTED_BLOCK.indexOf("----- MEMORY SUMMARY BEGINS"))
    const { text: out } = render([user(text(`## Notes\nmine\n\n${summaryOnly}\nafter`))])
    expect(out).toBe("[user]\n## Notes\nmine\n\nafter")
  })

  it("a memory block cut off before its end marker, to the end of the text", () => {
    const cutOff = QUOTED_BLOCK.slice(0, QUOTED_BLOCK.indexOf("----- MEMORY SUMMARY ENDS"))
    const { text: out } = render([user(text(`Question?\n\n${cutOff}`))])
    expect(out).toBe("[user]\nQuestion?")
  })

  it("nothing of a user's own `## Memory` section without the summary markers", () => {
    const own = "## Memory\n\nThe cache keeps 2 GB of memory.\n\n## Disk\n\nplenty"
    expect(render([user(text(own))]).text).toBe(`[user]\n${own}`)
  })

  it("every occurrence of an injected marker, in text and in tool output", () => {
    const marker = "<<INJECTED BY THE PLUGIN>>"
    const rendered = render(
      [user(text(`a ${marker} b`)), assistant(completed("bash", { command: "cat prompt.txt" }, `x\n${marker}\ny\n${marker}`))],
      { injectedMarkers: ["", marker] },
    )
    expect(rendered.text).toBe("[user]\na b\n\n[tool bash] {\"command\":\"cat prompt.txt\"}\nx\n\ny")
    const adjacent = render([user(text(`a ${marker} ${marker} b`)), user(text(`x\n${marker}\n${marker}\ny ${marker}`))], { injectedMarkers: [marker] })
    expect(adjacent.text).toBe("[user]\na b\n\n---\n[user]\nx\n\ny")
  })

  it("unknown part types, malformed parts and messages of unknown roles", () => {
    const rendered = render([
      user(text("kept"), { type: "hologram", payload: "?" }, null as unknown as TranscriptPart, { text: "no type" }),
      { info: { role: "system" }, parts: [text("not a speaker")] },
      { parts: [text("no info")] },
      { info: { role: "assistant" } },
      assistant(text(42 as unknown as string), { type: "agent" }, { type: "subtask" }, { type: "tool", tool: "bash" }),
    ])
    expect(rendered.text).toBe("[user]\nkept\n\n[tool bash]\n(never finished)")
    expect(rendered.stats).toEqual({ messages: 2, parts: 2, dropped: 8, truncated: false, tokens: estimateTokens(rendered.text) })
  })
})

describe("renderTranscript tools and attachments", () => {
  it("marks an errored tool with its error text", () => {
    const { text: out } = render([assistant(failed("read", { filePath: "/nope" }, "File not found: /nope\n"))])
    expect(out).toBe('[tool read] {"filePath":"/nope"}\nerror: File not found: /nope')
  })

  it.each([["pending"], ["running"]])("shows that a %s tool never finished", (status) => {
    const { text: out } = render([assistant({ type: "tool", tool: "bash", state: { status, input: { command: "npm run dev" }, raw: "" } })])
    expect(out).toBe(`[tool bash] {"command":"npm run dev"}\n(never finished: ${status})`)
  })

  it("says when a finished tool printed nothing, and leaves out an empty input", () => {
    expect(render([assistant(completed("todoread", {}, "\n"))]).text).toBe("[tool todoread]\n(no output)")
  })

  it("cuts a long output in the middle, keeping head and tail and saying how much went", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${String(i).padStart(3, "0")} ${"x".repeat(20)}`)
    const output = lines.join("\n")
    const { text: out } = render([assistant(completed("bash", { command: "npm test" }, output))], { maxToolOutputChars: 2_000 })
    const body = out.split("\n").slice(1)
    expect(body[0]).toBe(lines[0])
    expect(body.at(-1)).toBe(lines.at(-1))
    const at = body.findIndex((l) => l.startsWith("[..."))
    const removed = Number(/^\[\.\.\. (\d+) characters cut \.\.\.\]$/.exec(body[at]!)![1])
    const head = body.slice(0, at).join("\n")
    const tail = body.slice(at + 1).join("\n")
    expect(head.length + tail.length).toBeLessThanOrEqual(2_000)
    expect(head.length + tail.length).toBeGreaterThan(1_800)
    // Every line kept is whole, and the count accounts for every character in between.
    for (const l of [...body.slice(0, at), ...body.slice(at + 1)]) expect(lines).toContain(l)
    expect(head.length + removed + tail.length).toBe(output.length)
  })

  it("cuts a long input on its line", () => {
    const { text: out } = render([assistant(completed("write", { filePath: "/a.ts", content: "y".repeat(5_000) }, "ok"))], { maxToolInputChars: 100 })
    const header = out.split("\n")[0]!
    expect(header).toMatch(/^\[tool write\] \{"filePath":"\/a\.ts","content":"y+ \[\.\.\. \d+ characters cut \.\.\.\] y+"\}$/)
    expect(header.length).toBeLessThan(160)
  })

  it("mentions a file part by name and type, never its content", () => {
    const { text: out } = render([
      user(
        { type: "file", mime: "image/png", filename: "screen.png", url: "data:image/png;base64,iVBORw0KGgoSECRETPIXELS" },
        { type: "file", mime: "text/plain", url: "file:///repo/notes.txt", source: { type: "file", path: "notes.txt", text: { value: "@notes.txt", start: 0, end: 10 } } },
        { type: "file", url: "data:application/octet-stream;base64,AAAA" },
      ),
    ])
    expect(out).toBe("[file] screen.png (image/png)\n\n[file] notes.txt (text/plain)\n\n[file] (unnamed)")
  })

  it("renders agent and subtask parts on one line", () => {
    const { text: out } = render([
      user(
        { type: "agent", name: "explore" },
        { type: "subtask", agent: "general", description: "Find where\nthe dates are   formatted", prompt: "A long prompt that is not shown" },
      ),
    ])
    expect(out).toBe("[agent] explore\n\n[subtask general] Find where the dates are formatted")
  })

  it("records how an assistant message ended in an error", () => {
    const { text: out } = render([{ info: { role: "assistant", error: { name: "MessageOutputLengthError", data: {} } }, parts: [text("partial")] }])
    expect(out).toBe("[assistant]\npartial\n\n[assistant error] MessageOutputLengthError")
  })
})

describe("renderTranscript redaction", () => {
  it("redacts secrets in user text, tool input and tool output, and counts them by class", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    const rendered = render([
      user(text(`Push with ${token} please`)),
      assistant(completed("bash", { command: "export API_KEY=abcd1234efgh && ./deploy" }, `Using token ${token}\nAuthorization: Bearer abcdef0123456789xyz`)),
    ])
    expect(rendered.text).not.toContain(token)
    expect(rendered.text).not.toContain("abcd1234efgh")
    expect(rendered.text).not.toContain("abcdef0123456789xyz")
    expect(rendered.text).toContain("Push with [REDACTED:github-token] please")
    expect(rendered.redactions).toEqual({ "github-token": 2, "secret-assignment": 1, "authorization-header": 1 })
  })

  it("redacts a secret before a long output is cut, so no part of it survives the cut", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    // The token straddles the cut point (500): cut first, its first 20 characters would stay.
    const output = `${"a ".repeat(240)}${token} ${"b ".repeat(745)}`
    const rendered = render([assistant(completed("bash", {}, output))], { maxToolOutputChars: 1_000 })
    expect(rendered.text).not.toMatch(/ghp_|0123456789/)
    expect(rendered.redactions).toEqual({ "github-token": 1 })
  })

  it("hands user text, and only user text, to the transformUserText seam first", () => {
    const rendered = render([user(text("keep <private>hidden</private> this")), assistant(text("assistant <private>stays</private>"))], {
      transformUserText: (value) => value.replace(/<private>[\s\S]*?<\/private>/g, "[private]"),
    })
    expect(rendered.text).toBe("[user]\nkeep [private] this\n\n[assistant]\nassistant <private>stays</private>")
  })
})

describe("renderTranscript budget", () => {
  const session = () =>
    Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? user(text(`question ${i} ${"q".repeat(200)}`)) : assistant(text(`answer ${i} ${"a".repeat(300)}`)),
    )

  it("keeps the head and the tail at entry boundaries and marks the cut", () => {
    const rendered = render(session(), { maxTokens: 2_000 })
    expect(rendered.stats.truncated).toBe(true)
    expect(rendered.stats.tokens).toBeLessThanOrEqual(2_000)
    expect(rendered.stats.tokens).toBeGreaterThan(1_500)
    expect(rendered.text.startsWith("[user]\nquestion 0 ")).toBe(true)
    expect(rendered.text.endsWith(`answer 199 ${"a".repeat(300)}`)).toBe(true)
    const blocks = rendered.text.split("\n\n")
    const marker = blocks.findIndex((b) => b.startsWith("[... "))
    expect(blocks[marker]).toMatch(/^\[\.\.\. \d+ entries \(\d+ tokens\) truncated \.\.\.\]$/)
    expect(blocks[marker + 1]).toMatch(/^(---\n)?\[(user|assistant)\]\n/)
    expect(rendered.stats.messages).toBe(200)
  })

  it("cuts inside the text when whole entries would lose the start or the end", () => {
    const rendered = render([user(text(`START ${"m".repeat(40_000)} END`))], { maxTokens: 1_000 })
    expect(rendered.stats.truncated).toBe(true)
    expect(rendered.stats.tokens).toBeLessThanOrEqual(1_000)
    expect(rendered.text.startsWith("[user]\nSTART ")).toBe(true)
    expect(rendered.text.endsWith(" END")).toBe(true)
    expect(rendered.text).toMatch(/\n\[\.\.\. \d+ tokens truncated \.\.\.\]\n/)
  })

  it("leaves a transcript within the budget untouched", () => {
    const rendered = render(session(), { maxTokens: 1_000_000 })
    expect(rendered.stats.truncated).toBe(false)
    expect(rendered.text).toBe(render(session(), { maxTokens: Number.POSITIVE_INFINITY }).text)
  })
})

describe("cutChars", () => {
  it("leaves text within the limit alone", () => {
    expect(cutChars("short", 5)).toBe("short")
  })

  it("never splits a surrogate pair", () => {
    const out = cutChars("🙂".repeat(100), 51, true)
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
  })
})

describe("fitBlocks", () => {
  it("keeps at least the first and the last block's edges under any budget that holds the marker", () => {
    const blocks = ["first", "x".repeat(10_000), "last"]
    for (const maxTokens of [30, 60, 500, 2_000]) {
      const { text: out, truncated } = fitBlocks(blocks, maxTokens)
      expect(truncated).toBe(true)
      expect(estimateTokens(out)).toBeLessThanOrEqual(maxTokens)
      expect(out.startsWith("first")).toBe(true)
      expect(out.endsWith("last")).toBe(true)
    }
  })
})
