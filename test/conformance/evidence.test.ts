// Codex's V2 extraction evidence, ported: the tests of codex-rs/memories/write/src/
// rollout_input_tests.rs (zibuyu2015831/codex@67e69213; the same two tests in friel-openai,
// ignatremizov, pwrdrvr and Smarty-Pants-Inc forks) and the rules of rollout_input.rs itself
// (openai/codex@5ef96ab2), which Codex does not test one by one. OpenCode messages stand in for
// Codex's response items: a text part for InputText, a file part for InputImage / InputAudio.
import { describe, expect, it } from "vitest"
import { estimateTokens } from "../../src/util/token-estimate.js"
import { EVIDENCE_LIMITS, selectEvidence } from "../../src/write/phase1/evidence.js"
import type { TranscriptMessage, TranscriptPart } from "../../src/write/transcript/transcript.js"

const user = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "user" }, parts })
const assistant = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "assistant" }, parts })
const text = (value: string): TranscriptPart => ({ type: "text", text: value })
const tool = (name: string, input: unknown, output: string): TranscriptPart => ({ type: "tool", tool: name, callID: "c1", state: { status: "completed", input, output } })
const bytes = (value: string) => Buffer.byteLength(value, "utf8")
const whole = (messages: TranscriptMessage[], budgetTokens = 250_000) => selectEvidence(messages, { budgetTokens }).chunks.join("")

describe("V2 evidence as Codex's rollout_input tests expect", () => {
  // rollout_input_tests.rs: extraction_chunks_preserve_unicode_evidence_with_bounded_messages.
  // Codex splits `"User correction: 🐈\n" x 2000` into messages under 9,000 bytes that join back
  // to the evidence; here the same lines are the user's, one message each.
  it("splits the evidence into chunks under 9,000 bytes that join back to it, never inside a character", () => {
    const messages = Array.from({ length: 2_000 }, () => user(text("User correction: 🐈")))
    const evidence = selectEvidence(messages, { budgetTokens: 250_000 })
    const rendering = Array.from({ length: 2_000 }, () => "[human user]\nUser correction: 🐈\n").join("\n")
    expect(evidence.chunks.length).toBeGreaterThan(1)
    for (const chunk of evidence.chunks) {
      expect(bytes(chunk)).toBeLessThan(9_000)
      expect(chunk).not.toContain("\uFFFD")
    }
    expect(evidence.chunks.join("")).toBe(rendering)
  })

  it("splits one row larger than a chunk without cutting a character in two", () => {
    const cats = "🐈".repeat(2_400)
    const evidence = selectEvidence([user(text(cats))], { budgetTokens: 250_000 })
    expect(evidence.chunks.length).toBe(2)
    for (const chunk of evidence.chunks) expect(bytes(chunk)).toBeLessThanOrEqual(EVIDENCE_LIMITS.CHUNK_BYTES)
    expect(evidence.chunks.join("")).toBe(`[human user]\n${cats}\n`)
  })

  // rollout_input_tests.rs: classifies_memory_excluded_fragments. Codex keeps environment context
  // and sub-agent notifications (as context and other-agent rows); so do we, as the user's text.
  it("keeps environment context and sub-agent notification texts", () => {
    const out = whole([user(text("<environment_context>\n<cwd>/tmp</cwd>\n</environment_context>"), text('<subagent_notification>{"agent_id":"a","status":"completed"}</subagent_notification>'))])
    expect(out).toContain("<cwd>/tmp</cwd>")
    expect(out).toContain("<subagent_notification>")
  })

  // Same Codex test: it drops AGENTS.md and <skill> injections. OpenCode never puts them in the
  // user's messages (AGENTS.md goes to the system prompt, skills come back as a tool's result),
  // so text of that shape is something the user wrote: kept (a recorded divergence).
  it("keeps text shaped like Codex's AGENTS.md and skill injections, which only a user can write in OpenCode", () => {
    const agents = "# AGENTS.md instructions for /tmp\n\n<INSTRUCTIONS>\nbody\n</INSTRUCTIONS>"
    const skill = "<skill>\n<name>demo</name>\n<path>skills/demo/SKILL.md</path>\nbody\n</skill>"
    expect(whole([user(text(agents)), user(text(skill))])).toBe(`[human user]\n${agents}\n\n[human user]\n${skill}\n`)
  })
})

