// Which project a session's folder belongs to: the routing hint records carry beside the cwd, so
// that a checkout, its linked worktrees and its subfolders are one project to the consolidator.
// Memory stays one global store; this only names things. Read from git's own files (no git
// binary, as git-branch.ts), bounded and fail-open: any doubt gives the folder itself.
//
// The key is stable and opaque to the model (`git:<common dir>`, `dir:<folder>`, `map:<name>`,
// `host:<the host's key>`); the name is what people read (the remote without credentials, else
// the folder's name).
import fs from "node:fs"
import path from "node:path"
import type { HostProject } from "../../host.js"
import { findGitEntry, readSmall } from "../../util/git-files.js"

export interface ProjectIdentity {
  key: string
  name: string
  /** How it was found: an explicit mapping, the host's own identity, a git repository, or the bare folder. */
  source: "mapping" | "host" | "repository" | "folder"
}

export interface ProjectRules {
  /** The user's home folder: never a project itself (its subfolders may be). */
  home: string
  /** Temp folders: nothing inside them is a project (subagents and scratch runs live there). */
  tempDirs: readonly string[]
  /** The memory home and roots: helper sessions run there, and they are never a project. */
  memoryDirs: readonly string[]
  /** Folder -> project name, from the options; the longest matching folder wins. */
  mappings?: Readonly<Record<string, string>>
}

const MAX_CONFIG_BYTES = 64 * 1024
const MAX_NAME_CHARS = 200

/**
 * The project of `directory`, or undefined when it is no project (home, temp, memory, root): an
 * explicit mapping, else the host's own identity when it gives one, else git's, else the folder.
 */
export function projectIdentity(directory: string, rules: ProjectRules, host?: HostProject): ProjectIdentity | undefined {
  if (!directory) return undefined
  const dir = path.resolve(directory)
  const mapped = mappingFor(dir, rules.mappings)
  if (mapped) return { key: `map:${mapped}`, name: mapped, source: "mapping" }
  if (isExcluded(dir, rules)) return undefined
  const found = findRepository(dir)
  const repository = found && !isExcluded(found.top, rules) ? found : undefined
  const name = repository ? (remoteName(repository.commonDir) ?? path.basename(repository.top).replace(/\.git$/i, "")) : path.basename(dir)
  // The host's key where it has one; OpenCode's "global" is every folder outside a repository, not a project.
  const hostKey = host?.key.trim()
  if (hostKey && hostKey !== "global") return { key: `host:${hostKey}`, name: host?.name?.trim() || name, source: "host" }
  if (repository) return { key: `git:${repository.commonDir}`, name, source: "repository" }
  return { key: `dir:${dir}`, name, source: "folder" }
}

/** The rules as a plugin instance has them: its home folder, the process's temp folders, its memory folders and the user's mappings. */
export function projectRules(input: {
  homedir: string
  env: Readonly<Record<string, string | undefined>>
  memoryDirs: readonly string[]
  mappings?: Readonly<Record<string, string>>
}): ProjectRules {
  const temp = [input.env.TMPDIR || "/tmp", input.env.TMP, input.env.TEMP].filter((dir): dir is string => !!dir && path.isAbsolute(dir))
  // Both spellings of a folder behind a link (macOS's /var is /private/var), as a session may name either.
  const tempDirs = [...new Set(temp.flatMap((dir) => [path.resolve(dir), realOr(dir)]))]
  const expand = (folder: string) => (folder === "~" ? input.homedir : folder.startsWith("~/") ? path.join(input.homedir, folder.slice(2)) : folder)
  const mappings = Object.fromEntries(Object.entries(input.mappings ?? {}).map(([folder, name]) => [expand(folder), name]))
  return { home: input.homedir, tempDirs, memoryDirs: input.memoryDirs, mappings }
}

function realOr(dir: string): string {
  try {
    return fs.realpathSync(dir)
  } catch {
    return path.resolve(dir)
  }
}

/** How long a folder's project is trusted before git's files are read again (a repository may be created or moved). */
const RESOLVED_FOR_MS = 5 * 60_000
const RESOLVED_MAX = 2_000

/**
 * One plugin instance's look-ups, remembered per folder for a few minutes: a listing of a thousand
 * sessions in a dozen folders reads git's files a dozen times.
 */
export class ProjectResolver {
  private readonly resolved = new Map<string, { at: number; identity: ProjectIdentity | undefined }>()

  constructor(
    private readonly rules: ProjectRules,
    private readonly now: () => number = Date.now,
  ) {}

  of(directory: string, host?: HostProject): ProjectIdentity | undefined {
    const at = this.now()
    const cacheKey = `${host?.key ?? ""}\u0000${host?.name ?? ""}\u0000${directory}`
    const hit = this.resolved.get(cacheKey)
    if (hit && at - hit.at >= 0 && at - hit.at < RESOLVED_FOR_MS) return hit.identity
    const identity = projectIdentity(directory, this.rules, host)
    if (this.resolved.size >= RESOLVED_MAX) this.resolved.clear()
    this.resolved.set(cacheKey, { at, identity })
    return identity
  }
}

