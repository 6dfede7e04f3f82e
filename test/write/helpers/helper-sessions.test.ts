import { describe, expect, it } from "vitest"
import { deleteLeftoverHelpers, helperMetadata, helperTitle, isHelperSession } from "../../../src/write/helpers/helper-sessions.js"
import { leaseOwners } from "../../../src/store/lease-owner.js"
import { FakeHost } from "../../fakes/host.js"

const NOW = Date.UTC(2026, 10, 30, 12)
const MINUTE = 60_000

describe("helper sessions", () => {
  it("are recognised only by their title and their marker together", () => {
    const title = helperTitle("extract", "ses_abc")
    const metadata = helperMetadata("extract", "ses_abc", NOW)
    expect(isHelperSession({ title, metadata })).toBe(true)
    expect(isHelperSession({ title })).toBe(false)
    expect(isHelperSession({ title: "my own [codex-memory] notes", metadata })).toBe(false)
    expect(isHelperSession({ title: helperTitle("consolidate"), metadata: helperMetadata("consolidate", undefined, NOW) })).toBe(true)
  })

  it("leftovers of a process that is gone are deleted at once, whatever their age", async () => {
    const host = new FakeHost(() => NOW)
    const self = { pid: 100, boot: "boot-1" }
    const owners = leaseOwners({ self, exists: (pid) => pid !== 4242 })
    const dead = helperMetadata("extract", "ses_x", NOW, leaseOwners({ self: { pid: 4242, boot: "boot-1" } }))
    const alive = helperMetadata("extract", "ses_y", NOW, owners)
    host.addSession({ id: "ses_dead", title: helperTitle("extract", "ses_x"), metadata: dead, updatedAt: NOW - MINUTE })
    host.addSession({ id: "ses_alive", title: helperTitle("extract", "ses_y"), metadata: alive, updatedAt: NOW - MINUTE })
    expect(await deleteLeftoverHelpers(host, NOW, AbortSignal.timeout(1_000), owners)).toBe(1)
    expect(host.deleted).toEqual(["ses_dead"])
  })

  it("leftovers older than 90 minutes are deleted, younger ones and look-alikes are kept", async () => {
    const host = new FakeHost(() => NOW)
    const owners = leaseOwners({ self: { pid: 100, boot: "boot-1" }, exists: () => true })
    // Another process, on another boot: whether it lives cannot be told, so age decides.
    const mark = helperMetadata("extract", "ses_x", NOW, leaseOwners({ self: { pid: 200, boot: "boot-2" } }))
    host.addSession({ id: "ses_stale", title: helperTitle("extract", "ses_x"), metadata: mark, updatedAt: NOW - 91 * MINUTE })
    host.addSession({ id: "ses_fresh", title: helperTitle("extract", "ses_y"), metadata: mark, updatedAt: NOW - 30 * MINUTE })
    host.addSession({ id: "ses_user", title: helperTitle("extract", "ses_z"), updatedAt: NOW - 300 * MINUTE })
    expect(await deleteLeftoverHelpers(host, NOW, AbortSignal.timeout(1_000), owners)).toBe(1)
    expect(host.deleted).toEqual(["ses_stale"])
  })

  it("never deletes this process's own helpers, however old its clock makes them look", async () => {
    // Start-up's clean-up can list helpers a pass already started; a clock running ahead made
    // them stale, and the extraction failed (OpenCode: FOREIGN KEY constraint failed).
    const host = new FakeHost(() => NOW)
    const owners = leaseOwners({ self: { pid: 100, boot: "boot-1" }, exists: () => true })
    host.addSession({ id: "ses_mine", title: helperTitle("extract", "ses_x"), metadata: helperMetadata("extract", "ses_x", NOW, owners), updatedAt: NOW - 300 * MINUTE })
    expect(await deleteLeftoverHelpers(host, NOW, AbortSignal.timeout(1_000), owners)).toBe(0)
    expect(host.deleted).toEqual([])
  })
})
