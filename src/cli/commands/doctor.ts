// doctor: the checks a support question starts with, each with what to do when it fails. Read-only
// except for a probe file in the home that is removed again.
import { execFile, spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import { createRequire } from "node:module"
import path from "node:path"
import { readCommit, resolveRef } from "isomorphic-git"
import { installAdvice, loadDriver, NoSqliteDriverError, type DriverName, type SqlDatabase } from "../../store/sqlite.js"
import { packageRoot } from "../../util/package-root.js"
import { memoryPaths } from "../../util/paths.js"
import { bundledAgents } from "../../write/helpers/bundled-agents.js"
import { describeIgnoredAgentKeys, TUNABLE_AGENT_KEYS } from "../../write/helpers/helper-agents.js"
import type { Command } from "../command.js"
import { EXIT } from "../errors.js"
import { locateHome, type HomeTarget } from "../home.js"
import { parseOptions } from "../../options.js"
import { pluginEntry } from "../opencode-config.js"
import { probeOpencode2, type Opencode2Probe } from "../opencode2-probe.js"
import { errorReason, probeFailure, type ProbeRun } from "../probe-failure.js"
import { EXTRACT_AGENT } from "../../write/phase1/extraction-job.js"
import { unknownModelMessage } from "../../write/helpers/model-check.js"

export interface Check {
  name: string
  ok: boolean
  detail: string
  fix?: string
}

const SUPPORTED = "OpenCode 1.18 or later 1.x, or OpenCode 2"

export const doctorCommand: Command = {
  name: "doctor",
  usage: "doctor [--home DIR] [--opencode PATH] [--text]",
  summary: "check the home, the databases, the git baselines, the config and the OpenCode version",
  flags: { opencode: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    const target = locateHome(cli, args.values.home as string | undefined)
    const driver = sqliteDriver()
    const binary = (args.values.opencode as string | undefined) ?? "opencode"
    const { line, ...version } = opencodeVersion(binary, target.env)
    // Asked of OpenCode itself, headless and without a model: only when it runs at all.
    const asked = !version.ok ? [] : line === 2 ? [await askOpencode2(binary, target, cli.homedir)] : await Promise.all([pluginLoaded(binary, target), helperModels(binary, target)])
    const checks: Check[] = [
      driver.check,
      homeWritable(target),
      ...databases(target, driver.open),
      ...(await baselines(target)),
      pluginConfigured(target, line),
      ...pluginOptions(target),
      helperAgents(target, cli.packageDir ?? packageRoot()),
      version,
      ...asked.flat(),
    ]
    const ok = checks.every((check) => check.ok)
    const text = checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}${c.ok || !c.fix ? "" : `\n     fix: ${c.fix}`}`).join("\n")
    return { json: { ok, home: target.home, checks }, text, exit: ok ? EXIT.OK : EXIT.FAILED }
  },
}

function homeWritable(target: HomeTarget): Check {
  const name = "home writable"
  if (!fs.existsSync(target.home)) return { name, ok: false, detail: `${target.home} does not exist (from ${target.source})`, fix: "start OpenCode with the plugin once, or create the folder" }
  const probe = path.join(target.home, `.doctor-${process.pid}`)
  try {
    fs.writeFileSync(probe, "", { flag: "wx" })
    fs.rmSync(probe)
    return { name, ok: true, detail: target.home }
  } catch (error) {
    return { name, ok: false, detail: `${target.home}: ${(error as Error).message}`, fix: "make the folder writable by your user, or set the plugin's home option" }
  }
}

/** Which SQLite driver this Node loads (the CLI's, not OpenCode's: OpenCode runs the plugin on Bun's own). */
function sqliteDriver(): { check: Check; open: ((file: string) => SqlDatabase) | undefined } {
  const name = "SQLite driver"
  try {
    const { driver, open } = loadDriver()
    return { check: { name, ok: true, detail: `${driver} (${driverVersion(driver)}, Node ${process.versions.node})` }, open }
  } catch (error) {
    const detail = error instanceof NoSqliteDriverError ? `none loads under Node ${process.versions.node}: ${error.tried.map((t) => `${t.driver}: ${t.reason}`).join("; ")}` : (error as Error).message
    return { check: { name, ok: false, detail, fix: installAdvice() }, open: undefined }
  }
}

function driverVersion(driver: DriverName): string {
  if (driver === "better-sqlite3") {
    try {
      return `better-sqlite3 ${(createRequire(import.meta.url)("better-sqlite3/package.json") as { version: string }).version}`
    } catch {
      return "version unknown"
    }
  }
  return driver === "node:sqlite" ? "built into Node" : "built into Bun"
}

function databases(target: HomeTarget, open: ((file: string) => SqlDatabase) | undefined): Check[] {
  return (["v1", "v2"] as const).flatMap((version) => {
    const file = memoryPaths(target.home, "option", version).db
    const name = `${path.basename(file)} integrity`
    if (!fs.existsSync(file)) return version === "v1" ? [{ name, ok: false, detail: `${file} does not exist`, fix: "start OpenCode with the plugin once; it creates the database" }] : []
    // Without a driver nothing can be said about the file, and it must not be called damaged.
    if (!open) return [{ name, ok: false, detail: `${file} not checked: no SQLite driver loads (see above)`, fix: installAdvice() }]
    let db: SqlDatabase | undefined
    try {
      db = open(file)
      const rows = db.prepare("PRAGMA integrity_check").all<{ integrity_check: string }>()
      const ok = rows.length === 1 && rows[0]!.integrity_check === "ok"
      return [{ name, ok, detail: ok ? "ok" : rows.map((row) => row.integrity_check).slice(0, 3).join("; "), fix: "quit OpenCode and start it again: the plugin moves a damaged database aside (memory.db.corrupt-<time>) and starts a new one; `export` first what can still be read" }]
    } catch (error) {
      return [{ name, ok: false, detail: (error as Error).message, fix: "quit OpenCode and start it again: the plugin moves a damaged database aside and starts a new one" }]
    } finally {
      db?.close()
    }
  })
}

async function baselines(target: HomeTarget): Promise<Check[]> {
  const checks: Check[] = []
  for (const version of ["v1", "v2"] as const) {
    const root = memoryPaths(target.home, "option", version).memoryRoot
    const name = `${path.basename(root)}/ git baseline`
    if (!fs.existsSync(path.join(root, ".git"))) {
      if (fs.existsSync(root)) checks.push({ name, ok: true, detail: "none yet (made by the first consolidation)" })
      continue
    }
    try {
      const oid = await resolveRef({ fs, dir: root, ref: "HEAD" })
      const commit = await readCommit({ fs, dir: root, oid })
      checks.push({ name, ok: true, detail: `HEAD ${oid.slice(0, 12)}, ${new Date(commit.commit.committer.timestamp * 1000).toISOString()}` })
    } catch (error) {
      checks.push({ name, ok: false, detail: (error as Error).message, fix: `delete ${path.join(root, ".git")}: the next consolidation makes a new baseline from the folder` })
    }
  }
  return checks
}

/** The config entry that lists the plugin, as each line writes it. */
function entryAdvice(line: 1 | 2 | undefined, file: string): string {
  const v1 = `add "opencode-codex-memory" to the "plugin" list of ${file}`
  const v2 = `run \`opencode plugin add opencode-codex-memory\`, or add {"package": "opencode-codex-memory", "options": {}} to the "plugins" list of ${file}`
  return line === 2 ? v2 : line === 1 ? v1 : `${v1} (OpenCode 1.x), or ${v2} (OpenCode 2)`
}

function pluginConfigured(target: HomeTarget, line: 1 | 2 | undefined): Check {
  const name = "plugin in OpenCode's global config"
  const { file, config, error } = target.config
  const where = file ?? "~/.config/opencode/opencode.json"
  // The helper sessions run in the memory folder, another project, so a project config is not enough.
  if (!file) return { name, ok: false, detail: "no global OpenCode config found", fix: `${entryAdvice(line, where)}; a project config is not enough, the helper sessions run in the memory folder` }
  if (!config) return { name, ok: false, detail: `${file} could not be read: ${error ?? "unknown error"}`, fix: "fix the JSON of that file" }
  const entry = pluginEntry(config, undefined, file)
  if (!entry) return { name, ok: false, detail: `${file} does not list opencode-codex-memory`, fix: entryAdvice(line, file) }
  // Each line reads only its own list: OpenCode 2 ignores `plugin`, OpenCode 1.x `plugins`.
  if (line && entry.line !== line) {
    const list = entry.line === 1 ? '"plugin"' : '"plugins"'
    return { name, ok: false, detail: `${file}: ${entry.spec} is in the ${list} list, which OpenCode ${line === 2 ? "2" : "1.x"} does not read`, fix: entryAdvice(line, file) }
  }
  return { name, ok: true, detail: `${file}: ${entry.spec} (${entry.line === 2 ? '"plugins", OpenCode 2' : '"plugin", OpenCode 1.x'})` }
}

/**
 * OpenCode 2's own answers (opencode2-probe.ts): whether it loaded the plugin, whether it refused
 * any of its registrations, and whether the helper models are among the models it offers.
 */
async function askOpencode2(binary: string, target: HomeTarget, homedir: string): Promise<Check[]> {
  const entry = target.config.config ? pluginEntry(target.config.config, undefined, target.config.file) : undefined
  if (!entry) return []
  const name = "plugin loaded by OpenCode"
  let probe: Opencode2Probe
  try {
    probe = await probeOpencode2(binary, target.env, homedir)
  } catch (error) {
    return [{ name, ok: false, detail: `could not ask OpenCode 2: ${errorReason(error)}`, fix: `run \`${binary} serve --print-logs\` yourself to see why; pass --opencode PATH for another binary` }]
  }
  const checks: Check[] = []
  const asked = probe.source === "service" ? "the running OpenCode service" : "a private OpenCode started for this check"
  if (!probe.plugin) {
    checks.push({
      name,
      ok: false,
      detail: `${asked} did not load it${probe.others.length ? ` (it loaded ${probe.others.join(", ")})` : ""}: OpenCode 2 drops a plugin it cannot install or resolve without a log line`,
      fix: entry.spec.startsWith("/") || entry.spec.startsWith("file:") || entry.spec.startsWith(".")
        ? `${JSON.stringify(entry.spec)} must be a folder holding index.js and tui.js (a checkout after \`npm install\`, or an installed package's folder); then run doctor again`
        : `OpenCode could not install ${JSON.stringify(entry.spec)}: check that the package and version exist (\`npm view ${entry.spec}\`) and that npm reaches its registry, or point the entry at an installed copy's folder; then run doctor again`,
    })
  } else if (probe.plugin.status !== "active") {
    checks.push({ name, ok: false, detail: `${asked} lists it as ${probe.plugin.status}${probe.plugin.error ? `: ${probe.plugin.error}` : ""}`, fix: "run `opencode plugin list`, then `opencode serve --print-logs` to see why" })
  } else {
    const parts = Object.entries(probe.plugin.features).filter(([, on]) => on).map(([part]) => part)
    checks.push({ name, ok: true, detail: `${entry.spec}: loaded by ${asked} (${parts.join(" and ") || "no parts"})` })
    const failed = probe.registrations?.failed ?? []
    checks.push(
      probe.registrations
        ? failed.length
          ? { name: "plugin registrations", ok: false, detail: `OpenCode refused ${failed.map((f) => `${f.name} (${f.message})`).join("; ")}; memory runs without ${failed.length === 1 ? "it" : "them"}`, fix: "update opencode-codex-memory; if it persists, report the OpenCode version and this line" }
          : { name: "plugin registrations", ok: true, detail: `all in place: ${probe.registrations.registered.join(", ")}` }
        : { name: "plugin registrations", ok: false, detail: "the plugin's status call did not answer", fix: "update opencode-codex-memory; run `opencode serve --print-logs` to see its errors" },
    )
  }
  const { options } = parseOptions(entry.options)
  const config = target.config.config
  const wanted = [
    { option: "extract_model", id: options.extract_model ?? stringOf(config?.small_model), fallback: "small_model" },
    { option: "consolidation_model", id: options.consolidation_model ?? stringOf(config?.model), fallback: "model" },
  ].filter((w): w is { option: string; id: string; fallback: string } => w.id !== undefined)
  const problems = wanted.flatMap((w) => {
    const option = options[w.option as "extract_model" | "consolidation_model"] ? w.option : `OpenCode's ${w.fallback} (used while ${w.option} is not set)`
    const message = unknownModelMessage(w.id, probe.models, option)
    return message ? [message] : []
  })
  if (wanted.length && probe.models.length) {
    checks.push(
      problems.length
        ? { name: "helper models", ok: false, detail: problems.join("; "), fix: `set the plugin's extract_model / consolidation_model in ${target.config.file ?? "OpenCode's global config"} to models \`opencode models\` lists; until then learning fails and the model is paused for an hour at a time` }
        : { name: "helper models", ok: true, detail: wanted.map((w) => `${w.option}: ${w.id}`).join(", ") },
    )
  }
  return checks
}

/** The options the config gives the plugin, read as the plugin reads them: each warning is a check that fails. */
function pluginOptions(target: HomeTarget): Check[] {
  const entry = target.config.config ? pluginEntry(target.config.config, undefined, target.config.file) : undefined
  if (!entry) return []
  const name = "plugin options"
  const { warnings } = parseOptions(entry.options)
  if (!warnings.length) return [{ name, ok: true, detail: Object.keys(entry.options).length ? `${Object.keys(entry.options).join(", ")}: no warnings` : "defaults" }]
  return [{ name, ok: false, detail: warnings.join("; "), fix: `correct or remove these options in the plugin entry of ${target.config.file}; the plugin uses the defaults instead meanwhile` }]
}

function helperAgents(target: HomeTarget, packageDir: string): Check {
  const name = "helper agents"
  try {
    const agents = bundledAgents(packageDir, memoryPaths(target.home, "option", "v1").memoryRoot)
    const notDenyFirst = ["memorize", "memorize-extract"].filter((id) => (agents[id]?.permission as Record<string, unknown> | undefined)?.["*"] !== "deny")
    if (notDenyFirst.length) return { name, ok: false, detail: `bundled agents not deny-first: ${notDenyFirst.join(", ")}`, fix: "reinstall opencode-codex-memory" }
    const user = (target.config.config?.agent ?? {}) as Record<string, Record<string, unknown>>
    const ignored = Object.fromEntries(["memorize", "memorize-extract"].map((id) => [id, Object.keys(user[id] ?? {}).filter((key) => !TUNABLE_AGENT_KEYS.includes(key))]))
    const sentences = describeIgnoredAgentKeys(ignored)
    return { name, ok: true, detail: sentences.length ? `bundled, deny-first; ${sentences.join(" ")}` : "bundled, deny-first" }
  } catch (error) {
    return { name, ok: false, detail: (error as Error).message, fix: "reinstall opencode-codex-memory" }
  }
}

/** How long one headless OpenCode probe may take: it starts OpenCode, loading every plugin. */
const PROBE_TIMEOUT_MS = 60_000

/** Runs OpenCode headless in an empty folder (no project config), with the user's environment. */
function probe(binary: string, target: HomeTarget, args: readonly string[]): Promise<ProbeRun> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-doctor-"))
  return new Promise((resolve) => {
    execFile(binary, [...args], { cwd, encoding: "utf8", timeout: PROBE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...target.env } as NodeJS.ProcessEnv }, (error, stdout, stderr) => {
      fs.rmSync(cwd, { recursive: true, force: true })
      const failed = error as (Error & { code?: unknown; killed?: boolean; signal?: NodeJS.Signals | null }) | null
      resolve({
        code: failed ? (typeof failed.code === "number" ? failed.code : null) : 0,
        signal: failed?.signal ?? null,
        stdout,
        stderr,
        // execFile kills the probe at its timeout and reports only "Command failed".
        ...(failed?.killed ? { timedOutAfterMs: PROBE_TIMEOUT_MS } : {}),
        ...(failed && typeof failed.code !== "number" ? { error: failed } : {}),
      })
    })
  })
}

