import { describe, expect, it } from "vitest"
import { ReopenSchedule } from "../../src/pipeline/reopen-schedule.js"
import { UnsettledOutcomes } from "../../src/write/unsettled.js"

const full = () => {
  throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })
}

describe("outcomes a failed write left open", () => {
  it("are recorded at the next try when the write now works", () => {
    const outcomes = new UnsettledOutcomes()
    const done: string[] = []
    outcomes.add("extraction of ses_a", () => done.push("recorded"), () => done.push("given back"))
    expect(outcomes.settle(() => {})).toEqual({ recorded: 1, givenBack: 0 })
    expect(done).toEqual(["recorded"])
    expect(outcomes.size).toBe(0)
  })

  it("give the job back when recording still fails, and wait for the next try when that fails too", () => {
    const outcomes = new UnsettledOutcomes()
    const reports: string[] = []
    let giveBackWorks = false
    let givenBack = 0
    outcomes.add("extraction of ses_a", full, () => (giveBackWorks ? givenBack++ : full()))
    expect(outcomes.settle((message) => reports.push(message))).toEqual({ recorded: 0, givenBack: 0 })
    expect(outcomes.size).toBe(1)
    expect(reports).toEqual([
      "could not record the outcome of extraction of ses_a again (database or disk is full (SQLITE_FULL)); giving the job back",
      "could not give extraction of ses_a back yet (database or disk is full (SQLITE_FULL)); trying again at the next pass",
    ])
    giveBackWorks = true
    expect(outcomes.settle(() => {})).toEqual({ recorded: 0, givenBack: 1 })
    expect(givenBack).toBe(1)
    expect(outcomes.size).toBe(0)
  })

  it("keep the newest outcome of a job, and at most 64 in all, dropping the oldest", () => {
    const outcomes = new UnsettledOutcomes()
    const done: string[] = []
    outcomes.add("job", () => done.push("old"), () => {})
    outcomes.add("job", () => done.push("new"), () => {})
    outcomes.settle(() => {})
    expect(done).toEqual(["new"])
    for (let i = 0; i < 70; i++) outcomes.add(`job ${i}`, () => done.push(`job ${i}`), () => {})
    expect(outcomes.size).toBe(64)
    outcomes.settle(() => {})
    // The six oldest went unrecorded: their leases still end them.
    expect(done.slice(1, 3)).toEqual(["job 6", "job 7"])
    expect(done).toHaveLength(65)
  })
})

describe("when a database that could not be opened is tried again", () => {
  it("waits 30 s, then twice as long after each failure up to 10 minutes, and starts over after a success", () => {
    let now = 0
    const schedule = new ReopenSchedule(() => now)
    expect(schedule.due()).toBe(true)
    const waits: number[] = []
    for (let i = 0; i < 7; i++) {
      schedule.failed()
      const from = now
      while (!schedule.due()) now += 1_000
      waits.push((now - from) / 1_000)
    }
    expect(waits).toEqual([30, 60, 120, 240, 480, 600, 600])
    expect(schedule.failures).toBe(7)
    schedule.succeeded()
    expect(schedule.failures).toBe(0)
    schedule.failed()
    expect(schedule.due()).toBe(false)
    now += 30_000
    expect(schedule.due()).toBe(true)
  })
})
