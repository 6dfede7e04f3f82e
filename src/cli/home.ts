// Opening a memory home from the command line, on the same core as the plugin: the options come
// from OpenCode's global config (the plugin's entry), `--home` overrides the home, and the home
// resolves exactly as the plugin resolves it. Databases are checked before the core opens them,
// so a damaged file is reported instead of being moved aside as the plugin would. The checks read
// the header and the schema, never every page (store/database.ts): damage met later is reported
// the same way (run.ts), and `doctor` runs SQLite's full integrity check.
import fs from "node:fs"
import { Memory } from "../memory.js"
import { parseOptions } from "../options.js"
import { headerCheck } from "../store/database.js"
import { MIGRATIONS, V2_MIGRATIONS } from "../store/migrations.js"
import { corruptionReason } from "../store/recovery.js"
import { NoSqliteDriverError, openSqlite } from "../store/sqlite.js"
import { ENV_HOME, ENV_TEST_ROOT, memoryPaths, resolveHome, type MemoryPaths } from "../util/paths.js"
import { cliHost } from "./cli-host.js"
import { CliError } from "./errors.js"
import { pluginEntry, readGlobalConfig, type GlobalConfig } from "./opencode-config.js"

export interface CliEnv {
  env: Readonly<Record<string, string | undefined>>
  homedir: string
  /** Where templates/ and opencode.json are; found from the module by default. */
  packageDir?: string
  now?: () => number
}

export interface HomeTarget {
  home: string
  source: string
  /** The plugin's options from the config, with --home applied. */
  rawOptions: Record<string, unknown>
  config: GlobalConfig
  env: Readonly<Record<string, string | undefined>>
}

/** Where the home is, without touching it. */
export function locateHome(cli: CliEnv, homeFlag: string | undefined): HomeTarget {
  const config = readGlobalConfig(cli.env, cli.homedir)
  const rawOptions = { ...(pluginEntry(config.config, undefined, config.file)?.options ?? {}) }
  let env = cli.env
  if (homeFlag !== undefined) {
    if (!homeFlag.trim()) throw new CliError("usage", "--home needs a folder")
    rawOptions.home = homeFlag
    // --home names the home outright: nothing else picks it.
    env = { ...cli.env, [ENV_TEST_ROOT]: undefined, [ENV_HOME]: undefined }
  }
  const { options } = parseOptions(rawOptions)
  const resolved = resolveHome(options.home, env, cli.homedir)
  return { home: resolved.home, source: resolved.source, rawOptions, config, env }
}

export function homeExists(target: HomeTarget): boolean {
  return fs.existsSync(memoryPaths(target.home, "option", "v1").db)
}

export interface OpenHome {
  memory: Memory
  target: HomeTarget
  paths: MemoryPaths
  close(): Promise<void>
}

export interface OpenOptions {
  /** Allows a home that does not exist yet. */
  create?: boolean
  /** How to ask OpenCode whether a session exists (mode and forget check unknown ids). */
  sessionExists?: (sessionId: string) => Promise<boolean>
}

/** Opens the home's databases through the core. */
export function openHome(cli: CliEnv, homeFlag: string | undefined, options: OpenOptions = {}): OpenHome {
  const target = locateHome(cli, homeFlag)
  if (!options.create && !homeExists(target)) {
    throw new CliError("no_home", `no memory home at ${target.home} (from ${target.source}); it is created when OpenCode runs with the plugin, or pass --home`)
  }
  for (const version of ["v1", "v2"] as const) checkDatabase(memoryPaths(target.home, "option", version).db, version === "v1" ? MIGRATIONS.length : V2_MIGRATIONS.length)
  const memory = new Memory(target.rawOptions, {
    host: cliHost(),
    env: target.env,
    homedir: cli.homedir,
    passive: true,
    databaseCheck: "header",
    ...(cli.packageDir ? { packageDir: cli.packageDir } : {}),
    ...(cli.now ? { now: cli.now } : {}),
    ...(options.sessionExists ? { sessionExists: options.sessionExists } : {}),
  })
  if (!memory.openStores()) {
    const error = memory.catalog.state().error ?? "unknown error"
    void memory.dispose()
    // Damage past the header and schema, met while the core opened it: reported like the check's.
    if (corruptionReason(new Error(error))) throw new CliError("corrupt_database", `memory.db is damaged (${error}); run \`opencode-codex-memory doctor\`. OpenCode with the plugin moves a damaged database aside and starts a new one`)
    throw new CliError("io", `memory.db could not be opened: ${error}`)
  }
  return { memory, target, paths: memory.paths, close: () => memory.dispose() }
}

/** Runs `fn` on the opened home and always closes it again. */
export async function withHome<T>(cli: CliEnv, homeFlag: string | undefined, fn: (home: OpenHome) => Promise<T>, options: OpenOptions = {}): Promise<T> {
  const home = openHome(cli, homeFlag, options)
  try {
    return await fn(home)
  } finally {
    await home.close()
  }
}

/**
 * A database that exists must have a readable header and schema, of a version this build knows.
 * Checked on a connection of its own, read-only in effect: nothing is migrated or moved.
 */
export function checkDatabase(file: string, knownSchema: number): void {
  if (!fs.existsSync(file)) return
  let db: ReturnType<typeof openSqlite> | undefined
  try {
    db = openSqlite(file)
    headerCheck(db)
    const version = Number(db.prepare("PRAGMA user_version").get<{ user_version: number }>()?.user_version ?? 0)
    if (version > knownSchema) throw new CliError("newer_database", `${file} has schema ${version}, newer than this tool knows (${knownSchema}); update opencode-codex-memory`)
  } catch (error) {
    if (error instanceof CliError) throw error
    // No driver says nothing about the file: the message names what to install.
    if (error instanceof NoSqliteDriverError) throw new CliError("no_sqlite_driver", error.message)
    const corrupt = corruptionReason(error)
    if (corrupt) throw new CliError("corrupt_database", `${file} is not a readable database (${corrupt}); run \`opencode-codex-memory doctor\`. OpenCode with the plugin moves a damaged database aside and starts a new one`)
    throw new CliError("io", `${file} could not be opened: ${(error as Error).message}`)
  } finally {
    db?.close()
  }
}
