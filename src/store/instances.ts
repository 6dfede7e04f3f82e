// Which plugin instances have this home open. Each instance that runs memory registers itself in
// memory.db when it opens the home and removes itself at dispose; an import reads the list and
// refuses to swap the databases under a live one, which would go on writing into the old file.
// OpenCode 1.18 exits on SIGTERM without dispose, so a row can outlive its process: the lease
// owners' rule (lease-owner.ts) tells a dead process of this boot, and a row from an earlier boot
// of this machine (same host name, other boot) is gone too. A row from another machine sharing the
// home counts until it has not been seen for a day. Such rows are dropped by whichever instance
// registers or runs a background pass next, so they do not pile up over months of killed windows.
import os from "node:os"
import type { LeaseOwners } from "./lease-owner.js"
import type { SqlDatabase } from "./sqlite.js"

/** A registration from another machine that has not been seen for this long no longer counts. */
export const FOREIGN_INSTANCE_TTL_MS = 24 * 60 * 60 * 1000

export interface LiveInstance {
  pid: number
  host: string
  startedAt: number
  seenAt: number
}

interface Row {
  instance_id: string
  pid: number
  boot: string
  host: string
  started_at: number
  seen_at: number
}

export class HomeInstances {
  constructor(
    readonly db: SqlDatabase,
    private readonly owners: LeaseOwners,
    private readonly now: () => number = Date.now,
    private readonly hostname: string = os.hostname(),
  ) {}

  register(instanceId: string): void {
    const now = this.now()
    this.db
      .prepare(
        `INSERT INTO plugin_instances (instance_id, pid, boot, host, started_at, seen_at) VALUES ($id, $pid, $boot, $host, $now, $now)
         ON CONFLICT (instance_id) DO UPDATE SET seen_at = excluded.seen_at`,
      )
      .run({ id: instanceId, pid: this.owners.self.pid, boot: this.owners.self.boot, host: this.hostname, now })
    // A process killed without dispose never removes its row: whoever registers or passes by does.
    this.prune(instanceId)
  }

  /** A background pass ran: the registration is fresh (what keeps another machine's row counting). */
  touch(instanceId: string): void {
    this.db.prepare("UPDATE plugin_instances SET seen_at = $now WHERE instance_id = $id").run({ id: instanceId, now: this.now() })
    this.prune(instanceId)
  }

  /** Drops the rows whose process is known to be gone (see the header), but the caller's own; returns how many. */
  prune(own?: string): number {
    let dropped = 0
    for (const row of this.db.prepare("SELECT * FROM plugin_instances").all<Row>()) {
      if (row.instance_id !== own && this.gone(row)) dropped += this.db.prepare("DELETE FROM plugin_instances WHERE instance_id = $id").run({ id: row.instance_id }).changes
    }
    return dropped
  }

  unregister(instanceId: string): void {
    this.db.prepare("DELETE FROM plugin_instances WHERE instance_id = $id").run({ id: instanceId })
  }

  /**
   * Registrations whose process may still be running. Rows known to be gone are dropped on the way,
   * unless `prune` is false (a check that promises to change nothing).
   */
  live(options: { prune?: boolean } = {}): LiveInstance[] {
    const live: LiveInstance[] = []
    for (const row of this.db.prepare("SELECT * FROM plugin_instances ORDER BY started_at, instance_id").all<Row>()) {
      if (this.gone(row)) {
        if (options.prune !== false) this.db.prepare("DELETE FROM plugin_instances WHERE instance_id = $id").run({ id: row.instance_id })
        continue
      }
      live.push({ pid: Number(row.pid), host: row.host, startedAt: Number(row.started_at), seenAt: Number(row.seen_at) })
    }
    return live
  }

  private gone(row: Row): boolean {
    if (this.owners.isGone(row.pid, row.boot)) return true
    if (row.boot === this.owners.self.boot) return false
    // Another boot of this machine: whatever ran then has stopped. The same boot in another PID
    // namespace (a container) cannot be checked from here, so it counts like another machine.
    if (row.host === this.hostname && otherBoot(row.boot, this.owners.self.boot)) return true
    return this.now() - Number(row.seen_at) > FOREIGN_INSTANCE_TTL_MS
  }
}

/** Boot times a minute apart may be one boot (leaseBoot rounds them): only more counts as another. */
const BOOT_TIME_SLACK_MS = 2 * 60_000

/**
 * Whether two boot names are surely different boots of one machine: Linux boot ids differ (the PID
 * namespace leaseBoot() appends aside), or, where boots are named by their time, the times are
 * further apart than the rounding could make them.
 */
function otherBoot(a: string, b: string): boolean {
  const timeA = bootTime(a)
  const timeB = bootTime(b)
  if (timeA !== undefined || timeB !== undefined) return timeA !== undefined && timeB !== undefined && Math.abs(timeA - timeB) > BOOT_TIME_SLACK_MS
  return (a.split(" ")[0] ?? a) !== (b.split(" ")[0] ?? b)
}

function bootTime(boot: string): number | undefined {
  const match = /^host:.* booted:(\S+)$/.exec(boot)
  const at = match ? Date.parse(match[1]!) : Number.NaN
  return Number.isFinite(at) ? at : undefined
}
