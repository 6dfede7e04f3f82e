// What reaches the overflow check from each host: the provider's status and body survive the
// adapters' reply mapping (v1/host.ts toHelperReply, v2/host.ts generateText).
import { describe, expect, it } from "vitest"
import { createV1Host } from "../../../src/v1/host.js"
import { createV2Host, ObservedSessions } from "../../../src/v2/host.js"
import { isContextOverflow } from "../../../src/write/helpers/overflow.js"

const BODY = '{"error":{"message":"Invalid request","type":"invalid_request_error","code":"context_length_exceeded"}}'
const prompt = { directory: "/m", agent: "memorize-extract", system: "sys", text: "transcript" }

function v1HostAnswering(error: Record<string, unknown>) {
  const client = { session: { prompt: async () => ({ data: { info: { role: "assistant", error }, parts: [] } }) } }
  return createV1Host(client as never)
}

describe("an overflow as OpenCode 1.x reports a helper session's failure", () => {
  it("keeps an APIError's status and the provider's body, whose code is nowhere in the message", async () => {
    const host = v1HostAnswering({ name: "APIError", data: { message: "Invalid request", statusCode: 400, isRetryable: false, responseBody: BODY } })
    const reply = await host.prompt("ses_1", prompt, AbortSignal.timeout(1_000))
    expect(reply.error).toEqual({ name: "APIError", message: "Invalid request", status: 400, body: BODY })
    expect(isContextOverflow(reply.error!)).toBe(true)
  })

  it("passes ContextOverflowError on by name, with its message", async () => {
    const host = v1HostAnswering({ name: "ContextOverflowError", data: { message: "Session too large to compact - context exceeds model limit even after stripping media" } })
    const reply = await host.prompt("ses_1", prompt, AbortSignal.timeout(1_000))
    expect(reply.error).toEqual({ name: "ContextOverflowError", message: "Session too large to compact - context exceeds model limit even after stripping media" })
    expect(isContextOverflow(reply.error!)).toBe(true)
  })

  it("leaves an ordinary provider failure an ordinary failure", async () => {
    const host = v1HostAnswering({ name: "APIError", data: { message: "Internal Server Error", statusCode: 500, isRetryable: true } })
    const reply = await host.prompt("ses_1", prompt, AbortSignal.timeout(1_000))
    expect(reply.error).toEqual({ name: "APIError", message: "Internal Server Error", status: 500 })
    expect(isContextOverflow(reply.error!)).toBe(false)
  })
})

describe("an overflow as OpenCode 2's generate.text throws it", () => {
  function v2HostThrowing(error: unknown) {
    const ctx = { generate: { text: async () => Promise.reject(error) } }
    return createV2Host({
      ctx: () => ctx as never,
      service: async () => ({ state: "unavailable", reason: "none in this test" }) as never,
      lastService: () => undefined,
      observed: new ObservedSessions(),
      confined: new Map(),
      helperSystem: new Map(),
      log: () => undefined,
    })
  }

  it("keeps a provider error's statusCode and responseBody (the AI SDK's APICallError)", async () => {
    const error = Object.assign(new Error("Bad Request"), { name: "AI_APICallError", statusCode: 400, responseBody: BODY })
    const reply = await v2HostThrowing(error).generateText!({ prompt: "p" }, AbortSignal.timeout(1_000))
    expect(reply.error).toEqual({ name: "AI_APICallError", message: "Bad Request", status: 400, body: BODY })
    expect(isContextOverflow(reply.error!)).toBe(true)
  })

  it("keeps an HTTP error's status", async () => {
    const error = Object.assign(new Error("POST /api/experimental/generate -> HTTP 503"), { status: 503 })
    const reply = await v2HostThrowing(error).generateText!({ prompt: "p" }, AbortSignal.timeout(1_000))
    expect(reply.error).toEqual({ name: "Error", message: "POST /api/experimental/generate -> HTTP 503", status: 503 })
    expect(isContextOverflow(reply.error!)).toBe(false)
  })
})
