// The command-line tool in process, on a home built with the core's own stores: every command's
// JSON, its exit code, and the error shape for bad input.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { SpendLedger } from "../../src/store/ledger.js"
import { SessionCatalog } from "../../src/store/session-catalog.js"
import { HomeSettings } from "../../src/store/settings.js"
import { ConsolidationReviews } from "../../src/store/reviews.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { resetBaseline } from "../../src/write/phase2/git-baseline.js"
import { runCliIn, type Ran } from "./run-cli.js"

const NOW = Date.UTC(2026, 11, 1, 12)
let root: string
let home: string

const cli = (...argv: string[]): Promise<Ran> => runCliIn(root, argv, NOW)

const inHome = (...argv: string[]) => cli(...argv, "--home", home)
const inHomeWith = (env: Record<string, string>, ...argv: string[]) => runCliIn(root, [...argv, "--home", home], NOW, env)

/** A home as the plugin leaves it: two records (one a segment), a review, spend, a summary and a baseline. */
async function buildHome(): Promise<void> {
  const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
  const jobs = new Stage1Jobs(db, () => NOW)
  // The segment first: a segment stored later would supersede the session's older record.
  for (const [key, text, at] of [["ses_alpha#1", "the first segment", 2_000], ["ses_alpha", "deploys use make ship", 1_000], ["ses_beta", "tests need the vpn", 1_000]] as const) {
    const claim = jobs.claim({ sessionId: key, updatedAt: NOW - at }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed(key, claim.token, { rawMemory: `- ${text}`, rolloutSummary: `Learned: ${text}.`, slug: "s", cwd: "/p" })
  }
  db.prepare("INSERT INTO redaction_log (session_id, stage, recorded_at, counts) VALUES ('ses_alpha', 'transcript', 1, '{\"github-token\":2}')").run()
  new ConsolidationReviews(db, () => NOW).add("v1", { inputsAdded: ["rollout_summaries/a.md"], inputsRemoved: [], notes: [], changed: ["MEMORY.md"], sessions: 2 }, "diff --git a/MEMORY.md b/MEMORY.md\n+- deploys use make ship\n")
  new SpendLedger(db, () => NOW).record("extraction", { input: 100, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0.01 })
  new HomeSettings(db, () => NOW).recordBreaker({ scope: "openai/gpt-5-mini", until: NOW + 600_000, reason: "APIError: Rate limit reached" })
  db.close()
  const memories = path.join(home, "memories")
  fs.mkdirSync(memories, { recursive: true })
  fs.writeFileSync(path.join(memories, "memory_summary.md"), "v1\n## Deploying\nUse make ship.\n")
  fs.writeFileSync(path.join(memories, "MEMORY.md"), "# Memory\n- deploys use make ship\n")
  await resetBaseline(memories, () => NOW)
}

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cli-"))
  home = path.join(root, "home")
  fs.mkdirSync(home)
  await buildHome()
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

describe("the contract", () => {
  it("answers capabilities and check-compatibility without a home", async () => {
    const caps = await cli("capabilities")
    expect(caps.code).toBe(0)
    expect(caps.json).toMatchObject({ protocol_version: 1, memory_versions: ["v1", "v2"], schema_versions: { "memory.db": expect.any(Number), archive: 1 } })
    expect(await cli("check-compatibility", "--protocol", "1")).toMatchObject({ code: 0, json: { compatible: true } })
    expect(await cli("check-compatibility", "--protocol", "2")).toMatchObject({ code: 1, json: { error: { code: "incompatible" } } })
  })

  it("gives bad usage exit 2 and one error shape, with the reason on stderr", async () => {
    for (const argv of [["frobnicate"], ["status", "--bogus"], ["check-compatibility"], ["check-compatibility", "--protocol", "x"], ["recall"], ["diff"], ["reset"], ["view", "--all", "--limit", "0"]]) {
      const ran = await cli(...argv)
      expect(ran.code, argv.join(" ")).toBe(2)
      expect(Object.keys(ran.json)).toEqual(["error"])
      expect(ran.json.error).toMatchObject({ code: expect.stringMatching(/^(usage|unknown_command)$/), message: expect.any(String) })
      expect(ran.stderr).toContain((ran.json.error as { message: string }).message)
    }
  })

  it("helps people: text help with each command's flags, --version, and a guess for a mistyped command", async () => {
    for (const argv of [[], ["--help"], ["-h"], ["help"]]) {
      const ran = await cli(...argv)
      expect(ran.code).toBe(0)
      expect(ran.stdout).toMatch(/^usage: opencode-codex-memory COMMAND/)
      expect(ran.stdout).toContain("  export ")
    }
    const listing = JSON.parse((await cli("help", "--json")).stdout) as { commands: Array<{ name: string; flags: string[] }> }
    expect(listing.commands.find((c) => c.name === "export")?.flags).toEqual(expect.arrayContaining(["--force", "--home VALUE"]))
    for (const argv of [["help", "export"], ["export", "--help"]]) {
      const ran = await cli(...argv)
      expect(ran.stdout).toMatch(/^usage: opencode-codex-memory export FILE \[--force\]/)
      expect(ran.stdout).toContain("flags: --force, --home VALUE, --text, --help")
    }
    const version = await cli("--version")
    expect(version.stdout.trim()).toBe(`opencode-codex-memory ${(JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version}`)
    expect((await cli("stauts")).stderr).toContain("did you mean `status`?")
    expect((await cli("doc")).stderr).toContain("did you mean `doctor`?")
    expect((await cli("frobnicate")).stderr).not.toContain("did you mean")
    const negative = await cli("view", "--all", "--limit", "-1")
    expect(negative).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
    expect(negative.stderr).toContain('--limit must be a whole number from 1 to')
    expect(negative.stderr).not.toContain("ambiguous")
  })

  it("says there is no home rather than creating one", async () => {
    const missing = path.join(root, "nowhere")
    expect(await cli("status", "--home", missing)).toMatchObject({ code: 1, json: { error: { code: "no_home" } } })
    expect(fs.existsSync(missing)).toBe(false)
  })

  it("reports a damaged memory.db with exit 3 and leaves it where it is", async () => {
    fs.writeFileSync(path.join(home, "memory.db"), "this is not a database at all".repeat(200))
    for (const name of ["-wal", "-shm"]) fs.rmSync(path.join(home, `memory.db${name}`), { force: true })
    const ran = await inHome("status")
    expect(ran).toMatchObject({ code: 3, json: { error: { code: "corrupt_database" } } })
    expect(fs.readFileSync(path.join(home, "memory.db"), "utf8")).toContain("not a database")
    expect(fs.readdirSync(home).some((name) => name.includes("corrupt"))).toBe(false)
  })
})

describe("reading memory", () => {
  it("status: counts, spend, the last review and the learning state", async () => {
    const ran = await inHome("status")
    expect(ran.code).toBe(0)
    expect(ran.json).toMatchObject({ home, learning: { held: false }, rate_limit_breakers: [{ scope: "openai/gpt-5-mini", reason: "APIError: Rate limit reached" }] })
    const report = ran.json.report as { spend: { today: { tokens: number; sessions: number } }; lastReview: { summary: { sessions: number } } }
    expect(report.spend.today).toMatchObject({ tokens: 120, sessions: 1 })
    expect(report.lastReview.summary.sessions).toBe(2)
    expect((await inHome("status", "--text")).stdout).toContain("## Background learning")
  })

  it("view gives the block as injected; view --all pages the records", async () => {
    const view = await inHome("view")
    expect(view.json).toMatchObject({ injected: true })
    expect(view.json.block).toContain("Use make ship.")
    const page = await inHome("view", "--all", "--limit", "2")
    expect((page.json.records as unknown[]).length).toBe(2)
    expect(page.json.next_offset).toBe(2)
    const rest = await inHome("view", "--all", "--limit", "2", "--offset", "2")
    expect((rest.json.records as unknown[]).length).toBe(1)
    expect(rest.json.next_offset).toBeNull()
  })

  it("recall shows a session's records, segments included, its redactions and whether it was consolidated", async () => {
    const ran = await inHome("recall", "ses_alpha")
    expect(ran.code).toBe(0)
    const v1 = (ran.json.versions as Array<{ version: string; records: Array<{ session_id: string; consolidated: boolean }> }>).find((v) => v.version === "v1")!
    expect(v1.records.map((r) => r.session_id)).toEqual(["ses_alpha", "ses_alpha#1"])
    expect(ran.json.redactions).toEqual({ transcript: { "github-token": 2 } })
    expect(await inHome("recall", "ses_nobody")).toMatchObject({ code: 1, json: { error: { code: "not_found" } } })
  })

  it("search runs memory_search's engine", async () => {
    const ran = await inHome("search", "make", "ship", "--mode", "all_on_same_line")
    expect(ran.code).toBe(0)
    expect((ran.json.matches as Array<{ path: string }>).map((m) => m.path).sort()).toEqual(["MEMORY.md", "memory_summary.md"])
    // Extracted but not consolidated: found beside the folder, marked, on a search of the whole folder only.
    const tests = await inHome("search", "vpn")
    expect(tests.json.matches).toEqual([])
    expect(tests.json.unconsolidated).toEqual([expect.objectContaining({ session_id: "ses_beta", field: "raw_memory", line: 1, text: "- tests need the vpn" }), expect.objectContaining({ session_id: "ses_beta", field: "rollout_summary" })].reverse())
    expect((await inHome("search", "vpn", "--text")).stdout).toContain("record ses_beta (not consolidated yet) rollout_summary:1: Learned: tests need the vpn.")
    expect((await inHome("search", "vpn", "--path", "MEMORY.md")).json.unconsolidated).toEqual([])
    expect(await inHome("search", "x", "--mode", "sideways")).toMatchObject({ code: 2 })
    expect(await inHome("search", "x", "--path", "../etc")).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
  })

  it("search --mode ranked ranks the folder's entries and the records not consolidated yet together, best first", async () => {
    const ranked = await inHome("search", "ship deploys", "--mode", "ranked")
    expect(ranked.code, ranked.stderr).toBe(0)
    const matches = ranked.json.matches as Array<{ path: string; score: number; record?: { session_id: string } }>
    expect(matches.length).toBeGreaterThan(0)
    expect(matches.map((m) => m.score)).toEqual([...matches.map((m) => m.score)].sort((a, b) => b - a))
    expect(matches.some((m) => m.path === "MEMORY.md")).toBe(true)
    expect(matches.some((m) => m.record?.session_id === "ses_alpha")).toBe(true)
    expect(ranked.json.unconsolidated).toEqual([])
    expect((await inHome("search", "ship deploys", "--mode", "ranked", "--text")).stdout).toMatch(/record ses_alpha \(not consolidated yet\) raw_memory:1 \(score [\d.]+\)\n  - deploys use make ship/)
    expect(await inHome("search", "x", "--mode", "ranked", "--lines", "2")).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
  })

  it("search --project keeps the rollout summaries and records made in that project, by name, last part or key", async () => {
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    const jobs = new Stage1Jobs(db, () => NOW)
    const claim = jobs.claim({ sessionId: "ses_gamma", updatedAt: NOW - 100 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed("ses_gamma", claim.token, { rawMemory: "- the vpn is for acme", rolloutSummary: "Learned: the vpn.", slug: "s", cwd: "/src/app/web", project: { key: "git:/src/app/.git", name: "github.com/acme/app" } })
    db.close()
    const summaries = path.join(home, "memories", "rollout_summaries")
    fs.mkdirSync(summaries)
    fs.writeFileSync(path.join(summaries, "2026-11-30T10-00-00-aaaa-app.md"), "session_id: ses_old\ncwd: /src/app\nproject: github.com/acme/app\nproject_key: git:/src/app/.git\n\nThe vpn runs on the build box.\n")
    fs.writeFileSync(path.join(summaries, "2026-11-30T11-00-00-bbbb-other.md"), "session_id: ses_other\ncwd: /src/other\nproject: other\nproject_key: dir:/src/other\n\nNo vpn here.\n")
    for (const project of ["github.com/acme/app", "APP", "git:/src/app/.git"]) {
      const ran = await inHome("search", "vpn", "--project", project)
      expect(ran.code, ran.stderr).toBe(0)
      expect((ran.json.matches as Array<{ path: string }>).map((m) => m.path)).toEqual(["rollout_summaries/2026-11-30T10-00-00-aaaa-app.md"])
      expect((ran.json.unconsolidated as Array<{ session_id: string }>).map((m) => m.session_id)).toEqual(["ses_gamma", "ses_gamma"])
    }
    // Without the filter: every file and record that says it.
    const all = await inHome("search", "vpn")
    expect((all.json.matches as unknown[]).length).toBe(2)
    expect((all.json.unconsolidated as Array<{ session_id: string }>).map((m) => m.session_id).sort()).toEqual(["ses_beta", "ses_beta", "ses_gamma", "ses_gamma"])
    expect((await inHome("search", "vpn", "--project", "nothing-like-it")).json).toMatchObject({ matches: [], unconsolidated: [] })
  })

  it("sessions groups by project, showing each session's folder where a project spans several", async () => {
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    const app = { key: "git:/src/app/.git", name: "github.com/acme/app" }
    new SessionCatalog(db, () => NOW).remember([
      { id: "ses_main", title: "Main", directory: "/src/app", project: app, createdAt: NOW - 9_000_000, updatedAt: NOW - 8_000_000 },
      { id: "ses_wt", title: "Worktree", directory: "/src/app-wt/feature", project: app, createdAt: NOW - 9_000_000, updatedAt: NOW - 7_000_000 },
      { id: "ses_loose", title: "Loose", directory: "/src/loose", createdAt: NOW - 9_000_000, updatedAt: NOW - 6_000_000 },
    ])
    db.close()
    const ran = await inHome("sessions")
    const byId = Object.fromEntries((ran.json.sessions as Array<{ session_id: string }>).map((s) => [s.session_id, s]))
    expect(byId.ses_wt).toMatchObject({ project: app, folder: "/src/app-wt/feature" })
    expect(byId.ses_loose).toMatchObject({ project: null, folder: "/src/loose" })
    const text = (await inHome("sessions", "--text")).stdout
    expect(text).toContain(`## github.com/acme/app\n- ses_wt waiting, eligible ${new Date(NOW - 7_000_000 + 6 * 3_600_000).toISOString()} "Worktree" in /src/app-wt/feature\n- ses_main`)
    expect(text).toContain('## /src/loose (no project)\n- ses_loose')
    expect((await inHome("status", "--text")).stdout).toContain("projects: github.com/acme/app (2 sessions, 0 records)")
  })

  it("sessions lists every session memory knows with its folder, title, state and when it becomes eligible", async () => {
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    const catalog = new SessionCatalog(db, () => NOW)
    catalog.remember([
      { id: "ses_fresh", title: "Fix the login page", directory: "/src/app", createdAt: NOW - 3_600_000, updatedAt: NOW - 1_800_000 },
      { id: "ses_beta", title: "VPN for tests", directory: "/src/app", createdAt: NOW - 90_000_000, updatedAt: NOW - 500 },
      { id: "ses_off", title: undefined, directory: undefined, createdAt: NOW - 90_000_000, updatedAt: NOW - 80_000_000 },
    ])
    db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_off', 'disabled', 1)").run()
    db.close()
    const ran = await inHome("sessions")
    expect(ran.code).toBe(0)
    const byId = Object.fromEntries((ran.json.sessions as Array<{ session_id: string }>).map((s) => [s.session_id, s]))
    // Six idle hours after its last activity; a record older than its activity is learned again then too.
    expect(byId.ses_fresh).toMatchObject({ state: "waiting", title: "Fix the login page", folder: "/src/app", eligible_at: new Date(NOW - 1_800_000 + 6 * 3_600_000).toISOString() })
    expect(byId.ses_beta).toMatchObject({ state: "extracted", records: 1, eligible_at: new Date(NOW - 500 + 6 * 3_600_000).toISOString() })
    expect(byId.ses_alpha).toMatchObject({ state: "extracted", records: 2, title: null, eligible_at: null })
    expect(byId.ses_off).toMatchObject({ state: "off", mode: "disabled", title: null })
    expect(ran.json.counts).toEqual({ waiting: 1, extracted: 2, off: 1 })
    expect((await inHome("sessions", "--state", "waiting")).json).toMatchObject({ total: 1, sessions: [{ session_id: "ses_fresh" }] })
    const text = (await inHome("sessions", "--text")).stdout
    expect(text).toContain("## /src/app")
    expect(text).toContain(`- ses_fresh waiting, eligible ${new Date(NOW - 1_800_000 + 6 * 3_600_000).toISOString()} "Fix the login page"`)
    expect(text).toContain("- ses_off off (mode disabled)")
    expect(await inHome("sessions", "--state", "asleep")).toMatchObject({ code: 2, json: { error: { code: "usage" } } })
    // The same waiting list leads memory_inspect and status.
    expect((await inHome("status", "--text")).stdout).toContain(`1 session to go idle (eligible: "Fix the login page" at ${new Date(NOW - 1_800_000 + 6 * 3_600_000).toISOString()})`)
  })

  it("diff --last shows the last review; diff --pending what the next consolidation would see, leaving the folder alone", async () => {
    const last = await inHome("diff", "--last")
    expect(last.json.last).toMatchObject({ inputsAdded: ["rollout_summaries/a.md"], changed: ["MEMORY.md"] })
    const before = fs.readdirSync(path.join(home, "memories")).sort()
    const pending = await inHome("diff", "--pending")
    expect(pending.code).toBe(0)
    const changes = (pending.json.pending as { changes: Array<{ path: string }> }).changes.map((c) => c.path)
    expect(changes).toContain("raw_memories.md")
    expect(changes.some((p) => p.startsWith("rollout_summaries/"))).toBe(true)
    expect(fs.readdirSync(path.join(home, "memories")).sort()).toEqual(before)
  })
})

describe("controlling memory", () => {
  it("pause and resume are kept in memory.db", async () => {
    expect(await inHome("pause")).toMatchObject({ code: 0, json: { paused: true, changed: true } })
    expect((await inHome("status")).json.learning).toMatchObject({ held: true, paused: true })
    expect(await inHome("resume")).toMatchObject({ code: 0, json: { paused: false, changed: true } })
    expect((await inHome("status")).json.learning).toEqual({ held: false, paused: false })
  })

  it("mode keeps a session out and forgets what was learned from it, or lets it in", async () => {
    expect(await inHome("mode", "ses_beta", "disabled")).toMatchObject({ code: 0, json: { previous: "enabled", mode: "disabled", forgotten_from: ["v1"] } })
    const recall = await inHome("recall", "ses_beta")
    expect(recall.json.mode).toBe("disabled")
    // Disabled means nothing kept: its record and job are gone.
    expect(recall.json.versions).toEqual(expect.arrayContaining([expect.objectContaining({ version: "v1", records: [], jobs: [] })]))
    expect((await inHome("modes")).json).toEqual({ sessions: [{ session_id: "ses_beta", mode: "disabled", since: new Date(NOW).toISOString() }] })
    expect(await inHome("mode", "ses_beta", "sideways")).toMatchObject({ code: 2 })
    expect(await inHome("mode", "ses_beta", "enabled")).toMatchObject({ code: 0, json: { previous: "disabled", mode: "enabled" } })
    expect((await inHome("modes")).json).toEqual({ sessions: [] })
  })

  it("mode and forget refuse an id that neither memory nor OpenCode knows, asking OpenCode's own command line", async () => {
    // A stand-in for the opencode binary: `export <id>` knows ses_live only, as OpenCode answers.
    const fake = path.join(root, "opencode")
    fs.writeFileSync(fake, `#!/bin/sh
[ "$2" = "ses_live" ] && [ "$3" = "--pure" ] && exit 0
echo "Error: Session not found: $2" >&2
exit 1
`, { mode: 0o755 })
    const typo = await inHome("mode", "ses_bta", "disabled", "--opencode", fake)
    expect(typo).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
    expect(String((typo.json.error as { message: string }).message)).toMatch(/No session ses_bta exists/)
    expect((await inHome("modes")).json).toEqual({ sessions: [] })
    expect(await inHome("forget", "ses_bta", "--opencode", fake)).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
    // A session OpenCode has, though memory learned nothing from it yet, can be kept out.
    expect(await inHome("mode", "ses_live", "disabled", "--opencode", fake)).toMatchObject({ code: 0, json: { previous: "enabled", mode: "disabled", forgotten_from: [] } })
    // OpenCode that cannot be run is no answer: refused, with the reason.
    const missing = await inHome("mode", "ses_other", "disabled", "--opencode", path.join(root, "no-such-opencode"))
    expect(missing).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
    expect(String((missing.json.error as { message: string }).message)).toMatch(/could not be asked/)
    // An id memory knows needs no question to OpenCode.
    expect(await inHome("forget", "ses_alpha", "--opencode", path.join(root, "no-such-opencode"))).toMatchObject({ code: 0, json: { forgotten_from: ["v1"] } })
  })

  it("asks OpenCode 2 with session export --standalone (2.1.2 has no --pure), with memory off in that process", async () => {
    // A stand-in for OpenCode 2.1.2 with no background service running: it answers for ses_live2
    // only, and only when the plugin is switched off in the process it starts.
    const fake = path.join(root, "opencode2")
    fs.writeFileSync(fake, `#!/bin/sh
[ "$1" = "--version" ] && echo "opencode v2.1.2" && exit 0
[ "$1" = "session" ] && [ "$2" = "export" ] && [ "$4" = "--standalone" ] && [ "$OPENCODE_CODEX_MEMORY_DISABLE" = "1" ] || { echo "Unrecognized flag" >&2; exit 2; }
[ "$3" = "ses_live2" ] && echo '{"info":{}}' && exit 0
echo "Session not found: $3"
exit 1
`, { mode: 0o755 })
    const noService = { XDG_STATE_HOME: path.join(root, "no-state") }
    expect(await inHomeWith(noService, "mode", "ses_gone2", "disabled", "--opencode", fake)).toMatchObject({ code: 1, json: { error: { code: "unknown_session" } } })
    expect(await inHomeWith(noService, "mode", "ses_live2", "disabled", "--opencode", fake)).toMatchObject({ code: 0, json: { previous: "enabled", mode: "disabled" } })
    expect(await inHomeWith(noService, "mode", "ses_live2", "enabled")).toMatchObject({ code: 0 })
  })

  it("reset needs --yes, and is refused while a consolidation holds a live lease", async () => {
    const { db } = openDatabase(path.join(home, "memory.db"))
    // A lease with no owner recorded, so it counts until it expires.
    db.prepare("UPDATE jobs SET status = 'running', lease_until = $until, owner_pid = NULL, owner_boot = NULL WHERE kind = 'memory_consolidate_global'").run({ until: Date.now() + 3_600_000 })
    db.close()
    expect(await inHome("reset", "--yes")).toMatchObject({ code: 1, json: { error: { code: "consolidation_running" } } })
    const { db: again } = openDatabase(path.join(home, "memory.db"))
    again.prepare("UPDATE jobs SET status = 'pending', lease_until = NULL WHERE kind = 'memory_consolidate_global'").run()
    again.close()
    const ran = await inHome("reset", "--yes")
    expect(ran).toMatchObject({ code: 0, json: { reset: true } })
    expect(fs.existsSync(path.join(home, "memories", "MEMORY.md"))).toBe(false)
    // A reset home has no baseline; the preview commits the folder first, as the next run would.
    const pending = await inHome("diff", "--pending")
    expect(pending.code).toBe(0)
    expect((pending.json.pending as { changes: Array<{ path: string }> }).changes.map((c) => c.path)).toEqual(["raw_memories.md"])
  })
})

describe("carrying memory to another machine", () => {
  it("exports and imports a home; refuses a non-empty home without --replace, a newer archive and a truncated one", async () => {
    const file = path.join(root, "memory.archive.json")
    expect(await inHome("export", file)).toMatchObject({ code: 0, json: { file } })
    const written = fs.readFileSync(file, "utf8")
    const again = await inHome("export", file)
    expect(again).toMatchObject({ code: 1, json: { error: { code: "refused" } } })
    expect(again.stderr).toContain("already exists; export to another file, or pass --force")
    expect(fs.readFileSync(file, "utf8")).toBe(written)
    expect(await inHome("export", file, "--force")).toMatchObject({ code: 0, json: { file } })
    const other = path.join(root, "other-home")
    expect(await cli("import", file, "--home", other)).toMatchObject({ code: 0 })
    expect(fs.readFileSync(path.join(other, "memories", "MEMORY.md"), "utf8")).toContain("make ship")
    expect((await cli("recall", "ses_alpha", "--home", other)).code).toBe(0)
    const pending = await cli("diff", "--pending", "--home", other)
    expect(pending.code).toBe(0)
    expect((pending.json.pending as { changes: Array<{ path: string }> }).changes.map((c) => c.path)).toContain("raw_memories.md")

    expect(await cli("import", file, "--home", other)).toMatchObject({ code: 1, json: { error: { code: "home_not_empty" } } })
    expect(await cli("import", file, "--home", other, "--replace")).toMatchObject({ code: 0 })

    const newer = JSON.parse(fs.readFileSync(file, "utf8")) as { archive_version: number }
    newer.archive_version = 99
    fs.writeFileSync(path.join(root, "newer.json"), JSON.stringify(newer))
    expect(await cli("import", path.join(root, "newer.json"), "--home", path.join(root, "h3"))).toMatchObject({ code: 3, json: { error: { code: "newer_archive" } } })
    const text = fs.readFileSync(file, "utf8")
    fs.writeFileSync(path.join(root, "cut.json"), text.slice(0, Math.floor(text.length / 2)))
    expect(await cli("import", path.join(root, "cut.json"), "--home", path.join(root, "h4"))).toMatchObject({ code: 3, json: { error: { code: "invalid_archive" } } })
    expect(fs.existsSync(path.join(root, "h4", "memory.db"))).toBe(false)
  })

  it("refuses an input over 4 MB and a missing file", async () => {
    const big = path.join(root, "big.json")
    fs.writeFileSync(big, Buffer.alloc(4 * 1024 * 1024 + 1, 32))
    expect(await cli("import", big, "--home", path.join(root, "h5"))).toMatchObject({ code: 2, json: { error: { code: "input_too_large" } } })
    expect(await cli("import", path.join(root, "missing.json"), "--home", path.join(root, "h5"))).toMatchObject({ code: 1, json: { error: { code: "not_found" } } })
  })
})

describe("doctor", () => {
  it("checks the home, the database, the baseline, the config, the agents and OpenCode, each with a fix", async () => {
    const ran = await inHome("doctor", "--opencode", path.join(root, "no-such-opencode"))
    expect(ran.code).toBe(1)
    const checks = ran.json.checks as Array<{ name: string; ok: boolean; fix?: string }>
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]))
    expect(byName["home writable"]?.ok).toBe(true)
    expect(byName["memory.db integrity"]?.ok).toBe(true)
    expect(byName["memories/ git baseline"]?.ok).toBe(true)
    expect(byName["helper agents"]?.ok).toBe(true)
    expect(byName["plugin in OpenCode's global config"]).toMatchObject({ ok: false, fix: expect.stringContaining("plugin") })
    expect(byName["OpenCode version"]).toMatchObject({ ok: false, fix: expect.any(String) })
  })
})

