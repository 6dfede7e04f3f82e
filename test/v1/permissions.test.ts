import { describe, expect, it } from "vitest"
import { hideFromTask, requireApprovalFor } from "../../src/v1/permissions.js"

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

describe("hideFromTask", () => {
  const helpers = ["memorize", "memorize-extract"]

  it("denies the helpers to every agent's task tool, keeping what the task permission allowed before", () => {
    const none: { permission?: unknown } = {}
    hideFromTask(none as never, helpers)
    expect(none.permission).toEqual({ task: { memorize: "deny", "memorize-extract": "deny" } })
    const blanket = { permission: { task: "allow" } as Record<string, unknown> }
    hideFromTask(blanket, helpers)
    expect(blanket.permission.task).toEqual({ "*": "allow", memorize: "deny", "memorize-extract": "deny" })
    const whole = { permission: "ask" as const } as { permission: unknown }
    hideFromTask(whole as never, helpers)
    expect(whole.permission).toEqual({ "*": "ask", task: { memorize: "deny", "memorize-extract": "deny" } })
  })

  it("leaves a rule the user wrote for a helper alone", () => {
    const config = { permission: { task: { memorize: "ask", general: "allow" } } as Record<string, unknown> }
    hideFromTask(config, helpers)
    expect(config.permission.task).toEqual({ memorize: "ask", general: "allow", "memorize-extract": "deny" })
  })
})
