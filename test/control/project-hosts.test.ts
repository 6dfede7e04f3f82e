// One project rule on both hosts (D26), with real git repositories: a session's project is what
// its host's adapter lists (OpenCode's project id, computed alike by 1.18.33 and 2.1.2: the
// origin's hash, else the root commit) resolved by the same rules, so two clones, a worktree and
// its main checkout, the `.bare` layout and a `--separate-git-dir` repository key and name the same
// way on the 1.x path and the 2.x path. A home made under the old rule (1.x's git folders, `.bare`
// names, a linked home taken for a project) moves its records to the new projects at the next
// listing, and the project filter finds them by the new name.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { searchRecords } from "../../src/backend/search-records.js"
import type { HostSession } from "../../src/host.js"
import { Memory } from "../../src/memory.js"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { createV1Host } from "../../src/v1/host.js"
import type { V2Context } from "../../src/v2/api.js"
import { createV2Host, ObservedSessions } from "../../src/v2/host.js"
import { ProjectResolver, type ProjectRules } from "../../src/write/phase1/project-identity.js"
import { FakeHost } from "../fakes/host.js"
import { FakeOpenCode2 } from "../fakes/opencode2.js"
import { git, openCodeRemoteId, repository, rootCommit } from "../write/phase1/repositories.js"

const HOUR = 3_600_000
let work: string
let rules: ProjectRules

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "project-hosts-")))
  rules = { home: path.join(work, "home"), tempDirs: [path.join(work, "tmp")], memoryDirs: [path.join(work, "memory-home")] }
})
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

/** The layouts under test, each folder with the project id OpenCode gives it (what `git` says both lines compute). */
function layouts(): Record<string, { folder: string; openCodeId: string }> {
  const seed = repository(work, "seed")
  const cloneA = path.join(work, "src", "clone-a")
  const cloneB = path.join(work, "other", "clone-b")
  git(work, "clone", "-q", seed, cloneA)
  git(work, "clone", "-q", seed, cloneB)
  const app = repository(work, "src/app", "https://github.com/acme/app.git")
  const appWorktree = path.join(work, "src", "app-wt")
  git(app, "worktree", "add", "-q", "-b", "side", appWorktree)
  const proj = path.join(work, "src", "proj")
  git(work, "clone", "-q", "--bare", repository(work, "seed2"), path.join(proj, ".bare"))
  git(path.join(proj, ".bare"), "remote", "remove", "origin")
  fs.writeFileSync(path.join(proj, ".git"), "gitdir: ./.bare\n")
  git(proj, "worktree", "add", "-q", "main", "main")
  git(proj, "worktree", "add", "-q", "-b", "feature", "feature")
  const sep = path.join(work, "src", "sep")
  fs.mkdirSync(sep, { recursive: true })
  fs.mkdirSync(path.join(work, "gitdirs"))
  git(sep, "init", "-q", `--separate-git-dir=${path.join(work, "gitdirs", "sep.git")}`)
  fs.writeFileSync(path.join(sep, "a"), "a\n")
  git(sep, "add", ".")
  git(sep, "commit", "-qm", "first")
  const sepWorktree = path.join(work, "src", "sep-wt")
  git(sep, "worktree", "add", "-q", "-b", "side", sepWorktree)
  const remoteId = openCodeRemoteId("github.com/acme/app")
  return {
    cloneA: { folder: cloneA, openCodeId: rootCommit(cloneA) },
    cloneB: { folder: cloneB, openCodeId: rootCommit(cloneB) },
    app: { folder: app, openCodeId: remoteId },
    appWorktree: { folder: appWorktree, openCodeId: remoteId },
    proj: { folder: proj, openCodeId: rootCommit(path.join(proj, "main")) },
    projMain: { folder: path.join(proj, "main"), openCodeId: rootCommit(path.join(proj, "main")) },
    projFeature: { folder: path.join(proj, "feature"), openCodeId: rootCommit(path.join(proj, "feature")) },
    sep: { folder: sep, openCodeId: rootCommit(sep) },
    sepWorktree: { folder: sepWorktree, openCodeId: rootCommit(sepWorktree) },
  }
}

/** What OpenCode 1.18.33's /experimental/session answers for sessions in these folders. */
function v1Client(sessions: ReadonlyArray<{ id: string; directory: string; projectID: string }>) {
  return {
    _client: {
      get: async () => ({
        data: sessions.map((s) => ({ id: s.id, title: s.id, directory: s.directory, projectID: s.projectID, time: { created: 1, updated: 2 } })),
        response: new Response(null),
      }),
    },
  }
}

