import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { normalizeRemote, openCodeRemote, projectIdentity, ProjectResolver, projectRules, realPath, type ProjectRules } from "../../../src/write/phase1/project-identity.js"
import { git, openCodeRemoteId, repository as makeRepository, rootCommit } from "./repositories.js"

let root: string
let rules: ProjectRules

// The folders under test live in a temp folder, which the rules would exclude: here the "temp
// folders" are a separate scratch folder inside the root, and the home another.
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "project-identity-")))
  rules = { home: path.join(root, "home"), tempDirs: [path.join(root, "scratch")], memoryDirs: [path.join(root, "home", ".codex-memory")] }
  fs.mkdirSync(path.join(root, "home", ".codex-memory"), { recursive: true })
})
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true })
})

const repository = (relative: string, origin?: string, options?: { empty?: boolean }) => makeRepository(root, relative, origin, options)

describe("projectIdentity", () => {
  it("makes a checkout, its subfolders and its linked worktrees one project, keyed by OpenCode's id of the remote and named by it", () => {
    const app = repository("src/app", "https://github.com/Acme/app.git")
    const web = path.join(app, "packages", "web")
    fs.mkdirSync(web, { recursive: true })
    const worktree = path.join(root, "src", "app-wt", "feature")
    git(app, "worktree", "add", "-q", worktree, "-b", "feature")

    const main = projectIdentity(app, rules)
    expect(main).toEqual({ key: `host:${openCodeRemoteId("github.com/Acme/app")}`, name: "github.com/Acme/app", source: "repository" })
    expect(projectIdentity(web, rules)).toEqual(main)
    expect(projectIdentity(worktree, rules)).toEqual(main)
    expect(projectIdentity(path.join(worktree, "."), rules)).toEqual(main)
  })

  it("makes the worktrees of a bare repository one project, named after the bare folder", () => {
    const seed = repository("seed")
    const bare = path.join(root, "src", "tool.git")
    git(root, "clone", "-q", "--bare", seed, bare)
    const main = path.join(root, "src", "tool-main")
    const feature = path.join(root, "src", "tool-feature")
    git(bare, "worktree", "add", "-q", main, "main")
    git(bare, "worktree", "add", "-q", feature, "-b", "feature")
    const one = projectIdentity(main, rules)
    // Its origin is a local path (no remote id) and OpenCode has cached no id: the common folder.
    expect(one).toEqual({ key: `git:${bare}`, name: "tool", source: "repository" })
    expect(projectIdentity(path.join(feature, "sub"), rules)).toEqual(one)
  })

  it("names every folder of the `.bare` layout after the folder holding it, never `.bare`", () => {
    const seed = repository("seed")
    const proj = path.join(root, "src", "proj")
    git(root, "clone", "-q", "--bare", seed, path.join(proj, ".bare"))
    fs.writeFileSync(path.join(proj, ".git"), "gitdir: ./.bare\n")
    git(proj, "worktree", "add", "-q", "main", "main")
    git(proj, "worktree", "add", "-q", "-b", "feature", "feature")
    const identities = [proj, path.join(proj, "main"), path.join(proj, "feature", "src")].map((dir) => {
      if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true })
      return projectIdentity(dir, rules)
    })
    expect(identities).toEqual(Array(3).fill({ key: `git:${path.join(proj, ".bare")}`, name: "proj", source: "repository" }))
    // With a remote the name and the key come from it, the same from every folder.
    git(path.join(proj, ".bare"), "remote", "set-url", "origin", "git@github.com:acme/proj.git")
    const withRemote = { key: `host:${openCodeRemoteId("github.com/acme/proj")}`, name: "github.com/acme/proj", source: "repository" }
    expect(projectIdentity(path.join(proj, "main"), rules)).toEqual(withRemote)
    expect(projectIdentity(proj, rules)).toEqual(withRemote)
  })

  it("gives a --separate-git-dir repository and its linked worktree one key and one name, never `.git`", () => {
    const gitDir = path.join(root, "gitdirs", "work.git")
    const work = path.join(root, "src", "work")
    fs.mkdirSync(path.join(root, "gitdirs"), { recursive: true })
    fs.mkdirSync(work, { recursive: true })
    git(work, "init", "-q", `--separate-git-dir=${gitDir}`)
    fs.writeFileSync(path.join(work, "a.txt"), "a\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "first")
    const linked = path.join(root, "src", "work-wt")
    git(work, "worktree", "add", "-q", "-b", "side", linked)
    const one = projectIdentity(work, rules)
    // git itself lists the git folder as the main worktree: the git folder names the repository.
    expect(one).toEqual({ key: `git:${gitDir}`, name: "work", source: "repository" })
    expect(projectIdentity(path.join(linked), rules)).toEqual(one)
    // What OpenCode 1.x caches in the common folder (the root commit, for a repository without a remote) is its key.
    fs.writeFileSync(path.join(gitDir, "opencode"), rootCommit(work))
    expect(projectIdentity(linked, rules)).toEqual({ key: `host:${rootCommit(work)}`, name: "work", source: "repository" })
    expect(projectIdentity(work, rules)).toEqual(projectIdentity(linked, rules))
  })

  it("names a repository without a remote by its top folder, and keeps a submodule its own project", () => {
    const lib = repository("src/lib")
    const app = repository("src/app")
    git(app, "submodule", "add", "-q", lib, "vendor/lib")
    expect(projectIdentity(app, rules)).toMatchObject({ name: "app", source: "repository" })
    const sub = projectIdentity(path.join(app, "vendor", "lib"), rules)
    expect(sub).toMatchObject({ name: "lib", source: "repository" })
    expect(sub!.key).not.toBe(projectIdentity(app, rules)!.key)
    expect(sub!.key).toBe(`git:${path.join(app, ".git", "modules", "vendor", "lib")}`)
  })

  it("names a repository by its remote when it has one, by its folder when not", () => {
    expect(projectIdentity(repository("src/plain"), rules)).toMatchObject({ name: "plain", key: `git:${path.join(root, "src", "plain", ".git")}` })
    expect(projectIdentity(repository("src/hosted", "ssh://git@git.example.com:2222/team/hosted.git"), rules)).toEqual({
      key: `host:${openCodeRemoteId("git.example.com/team/hosted")}`,
      name: "git.example.com/team/hosted",
      source: "repository",
    })
    // Only origin gives OpenCode's id; another remote still names it.
    const upstream = repository("src/fork")
    git(upstream, "remote", "add", "upstream", "https://github.com/acme/fork.git")
    expect(projectIdentity(upstream, rules)).toEqual({ key: `git:${path.join(upstream, ".git")}`, name: "github.com/acme/fork", source: "repository" })
  })

  it("keys a repository with no commit yet as OpenCode does: the remote's id, else (OpenCode's `global`) the common folder", () => {
    const fresh = repository("src/fresh", undefined, { empty: true })
    expect(projectIdentity(fresh, rules, { key: "global" })).toEqual({ key: `git:${path.join(fresh, ".git")}`, name: "fresh", source: "repository" })
    const hosted = repository("src/hosted-fresh", "https://github.com/acme/fresh.git", { empty: true })
    expect(projectIdentity(hosted, rules, { key: "global" })).toEqual({ key: `host:${openCodeRemoteId("github.com/acme/fresh")}`, name: "github.com/acme/fresh", source: "repository" })
  })

  it("gives a folder outside any repository its own project, and no project for home, temp, memory or /", () => {
    const notes = path.join(root, "notes", "2026")
    fs.mkdirSync(notes, { recursive: true })
    expect(projectIdentity(notes, rules)).toEqual({ key: `dir:${notes}`, name: "2026", source: "folder" })
    expect(projectIdentity(rules.home, rules)).toBeUndefined()
    expect(projectIdentity(path.join(root, "scratch", "subagent-1"), rules)).toBeUndefined()
    expect(projectIdentity(path.join(rules.home, ".codex-memory", "memories"), rules)).toBeUndefined()
    expect(projectIdentity(path.parse(root).root, rules)).toBeUndefined()
    // A subfolder of home is a project; a repository whose top is home (dotfiles) is not.
    const work = path.join(rules.home, "work")
    fs.mkdirSync(work)
    expect(projectIdentity(work, rules)).toEqual({ key: `dir:${work}`, name: "work", source: "folder" })
    repository("home", "git@github.com:me/dotfiles.git")
    expect(projectIdentity(work, rules)).toEqual({ key: `dir:${work}`, name: "work", source: "folder" })
    expect(projectIdentity(rules.home, rules)).toBeUndefined()
    // Whatever the host says of the dotfiles repository.
    expect(projectIdentity(work, rules, { key: "prj_dotfiles" })).toEqual({ key: `dir:${work}`, name: "work", source: "folder" })
  })

  it("lets an explicit mapping win, the longest folder first", () => {
    const app = repository("src/app")
    const mappings = { [path.join(root, "src")]: "everything", [app]: "The App" }
    expect(projectIdentity(path.join(app, "x"), { ...rules, mappings })).toEqual({ key: "map:The App", name: "The App", source: "mapping" })
    expect(projectIdentity(path.join(root, "src", "other"), { ...rules, mappings })).toMatchObject({ name: "everything" })
  })

  it("fails open on a broken .git file or a FIFO where git's files should be", () => {
    const broken = path.join(root, "broken")
    fs.mkdirSync(broken)
    fs.writeFileSync(path.join(broken, ".git"), "not a gitdir line\n")
    expect(projectIdentity(broken, rules)).toEqual({ key: `dir:${broken}`, name: "broken", source: "folder" })
    const fifo = path.join(root, "fifo")
    fs.mkdirSync(path.join(fifo, ".git"), { recursive: true })
    execFileSync("mkfifo", [path.join(fifo, ".git", "HEAD")])
    expect(projectIdentity(fifo, rules)).toMatchObject({ source: "folder" })
  })

  it("never lets a remote's credentials into the name", () => {
    const app = repository("src/secret", "https://deploy:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/secret.git")
    const identity = projectIdentity(app, rules)!
    expect(identity.name).toBe("github.com/acme/secret")
    expect(JSON.stringify(identity)).not.toContain("ghp_")
  })
})