describe("doctor asks OpenCode itself", () => {
  /** A stand-in `opencode`: its version, its `debug agent` answer (loaded or not) and its model list. */
  function fakeOpencode(loaded: boolean): string {
    const bin = path.join(root, loaded ? "opencode-loaded" : "opencode-bare")
    const agent = loaded ? `echo '{"name":"memorize-extract","mode":"subagent"}'` : `echo "Agent memorize-extract not found, run 'opencode agent list' to get an agent list"`
    fs.writeFileSync(bin, `#!/bin/sh\ncase "$1" in\n  --version) echo 1.18.33 ;;\n  debug) ${agent} ;;\n  models) printf 'opencode/big-pickle\\nfake/fake-model\\nfake/other-model\\n' ;;\nesac\n`, { mode: 0o755 })
    return bin
  }

  function configure(options: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
    const dir = path.join(root, "config", "opencode")
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify({ plugin: [["opencode-codex-memory", { home, ...options }]], ...extra }))
  }

  const checksOf = (ran: Ran) => Object.fromEntries((ran.json.checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).map((c) => [c.name, c]))

  it("fails when OpenCode runs without the configured plugin, and says how to find out why", async () => {
    configure({})
    const checks = checksOf(await cli("doctor", "--opencode", fakeOpencode(false)))
    expect(checks["plugin loaded by OpenCode"]).toMatchObject({ ok: false, detail: expect.stringContaining("memorize-extract is missing"), fix: expect.stringContaining("npm view opencode-codex-memory") })
    expect(checksOf(await cli("doctor", "--opencode", fakeOpencode(true)))["plugin loaded by OpenCode"]).toMatchObject({ ok: true })
  })

  it("fails for a helper model OpenCode's providers do not offer, with a guess, and passes for one they do", async () => {
    configure({ extract_model: "fake/fake-modle" }, { model: "fake/other-model" })
    const checks = checksOf(await cli("doctor", "--opencode", fakeOpencode(true)))
    expect(checks["helper models"]).toMatchObject({ ok: false, detail: expect.stringContaining("no model fake/fake-modle; did you mean fake/fake-model?"), fix: expect.stringContaining("extract_model") })
    expect(checks["helper models"]!.detail).not.toContain("other-model")
    configure({ extract_model: "fake/fake-model" }, { model: "fake/other-model" })
    expect(checksOf(await cli("doctor", "--opencode", fakeOpencode(true)))["helper models"]).toMatchObject({ ok: true, detail: "extract_model: fake/fake-model, consolidation_model: fake/other-model" })
  })
})