async function v2Listing(ids: Record<string, string>): Promise<HostSession[]> {
  const byFolder = new Map(Object.entries(ids))
  const fake = new FakeOpenCode2({ projectIdOf: (directory) => byFolder.get(directory) ?? "global" })
  try {
    let ctx: V2Context | undefined
    await fake.setup({ id: "probe", setup: (given) => void (ctx = given as V2Context) }, work)
    for (const folder of byFolder.keys()) await fake.createSession(folder, folder)
    const host = createV2Host({
      ctx: () => ctx!,
      service: async () => ({ state: "absent", reason: "none" }) as never,
      lastService: () => undefined,
      observed: new ObservedSessions(),
      confined: new Map(),
      helperSystem: new Map(),
      log: () => {},
    })
    return (await host.listRootSessions({ signal: AbortSignal.timeout(10_000) })).sessions
  } finally {
    await fake.disposeAll()
  }
}

describe("one project rule on both hosts", () => {
  it("keys and names every layout the same through the 1.x and the 2.x adapter", async () => {
    const all = layouts()
    const v1 = createV1Host(v1Client(Object.entries(all).map(([name, l]) => ({ id: name, directory: l.folder, projectID: l.openCodeId }))) as never)
    const v1Sessions = (await v1.listRootSessions({ signal: AbortSignal.timeout(10_000) })).sessions
    const v2Sessions = await v2Listing(Object.fromEntries(Object.values(all).map((l) => [l.folder, l.openCodeId])))
    const resolver = new ProjectResolver(rules)
    const identity = (session: HostSession) => {
      const found = resolver.of(session.directory, session.project)
      return found && { key: found.key, name: found.name }
    }
    const v1ByFolder = Object.fromEntries(v1Sessions.map((s) => [s.directory, identity(s)]))
    const v2ByFolder = Object.fromEntries(v2Sessions.map((s) => [s.directory, identity(s)]))
    expect(v2ByFolder).toEqual(v1ByFolder)
    const of = (name: keyof typeof all) => v1ByFolder[all[name].folder]
    // Two clones: one key, the root commit OpenCode gives both; each clone keeps its folder's name.
    expect(of("cloneA")!.key).toBe(`host:${rootCommit(all.cloneA.folder)}`)
    expect(of("cloneB")!.key).toBe(of("cloneA")!.key)
    // A worktree and its main checkout, named by the remote.
    expect(of("appWorktree")).toEqual({ key: `host:${openCodeRemoteId("github.com/acme/app")}`, name: "github.com/acme/app" })
    expect(of("app")).toEqual(of("appWorktree"))
    // The `.bare` layout: its top and its worktrees, named after the folder holding `.bare`.
    expect(of("projMain")).toEqual({ key: `host:${all.projMain.openCodeId}`, name: "proj" })
    expect([of("proj"), of("projFeature")]).toEqual([of("projMain"), of("projMain")])
    // A --separate-git-dir repository and its worktree, named after the git folder (git records no main worktree).
    expect(of("sep")).toEqual({ key: `host:${all.sep.openCodeId}`, name: "sep" })
    expect(of("sepWorktree")).toEqual(of("sep"))
  })

  it("keys a folder outside any repository by its folder on both, though OpenCode 2 ids it and 1.x calls it global", async () => {
    const notes = path.join(work, "notes")
    fs.mkdirSync(notes)
    const v1 = createV1Host(v1Client([{ id: "n", directory: notes, projectID: "global" }]) as never)
    const [fromV1] = (await v1.listRootSessions({ signal: AbortSignal.timeout(10_000) })).sessions
    const [fromV2] = await v2Listing({ [notes]: "9b19fd5f0426a7399cef6559334beed84e9b2cc6" })
    const resolver = new ProjectResolver(rules)
    expect(resolver.of(fromV1!.directory, fromV1!.project)).toEqual({ key: `dir:${notes}`, name: "notes", source: "folder" })
    expect(resolver.of(fromV2!.directory, fromV2!.project)).toEqual(resolver.of(fromV1!.directory, fromV1!.project))
  })
})

