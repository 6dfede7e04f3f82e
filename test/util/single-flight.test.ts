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
})