/**
 * Whether OpenCode really loads the plugin: a configured entry OpenCode cannot install or import
 * is skipped without a word in its log, so the plugin's own helper agent is looked up instead
 * (`opencode debug agent`, which loads the plugins and needs no model).
 */
async function pluginLoaded(binary: string, target: HomeTarget): Promise<Check[]> {
  const entry = target.config.config ? pluginEntry(target.config.config) : undefined
  if (!entry) return []
  const name = "plugin loaded by OpenCode"
  const ran = await probe(binary, target, ["debug", "agent", EXTRACT_AGENT])
  if (ran.error) return [{ name, ok: false, detail: `could not run \`${binary} debug agent\`: ${probeFailure(ran)}`, fix: "run the same command yourself to see why; pass --opencode PATH for another binary" }]
  let agent: { name?: unknown } | undefined
  try {
    agent = JSON.parse(ran.stdout) as { name?: unknown }
  } catch {
    agent = undefined
  }
  if (agent?.name === EXTRACT_AGENT) return [{ name, ok: true, detail: `${entry.spec}: OpenCode registers its helper agents` }]
  return [
    {
      name,
      ok: false,
      detail: `OpenCode started without it: its helper agent ${EXTRACT_AGENT} is missing (${probeFailure(ran)})`,
      fix: `OpenCode could not install or import ${JSON.stringify(entry.spec)} and logs nothing about it: check that this package and version exist (\`npm view ${entry.spec.startsWith("file:") ? "opencode-codex-memory" : entry.spec}\`) or that the file:// path points at an installed copy's entry, then run doctor again`,
    },
  ]
}