describe("clones of one repository", () => {
  it("are one project, keyed by the root commit OpenCode gives both (1.x caches it in the common folder)", () => {
    const seed = repository("seed")
    const a = path.join(root, "src", "clone-a")
    const b = path.join(root, "elsewhere", "clone-b")
    git(root, "clone", "-q", seed, a)
    git(root, "clone", "-q", seed, b)
    const id = rootCommit(a)
    expect(rootCommit(b)).toBe(id)
    // The host's id, as both lines list it on every session.
    expect(projectIdentity(a, rules, { key: id })).toEqual({ key: `host:${id}`, name: "clone-a", source: "host" })
    expect(projectIdentity(path.join(b), rules, { key: id })!.key).toBe(`host:${id}`)
    // Without the host: what OpenCode 1.x left in each clone's git folder.
    for (const clone of [a, b]) fs.writeFileSync(path.join(clone, ".git", "opencode"), `${id}\n`)
    expect(projectIdentity(a, rules)!.key).toBe(`host:${id}`)
    expect(projectIdentity(b, rules)!.key).toBe(`host:${id}`)
  })

  it("of one remote are one project without any help from the host", () => {
    const a = repository("src/one", "https://github.com/acme/shared.git")
    const b = repository("src/two", "git@github.com:acme/shared.git")
    expect(projectIdentity(a, rules)).toEqual(projectIdentity(b, rules))
    expect(projectIdentity(a, rules)!.key).toBe(`host:${openCodeRemoteId("github.com/acme/shared")}`)
  })
})

