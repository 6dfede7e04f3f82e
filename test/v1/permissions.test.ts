import { describe, expect, it } from "vitest"
import { requireApprovalFor } from "../../src/v1/permissions.js"

describe("requireApprovalFor", () => {
  it("adds an ask rule when the config has no permissions", () => {
    const config: { permission?: never } = {}
    requireApprovalFor(config, "memory_reset")
    expect(config).toEqual({ permission: { memory_reset: "ask" } })
  })

  it("keeps a blanket action for everything else", () => {
    const config = { permission: "allow" as const }
    requireApprovalFor(config, "memory_reset")
    expect(config.permission).toEqual({ "*": "allow", memory_reset: "ask" })
  })

  it("never overrides the user's own rule", () => {
    const config = { permission: { memory_reset: "allow", bash: "ask" } as Record<string, unknown> }
    requireApprovalFor(config, "memory_reset")
    expect(config.permission).toEqual({ memory_reset: "allow", bash: "ask" })
  })
})
