import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { normalizeRemote, projectIdentity, ProjectResolver, projectRules, type ProjectRules } from "../../../src/write/phase1/project-identity.js"
import { git, repository as makeRepository } from "./repositories.js"

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

const repository = (relative: string, origin?: string) => makeRepository(root, relative, origin)

describe("projectIdentity", () => {
  it("makes a checkout, its subfolders and its linked worktrees one project, named by the remote", () => {
    const app = repository("src/app", "https://github.com/Acme/app.git")
    const web = path.join(app, "packages", "web")
    fs.mkdirSync(web, { recursive: true })
    const worktree = path.join(root, "src", "app-wt", "feature")
    git(app, "worktree", "add", "-q", worktree, "-b", "feature")

    const main = projectIdentity(app, rules)
    expect(main).toEqual({ key: `git:${path.join(app, ".git")}`, name: "github.com/Acme/app", source: "repository" })
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
    expect(one).toEqual({ key: `git:${bare}`, name: "tool", source: "repository" })
    expect(projectIdentity(path.join(feature, "sub"), rules)).toEqual(one)
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

describe("the host's own identity", () => {
  it("is the key wherever it is given, named by the remote; OpenCode's \"global\" is no project key", () => {
    const app = repository("src/app", "git@github.com:acme/app.git")
    expect(projectIdentity(path.join(app, "web"), rules, { key: "prj_1" })).toEqual({ key: "host:prj_1", name: "github.com/acme/app", source: "host" })
    expect(projectIdentity(app, rules, { key: "prj_1", name: "App" })).toEqual({ key: "host:prj_1", name: "App", source: "host" })
    expect(projectIdentity(app, rules, { key: "global" })).toMatchObject({ source: "repository", key: `git:${path.join(app, ".git")}` })
  })

  it("does not make home, temp or memory folders a project, and yields to an explicit mapping", () => {
    expect(projectIdentity(path.join(root, "scratch", "x"), rules, { key: "prj_1" })).toBeUndefined()
    const notes = path.join(root, "notes")
    expect(projectIdentity(notes, { ...rules, mappings: { [notes]: "Notes" } }, { key: "prj_1" })).toMatchObject({ key: "map:Notes", source: "mapping" })
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

describe("normalizeRemote", () => {
  it("reduces the URL forms git accepts to host/path", () => {
    expect(normalizeRemote("https://user:pw@GitHub.com/org/repo.git")).toBe("github.com/org/repo")
    expect(normalizeRemote("git@github.com:org/repo.git")).toBe("github.com/org/repo")
    expect(normalizeRemote("ssh://git@git.example.com:2222/team/repo")).toBe("git.example.com/team/repo")
    expect(normalizeRemote("https://host/org/repo.git?token=abc#x")).toBe("host/org/repo")
  })

  it("gives nothing for local remotes", () => {
    expect(normalizeRemote("/srv/git/repo.git")).toBeUndefined()
    expect(normalizeRemote("file:///srv/git/repo.git")).toBeUndefined()
    expect(normalizeRemote("../repo")).toBeUndefined()
    expect(normalizeRemote("C:\\repos\\app")).toBeUndefined()
  })
})
