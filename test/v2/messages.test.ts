// OpenCode 2's stored messages, as the write path reads them: the same transcript as V1's shape.
import { describe, expect, it } from "vitest"
import { toTranscriptMessages } from "../../src/v2/messages.js"
import { splitSegments } from "../../src/write/phase1/segments.js"
import { renderTranscript } from "../../src/write/transcript/transcript.js"

describe("toTranscriptMessages", () => {
  it("turns a compaction into the segment boundary V1 marks, without its summary; a failed one cuts nothing", () => {
    const messages = toTranscriptMessages([
      { id: "msg_1", type: "user", text: "before" },
      { id: "msg_2", type: "compaction", status: "completed", reason: "auto", summary: "the recap", recent: "", time: { created: 500 } },
      { id: "msg_3", type: "user", text: "between" },
      { id: "msg_4", type: "compaction", status: "failed", reason: "auto", error: { type: "x" }, time: { created: 600 } },
      { id: "msg_5", type: "user", text: "after" },
    ])
    expect(JSON.stringify(messages)).not.toContain("the recap")
    const split = splitSegments(messages)
    expect(split.closed.map((s) => [s.closedAt, s.messages.length])).toEqual([[500, 1]])
    expect(split.open).toHaveLength(2)
  })

  it("keeps user text, synthetic text as synthetic, assistant text and tool calls, and drops the rest", () => {
    const messages = toTranscriptMessages([
      { id: "msg_1", type: "user", text: "why is CI red?", files: [{ uri: "file:///x/log.txt", mime: "text/plain", name: "log.txt" }] },
      { id: "msg_2", type: "synthetic", text: "added by OpenCode" },
      { id: "msg_3", type: "agent-switched", agent: "plan" },
      {
        id: "msg_4",
        type: "assistant",
        content: [
          { type: "reasoning", text: "thinking" },
          { type: "tool", id: "call_1", name: "shell", state: { status: "completed", input: '{"command":"npm test"}', content: [{ type: "text", text: "1 failing" }] } },
          { type: "tool", id: "call_2", name: "read", state: { status: "error", input: "{not json", error: "no such file" } },
          { type: "text", text: "The cache key changed." },
        ],
      },
      { id: "msg_5", type: "assistant", content: [], error: { name: "APIError", message: "overloaded" } },
      { id: "msg_6", type: "idle", outcome: "succeeded" },
      "not an object",
    ])
    expect(messages).toEqual([
      { info: { role: "user" }, parts: [{ type: "text", text: "why is CI red?", id: "msg_1" }, { type: "file", filename: "log.txt", mime: "text/plain" }] },
      { info: { role: "user" }, parts: [{ type: "text", text: "added by OpenCode", synthetic: true }] },
      {
        info: { role: "assistant" },
        parts: [
          { type: "tool", tool: "shell", callID: "call_1", state: { status: "completed", input: { command: "npm test" }, output: "1 failing" } },
          { type: "tool", tool: "read", callID: "call_2", state: { status: "error", input: "{not json", error: "no such file" } },
          { type: "text", text: "The cache key changed." },
        ],
      },
      { info: { role: "assistant", error: { name: "APIError", data: { message: "overloaded" } } }, parts: [] },
    ])
  })

  it("renders through the same transcript as an OpenCode 1 session", () => {
    const text = renderTranscript(
      toTranscriptMessages([
        { id: "m1", type: "user", text: "deploy acme" },
        { id: "m2", type: "assistant", content: [{ type: "text", text: "Run make ship." }] },
      ]),
      { maxTokens: 1_000 },
    ).text
    expect(text).toContain("deploy acme")
    expect(text).toContain("Run make ship.")
  })
})