describe("a home made under the old project rule", () => {
  let clock: number
  let memory: Memory | undefined

  beforeEach(() => {
    clock = Date.UTC(2026, 11, 1, 12)
  })
  afterEach(async () => {
    await memory?.dispose()
  })

  it("moves its records to the new projects at the next listing, and the project filter finds them", async () => {
    const home = path.join(work, "memory-home")
    const seed = repository(work, "seed")
    const cloneA = path.join(work, "src", "clone-a")
    const cloneB = path.join(work, "other", "clone-b")
    git(work, "clone", "-q", seed, cloneA)
    git(work, "clone", "-q", seed, cloneB)
    const root = rootCommit(cloneA)
    const proj = path.join(work, "src", "proj")
    git(work, "clone", "-q", "--bare", repository(work, "seed2"), path.join(proj, ".bare"))
    git(path.join(proj, ".bare"), "remote", "remove", "origin")
    fs.writeFileSync(path.join(proj, ".git"), "gitdir: ./.bare\n")
    git(proj, "worktree", "add", "-q", "main", "main")
    // A home folder behind a link (as where /home is one): the old rule took its real path for a project.
    const realHome = path.join(work, "data", "u")
    fs.mkdirSync(realHome, { recursive: true })
    fs.symlinkSync(path.join(work, "data"), path.join(work, "users"))

    // What the old rule stored: each clone's own git folder, `.bare` for the worktree, the home as a folder project.
    const old = {
      ses_a: { cwd: cloneA, key: `git:${path.join(cloneA, ".git")}`, name: "clone-a" },
      ses_b: { cwd: cloneB, key: `git:${path.join(cloneB, ".git")}`, name: "clone-b" },
      ses_archived: { cwd: cloneA, key: `git:${path.join(cloneA, ".git")}`, name: "clone-a" },
      ses_m: { cwd: path.join(proj, "main"), key: `git:${path.join(proj, ".bare")}`, name: ".bare" },
      ses_h: { cwd: realHome, key: `dir:${realHome}`, name: "u" },
    }
    fs.mkdirSync(home, { recursive: true })
    const seeded = openDatabase(path.join(home, "memory.db")).db
    try {
      const jobs = new Stage1Jobs(seeded, () => clock)
      for (const [id, record] of Object.entries(old)) {
        const claim = jobs.claim({ sessionId: id, updatedAt: clock - 7 * HOUR }, { workerId: "w", maxRunning: 9 })
        if (claim.type !== "claimed") throw new Error(claim.type)
        jobs.succeed(id, claim.token, { rawMemory: `- FACT-${id}`, rolloutSummary: `FACT-${id}`, slug: null, cwd: record.cwd, project: { key: record.key, name: record.name } })
      }
    } finally {
      seeded.close()
    }

    // The same sessions as OpenCode now lists them, with its project ids.
    const host = new FakeHost(() => clock)
    const listed = (id: string, directory: string, project?: string, extra: Partial<HostSession> = {}) =>
      host.addSession({ id, directory, updatedAt: clock - 7 * HOUR, ...(project ? { project: { key: project } } : {}), ...extra })
    listed("ses_a", cloneA, root)
    listed("ses_b", cloneB, root)
    listed("ses_archived", cloneA, root, { archived: true })
    listed("ses_m", path.join(proj, "main"), rootCommit(path.join(proj, "main")))
    listed("ses_h", realHome)
    memory = new Memory({ home }, { host, env: { TMPDIR: path.join(work, "tmp") }, homedir: path.join(work, "users", "u"), now: () => clock })
    await memory.start()
    await memory.pipeline("v1").phase1!.pass()

    const store = memory.pipeline("v1").store()!
    const rows = Object.fromEntries(store.unconsolidatedRecords().map((row) => [row.session_id, [row.project_key, row.project_name]]))
    expect(rows).toEqual({
      ses_a: [`host:${root}`, "clone-a"],
      ses_b: [`host:${root}`, "clone-b"],
      // Archived: not listed as a project, it follows the records that shared its old key.
      ses_archived: [`host:${root}`, "clone-a"],
      ses_m: [`host:${rootCommit(path.join(proj, "main"))}`, "proj"],
      ses_h: [null, null],
    })
    expect(store.projectCounts().map((p) => [p.name, p.records])).toEqual([
      ["clone-b", 3],
      ["proj", 1],
    ])
    const records = store.unconsolidatedRecords().map((row) => ({ sessionId: row.session_id, rawMemory: row.raw_memory, rolloutSummary: row.rollout_summary, project: { key: row.project_key, name: row.project_name } }))
    const found = (project: string) => [...new Set(searchRecords(records, { queries: ["FACT-"], project }).map((match) => match.session_id))].sort()
    expect(found("proj")).toEqual(["ses_m"])
    expect(found(`host:${root}`)).toEqual(["ses_a", "ses_archived", "ses_b"])
    expect(found(".bare")).toEqual([])
  })
})