describe("V2 evidence as Codex's rollout_input.rs builds it", () => {
  // serialize_tiered_input replaces InputImage and InputAudio with placeholder text inside the
  // same message, so the user's row keeps them.
  it("puts an image and a recording in the user's row as placeholders, never their bytes", () => {
    const out = whole([
      user(
        text("this is what I see"),
        { type: "file", mime: "image/png", filename: "shot.png", url: "data:image/png;base64,PIXELS" },
        { type: "file", mime: "audio/wav", filename: "note.wav", url: "data:audio/wav;base64,SAMPLES" },
      ),
    ])
    expect(out).toBe("[human user]\nthis is what I see\n\n[image omitted]\n\n[audio omitted]\n")
    // An image alone is still the user's row, as a Codex message holding only an image is Human.
    expect(whole([user({ type: "file", mime: "image/jpeg", url: "data:image/jpeg;base64,PIXELS" })])).toBe("[human user]\n[image omitted]\n")
  })

  // A request_user_input call and its non-blank answer become one Human row; OpenCode's question tool.
  it("gives the user's answer to the assistant's question the human tier, with the question", () => {
    const out = whole([assistant(tool("question", { questions: [{ question: "Which database?" }] }, "Postgres, please"))])
    expect(out).toMatch(/^\[human user\]\n.*Which database\?.*\nPostgres, please\n$/s)
  })

  // TOOL_OUTPUT_TOKENS (2,000 tokens; Codex counts 4 bytes each, here the estimator counts them), and
  // MAX_ROW_BYTES (10,000) for any row.
  it("caps a tool's output at 2,000 tokens and any row at 10,000 bytes, keeping both ends", () => {
    const toolRow = whole([assistant(tool("bash", { command: "cat big.log" }, `HEAD${"x".repeat(50_000)}TAIL`))])
    const result = toolRow.slice(toolRow.indexOf("\n") + 1)
    expect(estimateTokens(result)).toBeLessThanOrEqual(2_000 + estimateTokens("\n"))
    expect(result).toMatch(/^HEAD[\s\S]*TAIL\n$/)
    const userRow = whole([user(text(`FIRST${"y".repeat(50_000)}LAST`))])
    expect(bytes(userRow)).toBeLessThanOrEqual(10_000)
    expect(userRow).toMatch(/^\[human user\]\nFIRST[\s\S]*LAST\n$/)
  })

  // Selection by tier (human, final, other agent, commentary, context, tool), newest first in a
  // tier, rendered in order with one marker per run of rows left out.
  it("keeps the user's words before tool output when the budget is short, with one marker per gap", () => {
    const noisy = "z".repeat(3_000)
    const messages = [
      user(text("first request")),
      assistant(tool("bash", { command: "a" }, noisy), tool("bash", { command: "b" }, noisy), text("done")),
      user(text("second request")),
    ]
    const out = whole(messages, 100)
    expect(out).toContain("[human user]\nfirst request\n")
    expect(out).toContain("[human user]\nsecond request\n")
    expect(out).toContain("[assistant final]\ndone\n")
    expect(out).not.toContain(noisy.slice(0, 600))
    expect(out.match(/^\[\.\.\. \d+ rows? omitted \.\.\.\]$/gm)).toEqual(["[... 2 rows omitted ...]"])
  })

  it("takes the newest rows of a tier first when not all fit", () => {
    const messages = Array.from({ length: 30 }, (_, i) => user(text(`request number ${String(i).padStart(2, "0")} ${"w".repeat(60)}`)))
    const out = whole(messages, 150)
    expect(out).toContain("request number 29")
    expect(out).not.toContain("request number 00")
  })

  // "If the result still exceeds the budget, the input becomes empty": nothing over budget is sent.
  it("sends nothing rather than more than the budget", () => {
    const evidence = selectEvidence([user(text("hello there"))], { budgetTokens: 2 })
    expect(evidence.chunks).toEqual([])
  })
})
