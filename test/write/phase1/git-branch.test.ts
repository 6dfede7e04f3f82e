import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { gitBranch } from "../../../src/write/phase1/git-branch.js"

let root: string
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "git-branch-"))
})
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true })
})

/** A folder with a `.git` folder whose HEAD holds `head`. */
function repo(relative: string, head: string): string {
  const dir = path.join(root, relative)
  fs.mkdirSync(path.join(dir, ".git"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".git", "HEAD"), head)
  return dir
}

const SHA = "0123456789abcdef0123456789abcdef01234567"

describe("gitBranch", () => {
  it("reads the branch of HEAD", () => {
    expect(gitBranch(repo("a", "ref: refs/heads/main\n"))).toBe("main")
    expect(gitBranch(repo("b", "ref: refs/heads/feature/v2-memory\r\n"))).toBe("feature/v2-memory")
  })

  it("finds the repository from a folder deep inside it", () => {
    const dir = repo("r", "ref: refs/heads/dev\n")
    const deep = path.join(dir, "src", "lib", "x")
    fs.mkdirSync(deep, { recursive: true })
    expect(gitBranch(deep)).toBe("dev")
    expect(gitBranch(path.relative(process.cwd(), deep))).toBe("dev")
  })

  it("names a detached HEAD by its first 12 hex digits", () => {
    expect(gitBranch(repo("d", `${SHA}\n`))).toBe("detached at 0123456789ab")
    expect(gitBranch(repo("e", `${SHA.toUpperCase()}${SHA.slice(0, 24)}\n`))).toBe("detached at 0123456789ab")
  })

  it("follows a .git file to a worktree's or submodule's folder, relative or absolute, CRLF or not", () => {
    const main = repo("main", "ref: refs/heads/main\n")
    const worktreeGit = path.join(main, ".git", "worktrees", "wt")
    fs.mkdirSync(worktreeGit, { recursive: true })
    fs.writeFileSync(path.join(worktreeGit, "HEAD"), "ref: refs/heads/topic\n")
    const worktree = path.join(root, "wt")
    fs.mkdirSync(worktree)
    fs.writeFileSync(path.join(worktree, ".git"), `gitdir: ${worktreeGit}\n`)
    expect(gitBranch(worktree)).toBe("topic")
    fs.writeFileSync(path.join(worktree, ".git"), `gitdir: ${path.relative(worktree, worktreeGit)}\r\n`)
    expect(gitBranch(path.join(worktree))).toBe("topic")
  })

  it("follows one gitdir indirection, not two", () => {
    const second = path.join(root, "second")
    fs.mkdirSync(second)
    fs.writeFileSync(path.join(second, "HEAD"), "ref: refs/heads/far\n")
    const first = path.join(root, "first")
    fs.mkdirSync(first)
    // `first` holds no HEAD, only another pointer: git itself would not follow it either.
    fs.writeFileSync(path.join(first, ".git"), `gitdir: ${second}\n`)
    const work = path.join(root, "work")
    fs.mkdirSync(work)
    fs.writeFileSync(path.join(work, ".git"), `gitdir: ${first}\n`)
    expect(gitBranch(work)).toBeUndefined()
  })

  it("gives undefined outside a repository and for anything it cannot read as a HEAD", () => {
    const plain = path.join(root, "plain")
    fs.mkdirSync(plain)
    expect(gitBranch(plain)).toBeUndefined()
    expect(gitBranch(path.join(root, "missing"))).toBeUndefined()
    expect(gitBranch(repo("garbage", "not a head\n"))).toBeUndefined()
    expect(gitBranch(repo("empty", ""))).toBeUndefined()
    expect(gitBranch(repo("control", "ref: refs/heads/a\u0007b\n"))).toBeUndefined()
    const headIsFolder = path.join(root, "hf")
    fs.mkdirSync(path.join(headIsFolder, ".git", "HEAD"), { recursive: true })
    expect(gitBranch(headIsFolder)).toBeUndefined()
    const dangling = path.join(root, "dangling")
    fs.mkdirSync(dangling)
    fs.writeFileSync(path.join(dangling, ".git"), "gitdir: ../nowhere\n")
    expect(gitBranch(dangling)).toBeUndefined()
    fs.writeFileSync(path.join(dangling, ".git"), "no pointer here\n")
    expect(gitBranch(dangling)).toBeUndefined()
  })

  it("reads only the start of a HEAD file, and refuses an overlong name", () => {
    expect(gitBranch(repo("padded", `ref: refs/heads/main\n${"x".repeat(5_000_000)}`))).toBe("main")
    expect(gitBranch(repo("huge", `ref: refs/heads/${"b".repeat(10_000)}\n`))).toBeUndefined()
  })

  it("does not hang on a FIFO planted as HEAD", () => {
    const dir = path.join(root, "fifo")
    fs.mkdirSync(path.join(dir, ".git"), { recursive: true })
    try {
      execFileSync("mkfifo", [path.join(dir, ".git", "HEAD")])
    } catch {
      return // no mkfifo on this system: nothing to check
    }
    expect(gitBranch(dir)).toBeUndefined()
  })

  it("agrees with git on a real repository when git is installed", () => {
    const dir = path.join(root, "real")
    fs.mkdirSync(dir)
    try {
      execFileSync("git", ["init", "-q", "-b", "trunk", dir], { stdio: "ignore" })
    } catch {
      return // no git on this system: the fixtures above cover the format
    }
    expect(gitBranch(dir)).toBe("trunk")
  })
})
