// The project a session's folder belongs to, stored with its record by a phase-1 pass: one key
// (OpenCode's project id) for a repository's checkout, its linked worktree and its subfolders,
// the name in the extraction prompt, and the key and name cleaned like every host string (secrets
// redacted, `<private>` text removed). Real synthetic repositories, the in-memory host.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import type { SqlDatabase } from "../../../src/store/sqlite.js"
import { Stage1Jobs } from "../../../src/store/stage1-jobs.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadExtractionTemplates } from "../../../src/write/phase1/extract.js"
import { v1Extraction } from "../../../src/write/phase1/extraction-strategy.js"
import { Phase1 } from "../../../src/write/phase1/phase1.js"
import { ProjectResolver } from "../../../src/write/phase1/project-identity.js"
import { FakeHost } from "../../fakes/host.js"
import { git, openCodeRemoteId, repository as makeRepository } from "./repositories.js"

const HOUR = 3_600_000
const templates = loadExtractionTemplates(fileURLToPath(new URL("../../../templates", import.meta.url)))
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"

let clock: number
let root: string
let db: SqlDatabase
let host: FakeHost
const disposers: Array<() => Promise<void>> = []

beforeEach(() => {
  clock = Date.UTC(2026, 11, 1, 12)
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "project-records-")))
  fs.mkdirSync(path.join(root, "memories"))
  db = openDatabase(path.join(root, "memory.db")).db
  host = new FakeHost(() => clock)
  // Every extraction answers with the project line of its own prompt, so the prompt is checked too.
  host.responder = (_id, prompt) => {
    const project = /^Project: (.*)$/m.exec(prompt.text)?.[1] ?? "?"
    return { text: "", structured: { rollout_summary: `Worked in ${project}.`, raw_memory: `- project ${project}`, rollout_slug: "work" } }
  }
})
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
  db.close()
  fs.rmSync(root, { recursive: true, force: true })
})

const repository = (relative: string, origin?: string) => makeRepository(root, relative, origin)

function pass() {
  // The folders live in a temp folder, which the real rules keep out: here "temp" is a scratch folder.
  const resolver = new ProjectResolver({ home: path.join(root, "home"), tempDirs: [path.join(root, "scratch")], memoryDirs: [path.join(root, "memories")] }, () => clock)
  const p = new Phase1({
    host,
    options: parseOptions({ max_rollouts_per_startup: 10 }).options,
    now: () => clock,
    diagnostics: new Diagnostics(host, () => clock),
    strategy: v1Extraction(templates),
    memoryRoot: path.join(root, "memories"),
    jobs: () => new Stage1Jobs(db, () => clock),
    excludedSessions: () => new Set(),
    helperSessions: new Set(),
    extractionModel: () => undefined,
    workerId: "test",
    breaker: new RateLimitBreaker(() => clock),
    projectOf: (session) => resolver.of(session.directory, session.project),
  })
  disposers.push(() => p.dispose())
  return p.pass()
}

const said = (text: string) => [{ info: { id: "m1", role: "user", sessionID: "s", time: { created: 1 } }, parts: [{ id: "p1", type: "text", text }] }]
const records = () => db.prepare("SELECT session_id, cwd, project_key, project_name, rollout_summary FROM stage1_outputs ORDER BY session_id").all<Record<string, string | null>>()

describe("records carry their project", () => {
  it("one key for a checkout, its linked worktree and a subfolder; the name is in the prompt and the record", async () => {
    const app = repository("src/app", "https://deploy:secret-password@github.com/acme/app.git")
    const web = path.join(app, "packages", "web")
    fs.mkdirSync(web, { recursive: true })
    const worktree = path.join(root, "src", "app-wt", "feature")
    git(app, "worktree", "add", "-q", worktree, "-b", "feature")
    const notes = path.join(root, "notes")
    fs.mkdirSync(notes)
    for (const [id, directory] of [["ses_a", app], ["ses_b", worktree], ["ses_c", web], ["ses_d", notes], ["ses_e", path.join(root, "scratch", "agent")]] as const) {
      host.addSession({ id, directory, updatedAt: clock - 7 * HOUR }, said("hello"))
    }
    expect(await pass()).toMatchObject({ claimed: 5 })
    const rows = records()
    // OpenCode's id of the origin (the same on both lines), computed from git's files when the host gives none.
    const appKey = `host:${openCodeRemoteId("github.com/acme/app")}`
    expect(rows.slice(0, 3).map((r) => [r.project_key, r.project_name, r.rollout_summary])).toEqual([
      [appKey, "github.com/acme/app", "Worked in github.com/acme/app."],
      [appKey, "github.com/acme/app", "Worked in github.com/acme/app."],
      [appKey, "github.com/acme/app", "Worked in github.com/acme/app."],
    ])
    expect(rows[3]).toMatchObject({ project_key: `dir:${notes}`, project_name: "notes" })
    // A temp folder is no project.
    expect(rows[4]).toMatchObject({ project_key: null, project_name: null, rollout_summary: "Worked in (none)." })
    expect(JSON.stringify(rows)).not.toContain("secret-password")
  })

  it("cleans the key and name like the folder: a secret in the path is redacted, a private span's text removed", async () => {
    const secret = path.join(root, "work", `deploy-${TOKEN}`)
    fs.mkdirSync(secret, { recursive: true })
    const hidden = path.join(root, "work", "zeta-internal")
    fs.mkdirSync(hidden, { recursive: true })
    host.addSession({ id: "ses_s", directory: secret, updatedAt: clock - 7 * HOUR }, said("hello"))
    host.addSession({ id: "ses_p", directory: hidden, updatedAt: clock - 7 * HOUR }, said("the codename is <private>zeta-internal</private>"))
    await pass()
    const [p, s] = records()
    expect(JSON.stringify(s)).not.toContain(TOKEN)
    expect(s!.project_key).toContain("[REDACTED:")
    expect(s!.project_name).toContain("[REDACTED:")
    expect(JSON.stringify(p)).not.toContain("zeta-internal")
    expect(p!.project_key).toMatch(/^dir:/)
  })

  it("keys a session by the host's own project id when the host gives one", async () => {
    const app = repository("src/app2")
    host.addSession({ id: "ses_h", directory: app, updatedAt: clock - 7 * HOUR, project: { key: "prj_42" } }, said("hello"))
    await pass()
    expect(records()[0]).toMatchObject({ project_key: "host:prj_42", project_name: "app2" })
  })
})