describe("the host's own identity", () => {
  it("is the key of a repository wherever it is given, named by the remote; OpenCode's \"global\" is no project key", () => {
    const app = repository("src/app", "git@github.com:acme/app.git")
    expect(projectIdentity(path.join(app, "web"), rules, { key: "prj_1" })).toEqual({ key: "host:prj_1", name: "github.com/acme/app", source: "host" })
    expect(projectIdentity(app, rules, { key: "global" })).toEqual({ key: `host:${openCodeRemoteId("github.com/acme/app")}`, name: "github.com/acme/app", source: "repository" })
  })

  it("is not taken for a folder outside any repository (OpenCode 2 ids every folder, 1.x none)", () => {
    const notes = path.join(root, "notes")
    fs.mkdirSync(notes)
    expect(projectIdentity(notes, rules, { key: "9b19fd5f0426a7399cef6559334beed84e9b2cc6" })).toEqual({ key: `dir:${notes}`, name: "notes", source: "folder" })
    expect(projectIdentity(notes, rules, { key: "global" })).toEqual(projectIdentity(notes, rules, { key: "9b19fd5f0426a7399cef6559334beed84e9b2cc6" }))
  })

  it("does not make home, temp or memory folders a project, and yields to an explicit mapping", () => {
    expect(projectIdentity(path.join(root, "scratch", "x"), rules, { key: "prj_1" })).toBeUndefined()
    const notes = path.join(root, "notes")
    expect(projectIdentity(notes, { ...rules, mappings: { [notes]: "Notes" } }, { key: "prj_1" })).toMatchObject({ key: "map:Notes", source: "mapping" })
  })
})