describe("the plugin's options from OpenCode's config", () => {
  it("reads a JSONC global config (comments, trailing commas, // inside strings) and finds the plugin's home", async () => {
    const configDir = path.join(root, "config", "opencode")
    fs.mkdirSync(configDir, { recursive: true })
    fs.writeFileSync(
      path.join(configDir, "opencode.jsonc"),
      `{\n  // the memory plugin\n  "plugin": [["opencode-codex-memory", { "home": ${JSON.stringify(home)}, "note": "a // b ,}" },],],\n  /* block */\n}\n`,
    )
    const ran = await cli("status")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.json.home).toBe(home)
    // "note" is no option of the plugin: doctor says so, with a fix, instead of printing only ok lines.
    const options = ((await cli("doctor", "--opencode", path.join(root, "none"))).json.checks as Array<{ name: string; ok: boolean; detail: string; fix?: string }>).find((c) => c.name === "plugin options")
    expect(options).toMatchObject({ ok: false, detail: expect.stringContaining("note"), fix: expect.stringContaining("correct or remove") })
    fs.writeFileSync(path.join(configDir, "opencode.jsonc"), "{ broken")
    const doctor = await cli("doctor", "--home", home, "--opencode", path.join(root, "none"))
    expect((doctor.json.checks as Array<{ name: string; detail: string }>).find((c) => c.name === "plugin in OpenCode's global config")?.detail).toMatch(/could not be read/)
  })
})
