import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { FOREIGN_INSTANCE_TTL_MS, HomeInstances } from "../../src/store/instances.js"
import { leaseOwners } from "../../src/store/lease-owner.js"

const START = 1_700_000_000_000
/** Linux boot strings: the kernel's boot id, then the PID namespace (leaseBoot). */
const BOOT = "9f0c2b1e-boot pid:[4026531836]"

/**
 * One home's memory.db and a clock. Each `instance` is one process on it: its own pid, boot and
 * host name, and its own view of which process ids exist (all of them unless listed as dead).
 */
function home() {
  const { db } = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-instances-")), "memory.db"))
  onTestFinished(() => db.close())
  const clock = { now: START }
  const instance = (pid: number, options: { boot?: string; host?: string; dead?: readonly number[] } = {}) =>
    new HomeInstances(
      db,
      leaseOwners({ self: { pid, boot: options.boot ?? BOOT }, exists: (candidate) => !(options.dead ?? []).includes(candidate) }),
      () => clock.now,
      options.host ?? "laptop",
    )
  const rows = () => Number(db.prepare("SELECT COUNT(*) AS n FROM plugin_instances").get<{ n: number }>()?.n ?? 0)
  return { clock, instance, rows }
}

describe("HomeInstances", () => {
  it("lists registered instances as live, in the order they started, until each unregisters", () => {
    const { clock, instance } = home()
    const first = instance(10)
    const second = instance(11)
    first.register("inst-first")
    clock.now += 1_000
    second.register("inst-second")
    const both = [
      { pid: 10, host: "laptop", startedAt: START, seenAt: START },
      { pid: 11, host: "laptop", startedAt: START + 1_000, seenAt: START + 1_000 },
    ]
    expect(first.live()).toEqual(both)
    expect(instance(12).live()).toEqual(both)

    first.unregister("inst-first")
    expect(second.live()).toEqual([both[1]])
    second.unregister("inst-second")
    expect(first.live()).toEqual([])
  })

  it("an instance that registers again keeps its start time and only moves the time it was last seen", () => {
    const { clock, instance } = home()
    const mine = instance(10)
    mine.register("inst-a")
    clock.now += 5_000
    mine.register("inst-a")
    expect(mine.live()).toEqual([{ pid: 10, host: "laptop", startedAt: START, seenAt: START + 5_000 }])
  })

  it("drops a registration whose process has exited on this boot", () => {
    const { instance, rows } = home()
    instance(10).register("inst-crashed")
    instance(11).register("inst-running")
    // OpenCode exited on SIGTERM without dispose: pid 10 no longer exists here.
    const observer = instance(12, { dead: [10] })
    expect(observer.live().map((live) => live.pid)).toEqual([11])
    // Dropped from the table, not only from the answer: even a view that thinks pid 10 exists sees nothing of it now.
    expect(rows()).toBe(1)
    expect(instance(13).live().map((live) => live.pid)).toEqual([11])
  })

  it("an instance that registers or passes by drops the rows of processes gone, never its own, so killed windows do not pile up", () => {
    const { instance, rows } = home()
    for (const pid of [20, 21, 22]) instance(pid).register(`inst-killed-${pid}`)
    instance(11).register("inst-running")
    expect(rows()).toBe(4)
    instance(12, { dead: [20, 21] }).register("inst-new")
    expect(rows()).toBe(3)
    instance(11, { dead: [22] }).touch("inst-running")
    expect(rows()).toBe(2)
    // Its own row stays whatever its view of its own pid says.
    instance(12, { dead: [11, 12] }).register("inst-new")
    expect(instance(13).live().map((live) => live.pid)).toEqual([12])
  })

  it("drops a registration from an earlier boot of this machine, whatever its process id", () => {
    // Linux names a boot by its boot id; elsewhere by the host name and the boot time.
    for (const [earlier, now] of [
      ["0a1b-old-boot pid:[4026531836]", BOOT],
      ["host:laptop booted:2026-01-01T08:00:00.000Z", "host:laptop booted:2026-01-02T09:00:00.000Z"],
    ]) {
      const { instance, rows } = home()
      instance(10, { boot: earlier }).register("inst-before-reboot")
      // Every pid reads as alive: only the boot says the row is stale.
      expect(instance(11, { boot: now }).live()).toEqual([])
      expect(rows()).toBe(0)
    }
  })

  it("takes boot times a minute apart for one boot, where boots are named by their time", () => {
    // leaseBoot() rounds the boot time to the minute: two processes of one boot can differ by one.
    const { instance } = home()
    instance(10, { boot: "host:laptop booted:2026-01-01T08:00:00.000Z" }).register("inst-same-boot")
    expect(instance(11, { boot: "host:laptop booted:2026-01-01T08:01:00.000Z" }).live().map((live) => live.pid)).toEqual([10])
  })

  it("counts an instance on the same boot in another PID namespace as live, though its pid cannot be checked from here", () => {
    const { clock, instance } = home()
    instance(10, { boot: "9f0c2b1e-boot pid:[4026532001]" }).register("inst-in-container")
    // A pid from another namespace looks dead from this one: it must not be asked.
    const observer = instance(11, { boot: BOOT, dead: [10] })
    expect(observer.live()).toEqual([{ pid: 10, host: "laptop", startedAt: START, seenAt: START }])
    // Like another machine's, it counts until a day without being seen.
    clock.now = START + FOREIGN_INSTANCE_TTL_MS
    expect(observer.live().map((live) => live.pid)).toEqual([10])
    clock.now += 1
    expect(observer.live()).toEqual([])
  })

  it("counts another machine's instance until a day after it was last seen", () => {
    const { clock, instance, rows } = home()
    const remote = instance(10, { boot: "77aa-desktop-boot pid:[4026531836]", host: "desktop" })
    remote.register("inst-remote")
    // Nothing about another machine's pids or boots can be checked here.
    const local = instance(11, { dead: [10] })
    clock.now = START + FOREIGN_INSTANCE_TTL_MS - 1
    expect(local.live().map((live) => live.host)).toEqual(["desktop"])

    // A background pass there keeps it counting.
    remote.touch("inst-remote")
    const seenAt = clock.now
    clock.now = seenAt + FOREIGN_INSTANCE_TTL_MS
    expect(local.live()).toEqual([{ pid: 10, host: "desktop", startedAt: START, seenAt }])
    clock.now += 1
    expect(local.live()).toEqual([])
    expect(rows()).toBe(0)
  })
})