describe("symlinks", () => {
  it("are resolved on both sides: a linked home is still home, and `~/` mappings apply to its real folders", () => {
    // A system where /home is a link: the home folder as the OS names it is a link; OpenCode stores real paths.
    const real = path.join(root, "data", "home", "u")
    fs.mkdirSync(path.join(real, "work", "api"), { recursive: true })
    fs.symlinkSync(path.join(root, "data", "home"), path.join(root, "linked-home"))
    const homedir = path.join(root, "linked-home", "u")
    const linked = projectRules({ homedir, env: { TMPDIR: path.join(root, "scratch") }, memoryDirs: [path.join(homedir, ".codex-memory")], mappings: { "~/work": "work" } })
    expect(projectIdentity(real, linked)).toBeUndefined()
    expect(projectIdentity(homedir, linked)).toBeUndefined()
    expect(projectIdentity(path.join(real, "work", "api"), linked)).toEqual({ key: "map:work", name: "work", source: "mapping" })
    expect(projectIdentity(path.join(real, ".codex-memory", "memories"), linked)).toBeUndefined()
    // A dotfiles repository at the real home is no project for a folder under it.
    makeRepository(path.join(root, "data", "home"), "u")
    const other = path.join(real, "other")
    fs.mkdirSync(other)
    expect(projectIdentity(other, linked)).toEqual({ key: `dir:${other}`, name: "other", source: "folder" })
    // The other way round: a home named by its real path, a session folder named through the link.
    expect(projectIdentity(homedir, { ...rules, home: real })).toBeUndefined()
  })

  it("are resolved for project_names folders, whichever side the link is on", () => {
    const app = path.join(root, "src", "app")
    fs.mkdirSync(path.join(app, "sub"), { recursive: true })
    fs.mkdirSync(path.join(root, "links"))
    fs.symlinkSync(app, path.join(root, "links", "app"))
    expect(projectIdentity(path.join(app, "sub"), { ...rules, mappings: { [path.join(root, "links", "app")]: "linked app" } })).toMatchObject({ key: "map:linked app" })
    expect(projectIdentity(path.join(root, "links", "app", "sub"), { ...rules, mappings: { [app]: "real app" } })).toMatchObject({ key: "map:real app" })
    // The longest real folder wins, however each is spelled.
    const both = { [path.join(root, "links", "app")]: "inner", [path.join(root, "src")]: "outer" }
    expect(projectIdentity(path.join(app, "sub"), { ...rules, mappings: both })).toMatchObject({ name: "inner" })
  })

  it("are resolved for temp and memory folders and for the session's folder", () => {
    const realTemp = path.join(root, "real-tmp")
    fs.mkdirSync(path.join(realTemp, "agent"), { recursive: true })
    fs.symlinkSync(realTemp, path.join(root, "tmp-link"))
    const memory = path.join(root, "real-memory")
    fs.mkdirSync(path.join(memory, "memories"), { recursive: true })
    fs.symlinkSync(memory, path.join(root, "memory-link"))
    const linked = { ...rules, tempDirs: [path.join(root, "tmp-link")], memoryDirs: [path.join(root, "memory-link")] }
    expect(projectIdentity(path.join(realTemp, "agent"), linked)).toBeUndefined()
    expect(projectIdentity(path.join(memory, "memories"), linked)).toBeUndefined()
    // A folder named through a link is keyed by its real path, so both spellings are one project.
    const app = repository("src/app")
    fs.symlinkSync(path.join(root, "src"), path.join(root, "src-link"))
    expect(projectIdentity(path.join(root, "src-link", "app"), rules)).toEqual(projectIdentity(app, rules))
    const notes = path.join(root, "notes")
    fs.mkdirSync(notes)
    fs.symlinkSync(notes, path.join(root, "notes-link"))
    expect(projectIdentity(path.join(root, "notes-link"), rules)).toEqual({ key: `dir:${notes}`, name: "notes", source: "folder" })
  })

  it("realPath resolves a folder that no longer exists through its deepest existing one", () => {
    fs.mkdirSync(path.join(root, "real"))
    fs.symlinkSync(path.join(root, "real"), path.join(root, "link"))
    expect(realPath(path.join(root, "link", "gone", "deeper"))).toBe(path.join(root, "real", "gone", "deeper"))
    expect(realPath("/")).toBe("/")
  })
})

