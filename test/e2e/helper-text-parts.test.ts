// A helper prompt in several text parts on a real OpenCode: V2 sends its extraction evidence as one
// user text part per chunk, after the input template. The body is the one the V1 adapter builds
// (textParts); OpenCode must accept it with a json_schema format, hand the model every part, in
// order and unmerged, and return the structured answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { textParts } from "../../src/v1/host.js"
import { EXTRACTION_V2_SCHEMA } from "../../src/write/phase1/extract-v2.js"
import { FakeLlm, contentText, type ChatMessage } from "./support/fake-llm.js"
import { createSandbox, startServe, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const TEXTS = ["INTRO-PART: the record of one finished session", "CHUNK-ONE [human user]\nwhy is CI red?\n\n", "CHUNK-TWO [assistant final]\nThe cache key changed.\n"]

describe("a helper prompt in several text parts, on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, plugins: [] })
    server = await startServe(sandbox)
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("reaches the model as separate parts, in order, and the structured answer comes back", async () => {
    const api = new ServerApi(server.url, sandbox.projectDir)
    const session = await api.createSession("parts")
    llm.setStructuredHandler(() => ({ rollout_summary: "Fixed the CI cache.", rollout_slug: "ci-cache" }))
    const reply = await api.request<{ info: { structured?: unknown; error?: unknown } }>("POST", `/session/${session.id}/message`, {
      system: "You write session records.",
      parts: textParts(TEXTS),
      format: { type: "json_schema", schema: EXTRACTION_V2_SCHEMA },
    })
    expect(reply.info.error).toBeUndefined()
    expect(reply.info.structured).toEqual({ rollout_summary: "Fixed the CI cache.", rollout_slug: "ci-cache" })

    const request = llm.requests().find((logged) => logged.kind === "structured")
    const users = (request?.body.messages ?? []).filter((message: ChatMessage) => message.role === "user")
    const texts = users.flatMap((message) => (Array.isArray(message.content) ? message.content.map((part: unknown) => contentText([part])) : [contentText(message.content)]))
    expect(texts.filter((text) => TEXTS.includes(text))).toEqual(TEXTS)
  }, 120_000)
})
