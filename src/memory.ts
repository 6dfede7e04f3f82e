// One memory instance per plugin instance. It owns every piece of state (options, paths, caches,
// the database handle, diagnostics), so two instances in one process never see each other's.
import fs from "node:fs"
import path from "node:path"
import { Diagnostics, errorMessage } from "./diagnostics.js"
import type { Host } from "./host.js"
import { parseOptions, type MemoryOptions } from "./options.js"
import { ReadPath, type SystemCall } from "./read/read-path.js"
import { loadReadPathTemplates } from "./read/render.js"
import { openDatabase } from "./store/database.js"
import type { SqlDatabase } from "./store/sqlite.js"
import { packageRoot } from "./util/package-root.js"
import { ENV_TEST_ROOT, memoryPaths, resolveHome, type MemoryPaths } from "./util/paths.js"

export const ENV_TEST_FAULTS = "OPENCODE_CODEX_MEMORY_TEST_FAULTS"

export interface MemoryDeps {
  host: Host
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  now?: () => number
  /** Folder holding `templates/` and `opencode.json`; found from the module's location by default. */
  packageDir?: string
}

export interface StoreState {
  status: "closed" | "opening" | "open" | "failed"
  driver?: string
  schemaVersion?: number
  error?: string
}

export class Memory {
  readonly options: MemoryOptions
  readonly warnings: readonly string[]
  readonly paths: MemoryPaths
  readonly diagnostics: Diagnostics
  readonly packageDir: string
  /** Hook names that fail on purpose; read from the environment only under a test root. */
  readonly faults: ReadonlySet<string>
  /** Sessions this instance started itself; they never get memory injected nor get extracted. */
  readonly helperSessions = new Set<string>()
  private readonly readPath: ReadPath
  private db: SqlDatabase | undefined
  private storeState: StoreState = { status: "closed" }
  private disposed = false

  constructor(rawOptions: unknown, private readonly deps: MemoryDeps) {
    const parsed = parseOptions(rawOptions)
    this.options = parsed.options
    this.warnings = [...parsed.warnings, ...unsupportedWarnings(parsed.options)]
    const home = resolveHome(this.options.home, deps.env, deps.homedir)
    // Memory V2 is not implemented yet, so every instance reads and writes the V1 layout.
    this.paths = memoryPaths(home.home, home.source, "v1")
    this.diagnostics = new Diagnostics(deps.host, deps.now)
    this.packageDir = deps.packageDir ?? packageRoot()
    this.faults = deps.env[ENV_TEST_ROOT] ? parseList(deps.env[ENV_TEST_FAULTS]) : new Set()
    this.readPath = new ReadPath({
      memoryRoot: this.paths.memoryRoot,
      summaryFile: this.paths.summary,
      dedicatedTools: this.options.dedicated_tools,
      templates: loadReadPathTemplates(path.join(this.packageDir, "templates")),
      isHelperSession: (id) => this.helperSessions.has(id),
      onRefuse: (reason) => this.diagnostics.report("warn", "read-path", reason),
    })
  }

  /** Start-up work, run after the host has finished loading plugins. Never throws. */
  async start(): Promise<void> {
    for (const warning of this.warnings) this.diagnostics.report("warn", "options", warning)
    try {
      this.prepareRoot()
      this.openStore()
    } catch (error) {
      this.diagnostics.error("startup", error)
    }
  }

  /** The memory block for one model call, or undefined when nothing is to be injected. */
  systemBlock(call: SystemCall): string | undefined {
    if (!this.options.use_memories || this.disposed) return undefined
    return this.readPath.blockFor(call)
  }

  /** Drop cached summary bytes after the plugin itself changed the summary. */
  invalidateReadPath(): void {
    this.readPath.invalidate()
  }

  store(): SqlDatabase | undefined {
    return this.db
  }

  storeStatus(): StoreState {
    return { ...this.storeState }
  }

  async dispose(): Promise<void> {
    this.disposed = true
    this.db?.close()
    this.db = undefined
    this.storeState = { status: "closed" }
    this.helperSessions.clear()
  }

  private prepareRoot(): void {
    const root = this.paths.memoryRoot
    const stat = fs.lstatSync(root, { throwIfNoEntry: false })
    if (stat?.isSymbolicLink()) throw new Error(`memory folder ${root} is a symlink; refusing to use it`)
    if (!stat) fs.mkdirSync(root, { recursive: true })
  }

  private openStore(): void {
    if (this.disposed) return
    this.storeState = { status: "opening" }
    try {
      const { db, migrated } = openDatabase(this.paths.db)
      if (this.disposed) return db.close()
      this.db = db
      this.storeState = { status: "open", driver: db.driver, schemaVersion: migrated.to }
      if (migrated.from !== migrated.to) {
        this.diagnostics.report("info", "store", `memory.db migrated from schema ${migrated.from} to ${migrated.to} (${db.driver})`)
      }
    } catch (error) {
      this.storeState = { status: "failed", error: errorMessage(error) }
      throw error
    }
  }
}

function unsupportedWarnings(options: MemoryOptions): string[] {
  const warnings: string[] = []
  if (options.version === "v2") warnings.push('option "version": Memory V2 is not available in this release yet; using v1')
  if (options.dual_write) warnings.push('option "dual_write": needs Memory V2, which is not available in this release yet; ignored')
  if (options.codex_interop.import || options.codex_interop.export) {
    warnings.push('option "codex_interop": Codex import and export are not available in this release yet; ignored')
  }
  return warnings
}

function parseList(value: string | undefined): ReadonlySet<string> {
  return new Set((value ?? "").split(",").map((item) => item.trim()).filter(Boolean))
}