describe("projectRules", () => {
  it("takes the temp folders from the environment (both spellings of a linked one) and expands ~ in mappings", () => {
    const real = path.join(root, "real-tmp")
    fs.mkdirSync(real)
    const link = path.join(root, "tmp-link")
    fs.symlinkSync(real, link)
    const built = projectRules({ homedir: "/home/u", env: { TMPDIR: link, TEMP: "relative/ignored" }, memoryDirs: ["/home/u/.mem"], mappings: { "~/src/app": "app", "~": "home stuff", "/abs": "abs" } })
    expect(built.tempDirs).toEqual([link, real])
    expect(built.mappings).toEqual({ "/home/u/src/app": "app", "/home/u": "home stuff", "/abs": "abs" })
    expect(projectRules({ homedir: "/home/u", env: {}, memoryDirs: [] }).tempDirs).toContain("/tmp")
  })
})

describe("ProjectResolver", () => {
  it("reads git's files once per folder for a few minutes, then again", () => {
    let now = 0
    const resolver = new ProjectResolver(rules, () => now)
    const dir = path.join(root, "later")
    fs.mkdirSync(dir)
    expect(resolver.of(dir)).toMatchObject({ source: "folder" })
    repository("later")
    expect(resolver.of(dir)).toMatchObject({ source: "folder" })
    now += 6 * 60_000
    expect(resolver.of(dir)).toMatchObject({ source: "repository" })
  })
})

describe("openCodeRemote", () => {
  it("reduces a remote as OpenCode does before hashing it, nothing decoded and the path's case kept", () => {
    expect(openCodeRemote("https://user:pw@GitHub.com/Acme/App.git")).toBe("github.com/Acme/App")
    expect(openCodeRemote("git@github.com:org/repo.git")).toBe("github.com/org/repo")
    expect(openCodeRemote("ssh://git@git.example.com:2222/team/repo/")).toBe("git.example.com/team/repo")
    expect(openCodeRemote("git://Host.Example/x.git/")).toBe("host.example/x")
    expect(openCodeRemote("https://h/a%20b.git?x=1")).toBe("h/a%20b")
    // A URL parser takes `host:path` without a user for a scheme with no host: no id, as in OpenCode.
    expect(openCodeRemote("github.com:org/repo")).toBeUndefined()
    expect(openCodeRemote("/srv/git/repo.git")).toBeUndefined()
    expect(openCodeRemote("file:///srv/git/repo.git")).toBeUndefined()
    expect(openCodeRemote("C:\\repos\\app")).toBeUndefined()
  })

  it("gives the id both OpenCode lines computed for a repository whose origin is https://github.com/Acme/App.git", () => {
    // Read from the project table of OpenCode 1.18.33 (`debug scrap`) and 2.1.2 (its database) for such a repository.
    expect(openCodeRemoteId(openCodeRemote("https://github.com/Acme/App.git")!)).toBe("421627ddecb5d8121bbc38f403de81320c0efdec")
  })
})

describe("normalizeRemote", () => {
  it("reduces the URL forms git accepts to host/path", () => {
    expect(normalizeRemote("https://user:pw@GitHub.com/org/repo.git")).toBe("github.com/org/repo")
    expect(normalizeRemote("git@github.com:org/repo.git")).toBe("github.com/org/repo")
    expect(normalizeRemote("ssh://git@git.example.com:2222/team/repo")).toBe("git.example.com/team/repo")
    expect(normalizeRemote("https://host/org/repo.git?token=abc#x")).toBe("host/org/repo")
    expect(normalizeRemote("https://host/org/%E0%A4%A.git")).toBeUndefined()
  })

  it("gives nothing for local remotes", () => {
    expect(normalizeRemote("/srv/git/repo.git")).toBeUndefined()
    expect(normalizeRemote("file:///srv/git/repo.git")).toBeUndefined()
    expect(normalizeRemote("../repo")).toBeUndefined()
    expect(normalizeRemote("C:\\repos\\app")).toBeUndefined()
  })
})
