import { describe, expect, it } from "vitest"
import { Diagnostics } from "../src/diagnostics.js"
import { createGuard } from "../src/guard.js"
import type { Host } from "../src/host.js"
import { FakeHost } from "./fakes/host.js"

function recordingHost() {
  const host = new FakeHost()
  return { host, logs: host.logs }
}

describe("guard", () => {
  it("catches a throwing hook, records it and logs it", async () => {
    const { host, logs } = recordingHost()
    const diagnostics = new Diagnostics(host)
    const guard = createGuard({ diagnostics })
    const hook = guard("chat.message", () => {
      throw new Error("boom")
    })
    await expect(hook()).resolves.toBeUndefined()
    expect(diagnostics.recent()).toMatchObject([{ level: "error", source: "chat.message", message: "boom" }])
    expect(logs).toEqual([{ level: "error", message: "chat.message: boom" }])
  })

  it("catches a rejected promise", async () => {
    const diagnostics = new Diagnostics(recordingHost().host)
    await createGuard({ diagnostics })("event", async () => Promise.reject(new Error("late boom")))()
    expect(diagnostics.recent()[0]?.message).toBe("late boom")
  })

  it("gives up waiting after the time bound and lets the turn go on", async () => {
    const diagnostics = new Diagnostics(recordingHost().host)
    const guard = createGuard({ diagnostics, timeoutMs: 20 })
    const started = Date.now()
    await guard("slow", () => new Promise((resolve) => setTimeout(resolve, 2_000)))()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(diagnostics.recent()[0]).toMatchObject({ level: "warn", source: "slow" })
  })

  it("passes arguments through and lets the hook mutate its output", async () => {
    const diagnostics = new Diagnostics(recordingHost().host)
    const output = { system: ["base"] }
    await createGuard({ diagnostics })("transform", (_input: unknown, out: typeof output) => void out.system.push("memory"))({}, output)
    expect(output.system).toEqual(["base", "memory"])
    expect(diagnostics.recent()).toEqual([])
  })

  it("throws on purpose in hooks named as faults", async () => {
    const diagnostics = new Diagnostics(recordingHost().host)
    let ran = false
    await createGuard({ diagnostics, faults: new Set(["config"]) })("config", () => void (ran = true))()
    expect(ran).toBe(false)
    expect(diagnostics.recent()[0]?.message).toBe("injected fault in config")
  })

  it("survives a host whose log call fails", async () => {
    const host: Host = Object.assign(new FakeHost(), { log: () => Promise.reject(new Error("no server")) })
    const diagnostics = new Diagnostics(host)
    await createGuard({ diagnostics })("x", () => {
      throw new Error("boom")
    })()
    expect(diagnostics.recent()).toHaveLength(1)
  })

  it("keeps only the most recent diagnostics", () => {
    const diagnostics = new Diagnostics(recordingHost().host, Date.now, 3)
    for (let i = 0; i < 5; i++) diagnostics.report("warn", "s", `m${i}`)
    expect(diagnostics.recent().map((d) => d.message)).toEqual(["m2", "m3", "m4"])
  })
})
