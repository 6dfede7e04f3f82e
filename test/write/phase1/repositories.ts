// Real git repositories for the project-identity tests, made with the git binary (the code under
// test reads git's files without it).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"

/** git in `cwd`, with an identity and defaults of its own, whatever the machine's config says. */
export function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", ...args], { cwd, stdio: "ignore" })
}

/** git's answer in `cwd`, trimmed. */
export function gitOutput(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim()
}

/** A repository at `relative` under `root` with one commit (none with `empty`) and, if given, an origin remote. */
export function repository(root: string, relative: string, origin?: string, options: { empty?: boolean } = {}): string {
  const dir = path.join(root, relative)
  fs.mkdirSync(dir, { recursive: true })
  git(dir, "init", "-q")
  if (!options.empty) {
    fs.writeFileSync(path.join(dir, "README.md"), `${relative}\n`)
    git(dir, "add", ".")
    git(dir, "commit", "-qm", "first")
  }
  if (origin) git(dir, "remote", "add", "origin", origin)
  return dir
}

/**
 * The project id OpenCode 1.18.33 and 2.1.2 give the repository of `cwd` when it has no usable
 * remote: the first of its root commits (`git rev-list --max-parents=0 HEAD`, sorted), the
 * command both run. With a remote they hash it instead (openCodeRemoteId).
 */
export function rootCommit(cwd: string): string {
  return gitOutput(cwd, "rev-list", "--max-parents=0", "HEAD").split("\n").map((line) => line.trim()).filter(Boolean).sort()[0]!
}

/** OpenCode's id for a repository whose origin reduces to `hostPath` (host/path): SHA-1 of `git-remote:<host/path>`. */
export function openCodeRemoteId(hostPath: string): string {
  return createHash("sha1").update(`git-remote:${hostPath}`).digest("hex")
}
