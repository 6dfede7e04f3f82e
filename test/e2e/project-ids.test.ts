// OpenCode's own project id, on the real 1.18.33 and the real 2.1.2, for every repository layout
// D26 covers: sessions are created in each folder on both, listed through this plugin's 1.x and
// 2.x adapters as the plugin lists them, and resolved by the same rules. Both lines give a folder
// the same id (the origin's hash, else the root commit; none for a repository without a commit,
// a folder id on 2.x only for a plain folder), so two clones, a worktree and its checkout, the
// `.bare` layout and a `--separate-git-dir` repository key the same project on both.
import fs from "node:fs"
import path from "node:path"
import { createOpencodeClient } from "@opencode-ai/sdk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HostSession } from "../../src/host.js"
import { ServiceClient } from "../../src/util/opencode-service.js"
import { createV1Host } from "../../src/v1/host.js"
import { createV2Host, ObservedSessions } from "../../src/v2/host.js"
import { ProjectResolver } from "../../src/write/phase1/project-identity.js"
import { git, openCodeRemoteId, repository, rootCommit } from "../write/phase1/repositories.js"
import { createSandbox, startServe, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { createSandbox2, startServe2, type Sandbox2, type Serve2 } from "./support/opencode2.js"
import { ServerApi } from "./support/server-api.js"

/** No model is ever asked: sessions are only created and listed. */
const NO_MODEL = "http://127.0.0.1:9/v1"

describe("OpenCode's project id on both lines, and one project rule over it", () => {
  let sandbox1: Sandbox
  let sandbox2: Sandbox2
  let serve1: ServeHandle | undefined
  let serve2: Serve2 | undefined
  let work: string
  const folders: Record<string, string> = {}
  let v1: HostSession[] = []
  let v2: HostSession[] = []

  beforeAll(async () => {
    sandbox1 = await createSandbox({ llmUrl: NO_MODEL, configScope: "global", plugins: [] })
    sandbox2 = await createSandbox2({ llmUrl: NO_MODEL, plugins: [] })
    fs.mkdirSync(path.join(sandbox1.root, "work"))
    work = fs.realpathSync(path.join(sandbox1.root, "work"))
    const seed = repository(work, "seed")
    folders.cloneA = path.join(work, "src", "clone-a")
    folders.cloneB = path.join(work, "other", "clone-b")
    git(work, "clone", "-q", seed, folders.cloneA)
    git(work, "clone", "-q", seed, folders.cloneB)
    folders.app = repository(work, "src/app", "https://deploy:s3cr3t@github.com/Acme/App.git")
    folders.appWorktree = path.join(work, "src", "app-wt")
    git(folders.app, "worktree", "add", "-q", "-b", "side", folders.appWorktree)
    folders.proj = path.join(work, "src", "proj")
    git(work, "clone", "-q", "--bare", repository(work, "seed2"), path.join(folders.proj, ".bare"))
    git(path.join(folders.proj, ".bare"), "remote", "remove", "origin")
    fs.writeFileSync(path.join(folders.proj, ".git"), "gitdir: ./.bare\n")
    git(folders.proj, "worktree", "add", "-q", "main", "main")
    git(folders.proj, "worktree", "add", "-q", "-b", "feature", "feature")
    folders.projMain = path.join(folders.proj, "main")
    folders.projFeature = path.join(folders.proj, "feature")
    folders.sep = path.join(work, "src", "sep")
    fs.mkdirSync(folders.sep, { recursive: true })
    fs.mkdirSync(path.join(work, "gitdirs"))
    git(folders.sep, "init", "-q", `--separate-git-dir=${path.join(work, "gitdirs", "sep.git")}`)
    fs.writeFileSync(path.join(folders.sep, "a"), "a\n")
    git(folders.sep, "add", ".")
    git(folders.sep, "commit", "-qm", "first")
    folders.sepWorktree = path.join(work, "src", "sep-wt")
    git(folders.sep, "worktree", "add", "-q", "-b", "side", folders.sepWorktree)
    folders.fresh = repository(work, "src/fresh", undefined, { empty: true })
    folders.notes = path.join(work, "notes")
    fs.mkdirSync(folders.notes)

    serve1 = await startServe(sandbox1)
    serve2 = await startServe2(sandbox2)
    for (const [name, folder] of Object.entries(folders)) {
      await new ServerApi(serve1.url, folder).createSession(name)
      await serve2.api.createSession(folder)
    }
    // As the plugin lists them: 1.x's client, 2.x's service client.
    v1 = (await createV1Host(createOpencodeClient({ baseUrl: serve1.url }) as never).listRootSessions({ signal: AbortSignal.timeout(30_000) })).sessions
    const registration = { url: serve2.url, pid: serve2.pid, password: sandbox2.env.OPENCODE_PASSWORD! }
    const host2 = createV2Host({
      ctx: () => ({ session: {} }) as never,
      service: async () => ({ state: "ready", client: new ServiceClient(registration, fetch), registration, route: "/api/session" }),
      lastService: () => undefined,
      observed: new ObservedSessions(),
      confined: new Map(),
      helperSystem: new Map(),
      log: () => {},
    })
    v2 = (await host2.listRootSessions({ signal: AbortSignal.timeout(30_000) })).sessions
  }, 180_000)

  afterAll(async () => {
    await serve1?.stop()
    await serve2?.stop()
    await sandbox1?.cleanup()
    await sandbox2?.cleanup()
  })

  const idOn = (sessions: HostSession[], folder: string) => {
    const found = sessions.filter((s) => s.directory === folder)
    expect(found, `one session in ${folder}`).toHaveLength(1)
    return found[0]!.project?.key
  }

  it("gives each folder the same id on 1.18.33 and 2.1.2: the origin's hash, else the root commit", () => {
    const expected: Record<string, string> = {
      cloneA: rootCommit(folders.cloneA!),
      cloneB: rootCommit(folders.cloneA!),
      app: openCodeRemoteId("github.com/Acme/App"),
      appWorktree: openCodeRemoteId("github.com/Acme/App"),
      proj: rootCommit(folders.projMain!),
      projMain: rootCommit(folders.projMain!),
      projFeature: rootCommit(folders.projMain!),
      sep: rootCommit(folders.sep!),
      sepWorktree: rootCommit(folders.sep!),
      // No commit and no remote: OpenCode has no id.
      fresh: "global",
    }
    for (const [name, id] of Object.entries(expected)) {
      expect({ name, v1: idOn(v1, folders[name]!), v2: idOn(v2, folders[name]!) }).toEqual({ name, v1: id, v2: id })
    }
    // A plain folder: "global" on 1.x, an id of the folder on 2.x.
    expect(idOn(v1, folders.notes!)).toBe("global")
    expect(idOn(v2, folders.notes!)).toMatch(/^[0-9a-f]{40}$/)
  })

  it("resolves every folder to one project per repository, the same on both lines", () => {
    const rules = { home: sandbox1.home, tempDirs: [path.join(sandbox1.root, "tmp")], memoryDirs: [sandbox1.memoryHome] }
    const resolve = (sessions: HostSession[]) => {
      const resolver = new ProjectResolver(rules)
      return Object.fromEntries(
        Object.entries(folders).map(([name, folder]) => {
          const session = sessions.find((s) => s.directory === folder)!
          const found = resolver.of(session.directory, session.project)
          return [name, found && { key: found.key, name: found.name }]
        }),
      )
    }
    const one = resolve(v1)
    expect(resolve(v2)).toEqual(one)
    expect(one).toEqual({
      cloneA: { key: `host:${rootCommit(folders.cloneA!)}`, name: "clone-a" },
      cloneB: { key: `host:${rootCommit(folders.cloneA!)}`, name: "clone-b" },
      app: { key: `host:${openCodeRemoteId("github.com/Acme/App")}`, name: "github.com/Acme/App" },
      appWorktree: { key: `host:${openCodeRemoteId("github.com/Acme/App")}`, name: "github.com/Acme/App" },
      proj: { key: `host:${rootCommit(folders.projMain!)}`, name: "proj" },
      projMain: { key: `host:${rootCommit(folders.projMain!)}`, name: "proj" },
      projFeature: { key: `host:${rootCommit(folders.projMain!)}`, name: "proj" },
      sep: { key: `host:${rootCommit(folders.sep!)}`, name: "sep" },
      sepWorktree: { key: `host:${rootCommit(folders.sep!)}`, name: "sep" },
      fresh: { key: `git:${path.join(folders.fresh!, ".git")}`, name: "fresh" },
      notes: { key: `dir:${folders.notes}`, name: "notes" },
    })
    expect(JSON.stringify(one)).not.toContain("s3cr3t")
  })

  it("finds without the host the id 1.18.33 cached in each repository's common folder", () => {
    const resolver = new ProjectResolver({ home: sandbox1.home, tempDirs: [], memoryDirs: [] })
    for (const name of ["cloneA", "cloneB", "projMain", "sepWorktree"]) {
      expect(resolver.of(folders[name]!)?.key).toBe(`host:${idOn(v1, folders[name]!)}`)
    }
  })
})
