import { describe, expect, it } from "vitest"
import { Diagnostics } from "../src/diagnostics.js"
import type { LogLevel } from "../src/host.js"
import { FakeHost } from "./fakes/host.js"

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"

/** Records what reaches the host's log, extra fields included. */
class LoggingHost extends FakeHost {
  readonly extras: Array<Record<string, unknown> | undefined> = []
  override async log(level: LogLevel, message: string, extra?: Record<string, unknown>): Promise<void> {
    this.extras.push(extra)
    return super.log(level, message)
  }
}

describe("Diagnostics", () => {
  it("redacts a message before keeping it and before logging it", () => {
    const host = new LoggingHost()
    const diagnostics = new Diagnostics(host, () => 1)
    diagnostics.report("warn", "phase1", `extraction failed: upstream rejected key ${TOKEN}`, { body: { echo: `Authorization: Bearer ${TOKEN}` } })
    expect(diagnostics.recent()[0]?.message).toBe("extraction failed: upstream rejected key [REDACTED:github-token]")
    expect(host.logs[0]?.message).toBe("phase1: extraction failed: upstream rejected key [REDACTED:github-token]")
    expect(JSON.stringify(host.extras)).not.toContain(TOKEN)
    expect(JSON.stringify(diagnostics.recent())).not.toContain(TOKEN)
  })

  it("redacts an error's message and stack", () => {
    const host = new LoggingHost()
    const diagnostics = new Diagnostics(host, () => 1)
    diagnostics.error("startup", new Error(`cannot open postgres://app:hunter2secret@db/x`))
    expect(diagnostics.recent()[0]?.message).toBe("cannot open postgres://app:[REDACTED:database-url]@db/x")
    expect(JSON.stringify(host.extras)).not.toContain("hunter2secret")
  })

  it("a scoped view names its scope in every source and shares the one list and log", () => {
    const host = new LoggingHost()
    const diagnostics = new Diagnostics(host, () => 1, 3)
    const v2 = diagnostics.scoped("v2")
    diagnostics.report("info", "phase1", "claimed 1")
    v2.report("info", "phase1", "claimed 2")
    v2.error("phase2", new Error("boom"))
    expect(diagnostics.recent().map((d) => `${d.source}: ${d.message}`)).toEqual(["phase1: claimed 1", "v2/phase1: claimed 2", "v2/phase2: boom"])
    expect(v2.recent()).toBe(diagnostics.recent())
    expect(host.logs.map((log) => log.message)).toEqual(["phase1: claimed 1", "v2/phase1: claimed 2", "v2/phase2: boom"])
    // The limit holds for the shared list, whichever view reported last.
    v2.report("warn", "phase1", "fourth")
    expect(diagnostics.recent().map((d) => d.message)).toEqual(["claimed 2", "boom", "fourth"])
  })
})
