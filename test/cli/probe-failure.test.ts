import { describe, expect, it } from "vitest"
import { errorReason, probeFailure } from "../../src/cli/probe-failure.js"

describe("why a probe of OpenCode failed", () => {
  it("says a probe stopped at its time limit timed out, even when it printed nothing", () => {
    const killed = Object.assign(new Error("Command failed: opencode models\n"), { killed: true })
    expect(probeFailure({ code: null, signal: "SIGTERM", timedOutAfterMs: 60_000, stdout: "", stderr: "", error: killed })).toBe("no answer within 60 s, so it was stopped")
    expect(probeFailure({ code: null, timedOutAfterMs: 60_000, stdout: "", stderr: "loading plugins\nmore" })).toBe("no answer within 60 s, so it was stopped; it printed: loading plugins")
  })

  it("gives the exit code, the signal or the first line printed, never an empty reason", () => {
    expect(probeFailure({ code: 3, stdout: "", stderr: "" })).toBe("exit 3, printing nothing")
    expect(probeFailure({ code: 1, stdout: "", stderr: "Error: no such provider\n  at x" })).toBe("exit 1: Error: no such provider")
    expect(probeFailure({ code: null, signal: "SIGKILL", stdout: "", stderr: "" })).toBe("ended by SIGKILL")
    expect(probeFailure({ code: 0, stdout: "", stderr: "" })).toBe("it ended without a word")
    expect(probeFailure({ code: null, stdout: "", stderr: "", error: Object.assign(new Error("spawn opencode ENOENT"), { code: "ENOENT" }) })).toBe("spawn opencode ENOENT")
  })

  it("reads an error's cause, and names an error with no message", () => {
    expect(errorReason(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:4096") }))).toBe("fetch failed (connect ECONNREFUSED 127.0.0.1:4096)")
    expect(errorReason(new RangeError(""))).toBe("RangeError with no message")
    expect(errorReason(undefined)).toBe("an unnamed error")
  })
})
