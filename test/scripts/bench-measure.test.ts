// How `npm run bench` prints a figure: a ratio always names its same-run baseline, an absolute
// value always carries its unit and target, and either can fail the run.
import { describe, expect, it } from "vitest"
import { describeCheck, passes } from "../../scripts/bench/measure.js"

describe("bench checks", () => {
  it("prints a ratio with the baseline it was measured against", () => {
    const check = { kind: "ratio", what: "hook per call", ratio: 1.234, baseline: "a bare fs.statSync", max: 3 } as const
    expect(describeCheck(check)).toBe("hook per call: ratio 1.23x against a bare fs.statSync, measured in this run (target: at most 3x)")
    expect(passes(check)).toBe(true)
    expect(passes({ ...check, ratio: 3.01 })).toBe(false)
  })

  it("prints an absolute value as absolute, with its unit and its target beside it", () => {
    const slow = { kind: "absolute", what: "median pass", value: 251.25, unit: "ms", max: 250 } as const
    expect(describeCheck(slow)).toBe("median pass: absolute 251.3 ms (target: at most 250 ms)")
    expect(passes(slow)).toBe(false)
    const throughput = { kind: "absolute", what: "throughput", value: 21, unit: "MB/s", min: 20 } as const
    expect(describeCheck(throughput)).toBe("throughput: absolute 21.0 MB/s (target: at least 20 MB/s)")
    expect(passes(throughput)).toBe(true)
    expect(passes({ ...throughput, value: 19.9 })).toBe(false)
  })

  it("fails on a condition that does not hold, whatever the timings", () => {
    expect(passes({ kind: "condition", what: "identical answers", holds: false })).toBe(false)
    expect(describeCheck({ kind: "condition", what: "identical answers", holds: false })).toBe("identical answers: NO")
  })
})