function mappingFor(dir: string, mappings: Readonly<Record<string, string>> | undefined): string | undefined {
  let best: { folder: string; name: string } | undefined
  for (const [folder, name] of Object.entries(mappings ?? {})) {
    const resolved = path.resolve(folder)
    if (!within(dir, resolved) || !name.trim()) continue
    if (!best || resolved.length > best.folder.length) best = { folder: resolved, name: name.trim() }
  }
  return best?.name
}

function isExcluded(dir: string, rules: ProjectRules): boolean {
  if (dir === path.parse(dir).root) return true
  if (dir === path.resolve(rules.home)) return true
  return [...rules.tempDirs, ...rules.memoryDirs].some((excluded) => within(dir, path.resolve(excluded)))
}

function within(dir: string, parent: string): boolean {
  const relative = path.relative(parent, dir)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

interface Repository {
  /** The repository's common git folder: the same for a checkout and all its linked worktrees. */
  commonDir: string
  /** The folder people know the repository by: the main checkout's top, or the bare folder. */
  top: string
}

/**
 * The first `.git` walking up decides. A folder is the common dir itself. A file `gitdir: <path>`
 * names a worktree's or a submodule's git folder; a worktree's holds `commondir`, the path of the
 * main repository's git folder (relative to it), while a submodule's is a repository of its own.
 */
function findRepository(start: string): Repository | undefined {
  try {
    const entry = findGitEntry(start)
    if (!entry) return undefined
    if (entry.kind === "folder") return repositoryAt(entry.gitDir, entry.checkout, false)
    const common = readSmall(path.join(entry.gitDir, "commondir"))?.split(/\r?\n/, 1)[0]?.trim()
    return common ? repositoryAt(path.resolve(entry.gitDir, common), entry.checkout, true) : repositoryAt(entry.gitDir, entry.checkout, false)
  } catch {
    return undefined
  }
}

function repositoryAt(gitDir: string, checkout: string, worktree: boolean): Repository | undefined {
  let commonDir: string
  try {
    commonDir = fs.realpathSync(gitDir)
  } catch {
    return undefined
  }
  if (!readSmall(path.join(commonDir, "HEAD"))) return undefined
  // A main checkout's git folder is `<top>/.git`. A linked worktree of a bare repository (the
  // clone --bare + worktree workflow) shares the bare folder, which is then the top, so every
  // worktree of it gets one name. A submodule's git folder lives under the superproject's
  // `.git/modules/`, so its checkout is the folder that named it.
  const top = path.basename(commonDir) === ".git" ? path.dirname(commonDir) : worktree ? commonDir : checkout
  return { commonDir, top }
}

/** The origin remote's URL (else the first remote's) as host/path, without user or password. */
function remoteName(commonDir: string): string | undefined {
  const config = readSmall(path.join(commonDir, "config"), MAX_CONFIG_BYTES)
  if (!config) return undefined
  const urls: Array<{ remote: string; url: string }> = []
  let remote: string | undefined
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.trim()
    const section = /^\[\s*remote\s+"([^"]*)"\s*\]$/.exec(line)
    if (section) remote = section[1]
    else if (line.startsWith("[")) remote = undefined
    else if (remote !== undefined) {
      const url = /^url\s*=\s*(.+)$/.exec(line)?.[1]?.trim()
      if (url) urls.push({ remote, url })
    }
  }
  const chosen = urls.find((entry) => entry.remote === "origin") ?? urls[0]
  return chosen ? normalizeRemote(chosen.url) : undefined
}

/**
 * `https://user:token@Host/org/repo.git`, `git@host:org/repo.git` and `ssh://git@host:22/org/repo`
 * all become `host/org/repo`; local paths and file URLs give undefined (the folder name is better).
 */
export function normalizeRemote(url: string): string | undefined {
  let host: string
  let pathname: string
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(url)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return undefined
    }
    if (parsed.protocol === "file:" || !parsed.hostname) return undefined
    host = parsed.hostname
    pathname = decodeURIComponent(parsed.pathname)
  } else if (scp && !/^[a-z]:$/i.test(`${scp[1]}:`)) {
    host = scp[1]!
    pathname = scp[2]!
  } else {
    return undefined
  }
  const cleaned = pathname.replace(/^\/+|\/+$/g, "").replace(/\.git$/i, "")
  if (!cleaned) return undefined
  const name = `${host.toLowerCase()}/${cleaned}`
  return name.length <= MAX_NAME_CHARS && !/[\u0000-\u001f\u007f\s]/.test(name) ? name : undefined
}
