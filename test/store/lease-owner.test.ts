import fs from "node:fs"
import { afterEach, describe, expect, it, vi } from "vitest"
import { currentOwner, isOwnerGone, leaseBoot, leaseOwners, processExists } from "../../src/store/lease-owner.js"
import { deadPid } from "./stage1-suite.js"

afterEach(() => vi.restoreAllMocks())

const self = { pid: 100, boot: "boot-a" }
const nobody = () => false

describe("isOwnerGone", () => {
  it("is true only for an owner on this boot whose process does not exist", () => {
    expect(isOwnerGone(200, "boot-a", self, nobody)).toBe(true)
    expect(isOwnerGone(200, "boot-a", self, () => true)).toBe(false)
    expect(isOwnerGone(BigInt(200), "boot-a", self, nobody)).toBe(true)
  })

  it("leaves an owner from another boot or machine to its lease, whatever its process id", () => {
    const exists = vi.fn(nobody)
    expect(isOwnerGone(200, "boot-b", self, exists)).toBe(false)
    expect(exists).not.toHaveBeenCalled()
  })

  it("never calls an unrecorded owner or a process id that is not a positive integer gone", () => {
    const exists = vi.fn(nobody)
    for (const pid of [null, undefined, 0, -1, 1.5, Number.NaN, "200", 2 ** 60]) expect(isOwnerGone(pid, "boot-a", self, exists)).toBe(false)
    expect(isOwnerGone(200, null, self, exists)).toBe(false)
    // 0 and -1 would address a process group or every process: never signalled.
    expect(exists).not.toHaveBeenCalled()
  })

  it("finds a real exited process gone and this process alive", () => {
    const here = currentOwner()
    expect(isOwnerGone(deadPid(), here.boot, here)).toBe(true)
    expect(isOwnerGone(process.pid, here.boot, here)).toBe(false)
  })
})

describe("processExists", () => {
  it("treats EPERM as a process that exists and only ESRCH as none", () => {
    const kill = vi.spyOn(process, "kill")
    kill.mockImplementationOnce(() => {
      throw Object.assign(new Error("kill EPERM"), { code: "EPERM" })
    })
    expect(processExists(1234)).toBe(true)
    kill.mockImplementationOnce(() => {
      throw Object.assign(new Error("kill ESRCH"), { code: "ESRCH" })
    })
    expect(processExists(1234)).toBe(false)
    expect(kill).toHaveBeenCalledWith(1234, 0)
  })
})

describe("leaseBoot", () => {
  it("names this boot the same way every time", () => {
    expect(leaseBoot()).toBe(leaseBoot())
    expect(currentOwner()).toEqual({ pid: process.pid, boot: leaseBoot() })
  })

  it.runIf(process.platform === "linux")("uses the kernel's boot id, qualified by the PID namespace", () => {
    const bootId = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    expect(leaseBoot()).toBe(`${bootId} ${fs.readlinkSync("/proc/self/ns/pid")}`)
  })

  it("falls back to the host name and the boot time to the minute without /proc", () => {
    vi.spyOn(fs, "readFileSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOENT"), { code: "ENOENT" })
    })
    expect(leaseBoot()).toMatch(/^host:.+ booted:\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/)
  })
})

describe("leaseOwners", () => {
  it("records the given owner and asks the given liveness check", () => {
    const owners = leaseOwners({ self, exists: (pid) => pid !== 300 })
    expect(owners.self).toBe(self)
    expect(owners.isGone(300, "boot-a")).toBe(true)
    expect(owners.isGone(301, "boot-a")).toBe(false)
  })
})
