import { describe, expect, it } from "vitest"
import { isContextOverflow, shrinkBudget } from "../../../src/write/helpers/overflow.js"

// Error texts as providers and OpenCode word them (messages and bodies as they arrive at the plugin).
const OPENAI_BODY = JSON.stringify({
  error: {
    message: "This model's maximum context length is 16385 tokens. However, your messages resulted in 23512 tokens. Please reduce the length of the messages.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  },
})

describe("isContextOverflow", () => {
  it("recognises OpenCode's own ContextOverflowError, whatever its message (1.18.33's helper session that cannot compact)", () => {
    expect(isContextOverflow({ name: "ContextOverflowError", message: "Session too large to compact - context exceeds model limit even after stripping media" })).toBe(true)
    expect(isContextOverflow({ name: "ContextOverflowError", message: "Input exceeds context window of this model" })).toBe(true)
    // OpenCode 2 stores a session error's type as its name.
    expect(isContextOverflow({ name: "context_overflow", message: "" })).toBe(true)
  })

  it("recognises OpenAI and OpenAI-compatible 400s by their message or, when the message says nothing, their body", () => {
    expect(isContextOverflow({ name: "APIError", status: 400, message: "This model's maximum context length is 16385 tokens. However, your messages resulted in 23512 tokens. Please reduce the length of the messages." })).toBe(true)
    expect(isContextOverflow({ name: "APIError", status: 400, message: "Bad Request", body: OPENAI_BODY })).toBe(true)
    expect(isContextOverflow({ name: "APIError", status: 400, message: "Bad Request", body: '{"error":{"code":"context_length_exceeded"}}' })).toBe(true)
    // The Responses API's wording.
    expect(isContextOverflow({ name: "APIError", status: 400, message: "Your input exceeds the context window of this model. Please adjust your input and try again." })).toBe(true)
  })

  it("recognises Anthropic's prompt too long (400) and request too large (413)", () => {
    expect(isContextOverflow({ name: "APIError", status: 400, message: "prompt is too long: 214183 tokens > 200000 maximum" })).toBe(true)
    expect(isContextOverflow({ name: "APIError", status: 413, message: "Request Entity Too Large", body: '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}' })).toBe(true)
    expect(isContextOverflow({ name: "APIError", status: 413, message: "" })).toBe(true)
  })

  it("recognises OpenRouter, vLLM, llama.cpp, Ollama, Gemini, Bedrock and xAI wordings", () => {
    const texts = [
      // OpenRouter
      "This endpoint's maximum context length is 16384 tokens. However, you requested about 23310 tokens (19214 of text input, 4096 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.",
      // vLLM, old and new
      "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.",
      "The decoder prompt (length 20481) is longer than the maximum model length of 16384. Make sure that `max_model_len` is no smaller than the number of text tokens.",
      "Input (20481 tokens) is longer than the model's context length (16384 tokens).",
      // llama.cpp's server
      "the request exceeds the available context size, try increasing it",
      // Ollama
      "input length exceeds the context length",
      // Gemini
      "The input token count (1203741) exceeds the maximum number of tokens allowed (1048576).",
      // Bedrock
      "Input is too long for requested model.",
      // xAI
      "This model's maximum prompt length is 131072 but the request contains 140211 tokens.",
      // A gateway's short form
      "Too many tokens: the prompt has 40000 tokens, the limit is 32768",
    ]
    for (const message of texts) expect(isContextOverflow({ name: "APIError", status: 400, message }), message).toBe(true)
    // llama.cpp's error type, in the body only.
    expect(isContextOverflow({ name: "APIError", status: 400, message: "Bad Request", body: '{"error":{"code":400,"message":"request (20000 tokens) exceeds context","type":"exceed_context_size_error","n_prompt_tokens":20000,"n_ctx":16384}}' })).toBe(true)
  })

  it("counts an error without a status by its text, as OpenCode 2's completions give it", () => {
    expect(isContextOverflow({ name: "Error", message: "context_length_exceeded: the prompt is 20000 tokens, the model's window 16000" })).toBe(true)
    expect(isContextOverflow({ name: "Error", message: "fetch failed" })).toBe(false)
  })

  it("recognises a provider's refusal relayed by OpenCode 2.1.2's background service as its own 503", () => {
    const relayed = JSON.stringify({ _tag: "ServiceUnavailableError", message: "This model's maximum context length is 16000 tokens. However, your messages resulted in 20512 tokens." })
    expect(isContextOverflow({ name: "Error", status: 503, message: "POST /api/experimental/generate -> HTTP 503", body: relayed })).toBe(true)
    // The same service failing for another reason, or a 503 of anyone else, is not an overflow.
    expect(isContextOverflow({ name: "Error", status: 503, message: "POST /api/experimental/generate -> HTTP 503", body: JSON.stringify({ _tag: "ServiceUnavailableError", message: "fetch failed" }) })).toBe(false)
    expect(isContextOverflow({ name: "APIError", status: 503, message: "maximum context length is 4096 tokens" })).toBe(false)
  })

  it("is not a rate limit, even one that counts tokens, nor a server failure, nor an output limit", () => {
    expect(isContextOverflow({ name: "APIError", status: 429, message: "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45021." })).toBe(false)
    expect(isContextOverflow({ name: "APIError", message: "Rate limit reached: too many tokens per minute" })).toBe(false)
    expect(isContextOverflow({ name: "APIError", status: 500, message: "maximum context length is 4096 tokens" })).toBe(false)
    expect(isContextOverflow({ name: "APIError", status: 400, message: "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000." })).toBe(false)
    expect(isContextOverflow({ name: "APIError", status: 400, message: "Invalid 'messages[0].content': string too long. Expected a string with maximum length 10485760" })).toBe(false)
    expect(isContextOverflow({ name: "ProviderAuthError", message: "invalid api key" })).toBe(false)
    expect(isContextOverflow({ name: "UnknownError", message: "Model not found: openai/gpt-9" })).toBe(false)
    expect(isContextOverflow({ name: "MessageOutputLengthError", message: "" })).toBe(false)
  })
})

describe("shrinkBudget", () => {
  it("keeps two thirds, in whole tokens", () => {
    expect(shrinkBudget(9_000)).toBe(6_000)
    expect(shrinkBudget(7_200)).toBe(4_800)
    expect(shrinkBudget(1_001)).toBe(667)
  })
})
