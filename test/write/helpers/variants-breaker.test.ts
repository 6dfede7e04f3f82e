import { describe, expect, it } from "vitest"
import { breakerScope, isRateLimit, RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { chooseVariant } from "../../../src/write/helpers/variants.js"

describe("chooseVariant", () => {
  it("takes the preferred effort when the model lists it", () => {
    expect(chooseVariant(["low", "medium", "high"], "low")).toBe("low")
    expect(chooseVariant(["low", "medium", "high"], "medium")).toBe("medium")
  })

  it("otherwise takes the nearest listed effort, ties going up", () => {
    expect(chooseVariant(["minimal", "medium"], "low")).toBe("medium")
    expect(chooseVariant(["none", "high"], "medium")).toBe("high")
    expect(chooseVariant(["max"], "low")).toBe("max")
    expect(chooseVariant(["none", "minimal"], "medium")).toBe("minimal")
  })

  it("pins no variant when the model lists no effort", () => {
    expect(chooseVariant([], "low")).toBeUndefined()
    expect(chooseVariant(["thinking", "fast"], "medium")).toBeUndefined()
  })
})

describe("rate-limit breaker", () => {
  it("recognises HTTP 429 and quota errors, and nothing else", () => {
    expect(isRateLimit({ status: 429 })).toBe(true)
    expect(isRateLimit({ name: "APIError", message: "You exceeded your current quota, please check your plan" })).toBe(true)
    expect(isRateLimit({ name: "APIError", message: "Rate limit reached for requests" })).toBe(true)
    expect(isRateLimit({ name: "APIError", message: "invalid api key", status: 401 })).toBe(false)
    expect(isRateLimit({ name: "UnknownError", message: "socket hang up" })).toBe(false)
  })

  it("stays open for an hour per scope", () => {
    let now = 1_000
    const breaker = new RateLimitBreaker(() => now)
    breaker.trip("openai/gpt-5-mini", "429")
    expect(breaker.check("openai/gpt-5-mini")?.until).toBe(1_000 + 3_600_000)
    expect(breaker.check("anthropic/claude")).toBeUndefined()
    now += 3_600_000
    expect(breaker.check("openai/gpt-5-mini")).toBeUndefined()
    expect(breaker.list()).toEqual([])
  })

  it("scopes to the model, or to the phase's default", () => {
    expect(breakerScope({ providerID: "openai", modelID: "gpt-5-mini" }, "extraction")).toBe("openai/gpt-5-mini")
    expect(breakerScope(undefined, "consolidation")).toBe("consolidation:default-model")
  })
})
