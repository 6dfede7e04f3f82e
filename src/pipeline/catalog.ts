// memory.db as a plugin instance holds it: the catalog every version shares (session modes,
// version stamps, citation dedupe, cited files, the redaction audit). Opened once at start-up,
// closed at dispose; its state says, while it opens or after it failed, why memory is not there.
import type { Diagnostics } from "../diagnostics.js"
import { errorMessage } from "../diagnostics.js"
import { MemoryError } from "../backend/errors.js"
import { CheckpointStore } from "../store/checkpoint-store.js"
import { HomeInstances } from "../store/instances.js"
import { leaseOwners } from "../store/lease-owner.js"
import { SpendLedger } from "../store/ledger.js"
import { MemoryStore } from "../store/memory-store.js"
import { ConsolidationReviews } from "../store/reviews.js"
import { SessionCatalog } from "../store/session-catalog.js"
import { HomeSettings } from "../store/settings.js"
import type { OpenOptions } from "../store/database.js"
import { openReported } from "./open-store.js"

export interface StoreState {
  status: "closed" | "opening" | "open" | "failed"
  driver?: string
  schemaVersion?: number
  error?: string
}

export class Catalog {
  private current: MemoryStore | undefined
  private checkpointTable: CheckpointStore | undefined
  private extras: { settings: HomeSettings; ledger: SpendLedger; reviews: ConsolidationReviews; instances: HomeInstances; sessions: SessionCatalog } | undefined
  private status: StoreState = { status: "closed" }
  private closed = false
  private unavailableReason: string | undefined

  constructor(
    readonly file: string,
    private readonly deps: {
      now: () => number
      diagnostics: Diagnostics
      host?: string
      /** Opens the file with a driver; tests wrap it to inject faults (a full disk). */
      connect?: OpenOptions["connect"]
      /** What opening checks (store/database.ts); the command-line tool reads the header and schema only. */
      check?: OpenOptions["check"]
      /** Called by require() when the open failed: the owner tries again if a try is due. */
      reopen?: () => void
    },
  ) {}

  /** The catalog's tables, once open. */
  get store(): MemoryStore | undefined {
    return this.current
  }

  /** Session checkpoints (same file), once open. */
  get checkpoints(): CheckpointStore | undefined {
    return this.checkpointTable
  }

  /** The home-wide settings (pause), the spend ledger and the consolidation reviews, once open. */
  get settings(): HomeSettings | undefined {
    return this.extras?.settings
  }

  get ledger(): SpendLedger | undefined {
    return this.extras?.ledger
  }

  get reviews(): ConsolidationReviews | undefined {
    return this.extras?.reviews
  }

  /** The sessions the host's listings showed, with their activity (the `sessions` command). */
  get sessions(): SessionCatalog | undefined {
    return this.extras?.sessions
  }

  /** The plugin instances that have the home open (an import refuses to swap it under them). */
  get instances(): HomeInstances | undefined {
    return this.extras?.instances
  }

  state(): StoreState {
    return { ...this.status }
  }

  /** Opens the file (a no-op once closed, so a dispose before start-up wins). Throws after recording the failure. */
  open(): void {
    if (this.closed || this.current) return
    this.status = { status: "opening" }
    try {
      const { db, migrated } = openReported(this.file, { now: this.deps.now, ...(this.deps.connect ? { connect: this.deps.connect } : {}), ...(this.deps.check ? { check: this.deps.check } : {}) }, this.deps.diagnostics)
      this.current = new MemoryStore(db, this.deps.now)
      this.checkpointTable = new CheckpointStore(db, this.deps.now, this.deps.host)
      this.extras = {
        settings: new HomeSettings(db, this.deps.now),
        ledger: new SpendLedger(db, this.deps.now),
        reviews: new ConsolidationReviews(db, this.deps.now),
        instances: new HomeInstances(db, leaseOwners(), this.deps.now),
        sessions: new SessionCatalog(db, this.deps.now),
      }
      this.status = { status: "open", driver: db.driver, schemaVersion: migrated.to }
    } catch (error) {
      this.status = { status: "failed", error: errorMessage(error) }
      throw error
    }
  }

  /** Records why the file cannot be opened at all in this process (no SQLite driver), for tools to say. */
  unavailable(reason: string): void {
    if (!this.current) this.status = { status: "failed", error: reason }
    this.unavailableReason = reason
  }

  /** The store, or an error saying why it is not there, for a tool to show. */
  require(): MemoryStore {
    if (!this.current && this.status.status === "failed") this.deps.reopen?.()
    if (this.current) return this.current
    // Said to the model, not logged again: start-up logged it once.
    if (this.unavailableReason) throw new MemoryError("unavailable", `memory is off in this OpenCode process: ${this.unavailableReason}`)
    throw new Error(this.status.status === "failed" ? `the memory database could not be opened: ${this.status.error}` : "the memory database is still opening; try again in a moment")
  }

  close(): void {
    this.closed = true
    this.current?.db.close()
    this.current = undefined
    this.checkpointTable = undefined
    this.extras = undefined
    this.status = { status: "closed" }
  }
}
