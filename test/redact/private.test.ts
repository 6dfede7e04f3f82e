import { describe, expect, it } from "vitest"
import { echoPieces, removeEchoes, stripPrivate } from "../../src/redact/private.js"
import { renderTranscript, type TranscriptMessage } from "../../src/write/transcript/transcript.js"
import { privateFilter } from "../../src/write/transcript/transcript-private.js"

describe("stripPrivate", () => {
  it("replaces each span with a marker and returns what it hid", () => {
    expect(stripPrivate("deploy with <private>the staging password is tiger</private> today")).toEqual({
      text: "deploy with [private] today",
      spans: ["the staging password is tiger"],
    })
  })

  it("matches tags in any case, with blanks, across lines", () => {
    expect(stripPrivate("a <PRIVATE>one\ntwo</Private> b < private >three</ private > c").text).toBe("a [private] b [private] c")
  })

  it("hides the rest of the text after an unclosed tag", () => {
    expect(stripPrivate("keep this <private>but not\nany of this")).toEqual({ text: "keep this [private]", spans: ["but not\nany of this"] })
  })

  it("ends a nested span at its outermost closing tag", () => {
    expect(stripPrivate("a <private>x <private>y</private> z</private> b").text).toBe("a [private] b")
  })

  it("drops a closing tag with nothing open and keeps the text around it", () => {
    expect(stripPrivate("a </private> b")).toEqual({ text: "a  b", spans: [] })
  })

  it("returns text without tags as it is", () => {
    const text = "private methods are fine; so is <privateKey>"
    expect(stripPrivate(text)).toEqual({ text, spans: [] })
  })

  it("searches elsewhere for each span and each long line of one, but not for tiny spans", () => {
    expect(echoPieces(["  tiger  ", "ab", "first line here\nsecond line here"])).toEqual([
      "first line here\nsecond line here",
      "second line here",
      "first line here",
      "tiger",
    ])
    expect(removeEchoes("the password is tiger, really tiger", ["tiger"])).toBe("the password is [private], really [private]")
  })
})

describe("private spans in a transcript", () => {
  const messages: TranscriptMessage[] = [
    { info: { role: "user" }, parts: [{ type: "text", text: "Use the VPN. <private>My home IP is 203.0.113.7 and my PIN is 4711</private> Then deploy." }] },
    { info: { role: "assistant" }, parts: [{ type: "text", text: "Noted: My home IP is 203.0.113.7 and my PIN is 4711. Deploying." }] },
    {
      info: { role: "assistant" },
      parts: [{ type: "tool", tool: "bash", state: { status: "completed", input: { command: "ssh 203.0.113.7" }, output: "connected" } }],
    },
  ]

  it("are cut from user text and from the assistant repeating them, and counted", () => {
    const filter = privateFilter(messages)
    const rendered = renderTranscript(messages, { maxTokens: 10_000, transformUserText: filter.transformUserText, scrub: filter.scrub })
    expect(rendered.text).toBe(
      "[user]\nUse the VPN. [private] Then deploy.\n\n[assistant]\nNoted: [private]. Deploying.\n\n[tool bash] {\"command\":\"ssh 203.0.113.7\"}\nconnected",
    )
    expect(filter.removed()).toBe(1)
  })

  it("leave the conversation itself untouched: OpenCode's copy, which the model answers from, keeps them", () => {
    const before = structuredClone(messages)
    const filter = privateFilter(messages)
    renderTranscript(messages, { maxTokens: 10_000, transformUserText: filter.transformUserText, scrub: filter.scrub })
    expect(messages).toEqual(before)
    expect(JSON.stringify(messages)).toContain("<private>My home IP is 203.0.113.7")
  })

  it("are not looked for in the assistant's own text: only the user marks what is private", () => {
    const own: TranscriptMessage[] = [{ info: { role: "assistant" }, parts: [{ type: "text", text: "an example: <private>x</private>" }] }]
    const filter = privateFilter(own)
    expect(renderTranscript(own, { maxTokens: 1_000, transformUserText: filter.transformUserText, scrub: filter.scrub }).text).toBe("[assistant]\nan example: <private>x</private>")
  })
})
