// Real git repositories for the project-identity tests, made with the git binary (the code under
// test reads git's files without it).
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

/** git in `cwd`, with an identity and defaults of its own, whatever the machine's config says. */
export function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", ...args], { cwd, stdio: "ignore" })
}

/** A repository at `relative` under `root` with one commit and, if given, an origin remote. */
export function repository(root: string, relative: string, origin?: string): string {
  const dir = path.join(root, relative)
  fs.mkdirSync(dir, { recursive: true })
  git(dir, "init", "-q")
  fs.writeFileSync(path.join(dir, "README.md"), "x\n")
  git(dir, "add", ".")
  git(dir, "commit", "-qm", "first")
  if (origin) git(dir, "remote", "add", "origin", origin)
  return dir
}
