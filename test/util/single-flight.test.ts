import { describe, expect, it } from "vitest"
import { SingleFlight } from "../../src/util/single-flight.js"

describe("SingleFlight", () => {
  it("refuses a second run while one is in flight, and allows one after", async () => {
    const flight = new SingleFlight<number>()
    let release: (n: number) => void = () => undefined
    const first = flight.run(() => new Promise<number>((resolve) => (release = resolve)))
    expect(first).toBeDefined()
    expect(flight.run(async () => 2)).toBeUndefined()
    release(1)
    expect(await first).toBe(1)
    expect(await flight.run(async () => 3)).toBe(3)
  })

  it("settles quietly after a failed run, and frees the slot", async () => {
    const flight = new SingleFlight<number>()
    const failing = flight.run(async () => {
      throw new Error("boom")
    })
    await expect(flight.settled()).resolves.toBeUndefined()
    await expect(failing).rejects.toThrow("boom")
    expect(flight.run(async () => 4)).toBeDefined()
  })

  it("runs a request made during a run once more right after it, however many were made", async () => {
    const flight = new SingleFlight<number>()
    const runs: string[] = []
    let release: () => void = () => undefined
    const first = flight.request(() => new Promise<number>((resolve) => {
      runs.push("first")
      release = () => resolve(1)
    }))
    expect(first).toBeDefined()
    expect(flight.request(async () => (runs.push("dropped"), 2))).toBeUndefined()
    expect(flight.request(async () => (runs.push("again"), 3))).toBeUndefined()
    release()
    await first
    await flight.settled()
    expect(runs).toEqual(["first", "again"])
    // A plain run leaves no rerun behind.
    expect(await flight.request(async () => (runs.push("later"), 4))).toBe(4)
    await flight.settled()
    expect(runs).toEqual(["first", "again", "later"])
  })
})
