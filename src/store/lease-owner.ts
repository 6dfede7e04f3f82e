// Who holds a job lease. OpenCode 1.18.33 exits on SIGTERM without calling `dispose`, so a closed
// window can leave a running job behind; its lease would keep every other process out for an hour.
// A claim therefore records its owner (process id and boot), and a lease whose owner process is
// known to be gone is taken over at once. "Known" is the point: only an owner on this very boot of
// this machine, in this PID namespace, can be checked, so any other owner is left to its lease.
import fs from "node:fs"
import os from "node:os"

export interface LeaseOwner {
  readonly pid: number
  /** This machine's boot, as leaseBoot() names it: equal strings mean pids can be compared. */
  readonly boot: string
}

export interface LeaseOwners {
  /** The owner this process records on its claims. */
  readonly self: LeaseOwner
  /** True only when the recorded owner is known to be gone (isOwnerGone). */
  isGone(pid: unknown, boot: unknown): boolean
}

/** The fallback's boot time is rounded to this, so processes of one boot compute the same name. */
const BOOT_ROUNDING_MS = 60_000

/**
 * Names this boot of this machine. On Linux: the kernel's boot id, qualified by the PID namespace,
 * because containers on one host share the boot id but not their process ids (a pid from another
 * container looks dead from here). Elsewhere: the host name and the boot time to the minute. A
 * fallback that straddles a minute in two processes only makes each see the other as another
 * machine, which waits for the lease to expire: a wrong name costs time, never a live lease.
 */
export function leaseBoot(): string {
  const bootId = readTrimmed("/proc/sys/kernel/random/boot_id")
  if (bootId) {
    const namespace = readLink("/proc/self/ns/pid")
    return namespace ? `${bootId} ${namespace}` : bootId
  }
  const bootedAt = Math.round((Date.now() - os.uptime() * 1000) / BOOT_ROUNDING_MS) * BOOT_ROUNDING_MS
  return `host:${os.hostname()} booted:${new Date(bootedAt).toISOString()}`
}

/** The current process as a lease owner. Reads the boot once per call; callers keep the result. */
export function currentOwner(): LeaseOwner {
  return { pid: process.pid, boot: leaseBoot() }
}

/** Whether a process with this id exists here: signal 0 checks without sending anything. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else. Only ESRCH says there is no such process.
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/**
 * True only when the owner was recorded on this boot (same boot string) and no process with its
 * id exists. Rows from before owners were recorded, other machines or boots, and ids that are not
 * positive integers (0 and -1 would address process groups) are never gone. A pid reused by an
 * unrelated process reads as alive: the lease then simply runs out, as before.
 */
export function isOwnerGone(pid: unknown, boot: unknown, self: LeaseOwner, exists: (pid: number) => boolean = processExists): boolean {
  const id = typeof pid === "bigint" ? Number(pid) : pid
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0) return false
  if (typeof boot !== "string" || boot !== self.boot) return false
  return !exists(id)
}

/** The owners seam the job classes take: the real process by default, a fake one in tests. */
export function leaseOwners(options: { self?: LeaseOwner; exists?: (pid: number) => boolean } = {}): LeaseOwners {
  const self = options.self ?? currentOwner()
  const exists = options.exists ?? processExists
  return { self, isGone: (pid, boot) => isOwnerGone(pid, boot, self, exists) }
}

function readTrimmed(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8").trim() || undefined
  } catch {
    return undefined
  }
}

function readLink(file: string): string | undefined {
  try {
    return fs.readlinkSync(file)
  } catch {
    return undefined
  }
}
