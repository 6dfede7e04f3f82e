import { describe, expect, it } from "vitest"
import { MemoryError } from "../../src/backend/errors.js"
import { inRange, nameTimestamp, parseTimeRange } from "../../src/backend/timestamps.js"

describe("nameTimestamp", () => {
  it("reads the UTC time a rollout summary or note name starts with", () => {
    expect(nameTimestamp("2026-03-14T09-22-15-aB3x-fix_auth.md")).toBe(Date.UTC(2026, 2, 14, 9, 22, 15))
    expect(nameTimestamp("2026-03-14T09-22-15.md")).toBe(Date.UTC(2026, 2, 14, 9, 22, 15))
  })

  it("ignores names that do not start with a valid timestamp", () => {
    for (const name of ["MEMORY.md", "note-2026-03-14T09-22-15.md", "2026-03-14.md", "2026-02-30T00-00-00-x.md", "2026-01-01T24-00-00-x.md"]) {
      expect(nameTimestamp(name), name).toBeUndefined()
    }
  })
})

describe("parseTimeRange", () => {
  it("is undefined when neither bound is given", () => {
    expect(parseTimeRange(undefined, undefined)).toBeUndefined()
  })

  it("reads a date as its whole UTC day, inclusive at both ends", () => {
    expect(parseTimeRange("2026-03-01", "2026-03-01")).toEqual({ from: Date.UTC(2026, 2, 1), to: Date.UTC(2026, 2, 2) - 1 })
  })

  it("reads date-times as instants, UTC unless they carry a zone", () => {
    const at = Date.UTC(2026, 2, 1, 14, 30, 0)
    expect(parseTimeRange("2026-03-01T14:30:00Z", undefined)?.from).toBe(at)
    expect(parseTimeRange("2026-03-01T14:30", undefined)?.from).toBe(at)
    expect(parseTimeRange("2026-03-01 14:30:00.250", undefined)?.from).toBe(at + 250)
    expect(parseTimeRange("2026-03-01T16:30:00+02:00", undefined)?.from).toBe(at)
    expect(parseTimeRange("2026-03-01T09:30:00-0500", undefined)?.from).toBe(at)
    // The file-name form, copied from a path, is accepted too.
    expect(parseTimeRange(undefined, "2026-03-01T14-30-00")?.to).toBe(at)
  })

  it("refuses what is not an ISO date, naming the argument and the expected form", () => {
    for (const bad of ["yesterday", "2026-3-1", "2026-13-01", "2026-02-29", "01/03/2026", ""]) {
      expect(() => parseTimeRange(bad, undefined), bad).toThrow(MemoryError)
    }
    expect(() => parseTimeRange(undefined, "soon")).toThrow(/until must be an ISO date/)
  })

  it("refuses a since later than until", () => {
    expect(() => parseTimeRange("2026-03-02", "2026-03-01")).toThrow(/later than until/)
  })

  it("keeps the times within the range", () => {
    const range = parseTimeRange("2026-03-01", "2026-03-02")!
    expect(inRange(range, Date.UTC(2026, 1, 28, 23, 59, 59))).toBe(false)
    expect(inRange(range, Date.UTC(2026, 2, 1))).toBe(true)
    expect(inRange(range, Date.UTC(2026, 2, 2, 23, 59, 59))).toBe(true)
    expect(inRange(range, Date.UTC(2026, 2, 3))).toBe(false)
  })
})