/** The helper models the options name (or OpenCode's own defaults) against what `opencode models` lists. */
async function helperModels(binary: string, target: HomeTarget): Promise<Check[]> {
  const config = target.config.config
  const entry = config ? pluginEntry(config) : undefined
  if (!entry) return []
  const { options } = parseOptions(entry.options)
  const wanted = [
    { option: "extract_model", id: options.extract_model ?? stringOf(config?.small_model), fallback: "small_model" },
    { option: "consolidation_model", id: options.consolidation_model ?? stringOf(config?.model), fallback: "model" },
  ].filter((w): w is { option: string; id: string; fallback: string } => w.id !== undefined)
  if (wanted.length === 0) return []
  const name = "helper models"
  const ran = await probe(binary, target, ["models"])
  if (ran.error || ran.code !== 0) return [{ name, ok: false, detail: `could not run \`${binary} models\`: ${probeFailure(ran)}`, fix: "run `opencode models` yourself to see why" }]
  const offered = ran.stdout.split("\n").map((line) => line.trim()).filter((line) => /^[^\s/]+\/\S+$/.test(line))
  const problems = wanted.flatMap((w) => {
    const option = options[w.option as "extract_model" | "consolidation_model"] ? w.option : `OpenCode's ${w.fallback} (used while ${w.option} is not set)`
    const message = unknownModelMessage(w.id, offered, option)
    return message ? [message] : []
  })
  if (problems.length === 0) return [{ name, ok: true, detail: wanted.map((w) => `${w.option}: ${w.id}`).join(", ") }]
  return [{ name, ok: false, detail: problems.join("; "), fix: `set the plugin's extract_model / consolidation_model in ${target.config.file ?? "OpenCode's global config"} to models \`opencode models\` lists; until then learning fails and the model is paused for an hour at a time` }]
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value.includes("/") ? value : undefined
}

function opencodeVersion(binary: string, env: Readonly<Record<string, string | undefined>>): Check & { line?: 1 | 2 } {
  const name = "OpenCode version"
  const run = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 15_000, env: { ...process.env, ...env } as NodeJS.ProcessEnv })
  if (run.error || run.status !== 0) return { name, ok: false, detail: `could not run \`${binary} --version\`: ${run.error?.message ?? run.stderr.trim()}`, fix: "install OpenCode, or pass --opencode PATH" }
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(run.stdout)
  if (!version) return { name, ok: false, detail: `unexpected answer: ${run.stdout.trim().slice(0, 80)}`, fix: "pass --opencode PATH to the OpenCode binary" }
  const [major, minor] = [Number(version[1]), Number(version[2])]
  const ok = major === 2 || (major === 1 && minor >= 18)
  return { name, ok, detail: `${version[0]}${ok ? "" : ` (supported: ${SUPPORTED})`}`, fix: `update OpenCode to ${SUPPORTED}`, ...(ok ? { line: major === 2 ? (2 as const) : (1 as const) } : {}) }
}
