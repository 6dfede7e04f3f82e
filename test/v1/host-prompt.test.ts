import { describe, expect, it } from "vitest"
import { createV1Host } from "../../src/v1/host.js"
import { promptText } from "../fakes/host.js"

describe("V1 host: helper prompt text parts", () => {
  it("sends a string as one text part and each string of a list as its own part, in order", async () => {
    const bodies: Array<Record<string, unknown>> = []
    const client = {
      session: {
        prompt: async (options: { body: Record<string, unknown> }) => {
          bodies.push(options.body)
          return { data: { info: {}, parts: [] } }
        },
      },
    }
    const host = createV1Host(client as never)
    const base = { directory: "/m", agent: "memorize-extract", system: "sys" }
    await host.prompt("ses_1", { ...base, text: "one" }, AbortSignal.timeout(1_000))
    await host.prompt("ses_1", { ...base, text: ["intro", "chunk 1", "chunk 2"] }, AbortSignal.timeout(1_000))
    expect(bodies.map((body) => body.parts)).toEqual([
      [{ type: "text", text: "one" }],
      [
        { type: "text", text: "intro" },
        { type: "text", text: "chunk 1" },
        { type: "text", text: "chunk 2" },
      ],
    ])
  })
})

describe("fake host: prompt text", () => {
  it("reads a prompt's text parts as one string, whichever form it was given in", () => {
    const base = { directory: "/m", agent: "a", system: "s" }
    expect(promptText({ ...base, text: "one" })).toBe("one")
    expect(promptText({ ...base, text: ["intro", "evidence"] })).toBe("intro\n\nevidence")
  })
})
