// Which project a session's folder belongs to: the routing hint records carry beside the cwd, so
// that a checkout, its clones, its linked worktrees and its subfolders are one project to the
// consolidator, whichever OpenCode line the session ran on. Memory stays one global store; this
// only names things. Read from git's own files (no git binary, as git-branch.ts), bounded and
// fail-open: any doubt gives the folder itself.
//
// The key is stable and opaque to the model: `host:<OpenCode's project id>` for a repository,
// `git:<common git folder>` for one OpenCode has no id for yet, `dir:<folder>`, `map:<name>`. The
// name is what people read: the remote without credentials, else the repository's folder name.
// Every folder compared is compared by its real path, symlinks resolved on both sides (D26).
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import type { HostProject } from "../../host.js"
import { findGitEntry, readSmall } from "../../util/git-files.js"

export interface ProjectIdentity {
  key: string
  name: string
  /** How it was found: an explicit mapping, the host's own id, git's files, or the bare folder. */
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
/** OpenCode's id for a folder it knows no project of (1.x and 2.x alike). */
const NO_PROJECT_ID = "global"
/** What OpenCode writes to `<common git folder>/opencode`: its own ids are hex digests, but any plain token is taken. */
const CACHED_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/

/**
 * The project of `directory`, or undefined when it is no project (home, temp, memory, root): an
 * explicit mapping, else the repository's OpenCode project id (the host's when it gives one),
 * else the repository's common folder, else the folder.
 */
export function projectIdentity(directory: string, rules: ProjectRules, host?: HostProject): ProjectIdentity | undefined {
  if (!directory) return undefined
  const dir = spellings(directory)
  const mapped = mappingFor(dir, rules.mappings)
  if (mapped) return { key: `map:${mapped}`, name: mapped, source: "mapping" }
  if (isExcluded(dir, rules)) return undefined
  const found = findRepository(dir.real)
  // A repository whose checkout is home (dotfiles) or a temp folder is no project either.
  const repository = found && !isExcluded(spellings(found.checkout), rules) && !(found.main && isExcluded(spellings(found.main), rules)) ? found : undefined
  if (!repository) return { key: `dir:${dir.real}`, name: path.basename(dir.real) || dir.real, source: "folder" }
  const name = remoteName(repository.config) ?? repository.name
  // The host's id only for a folder both agree is a repository: OpenCode 2 also ids plain folders
  // (a hash of the path) and Mercurial checkouts, which 1.x does not; the same rule on both lines.
  const hostId = host?.key.trim()
  if (hostId && hostId !== NO_PROJECT_ID) return { key: `host:${hostId}`, name, source: "host" }
  const id = openCodeProjectId(repository)
  return { key: id ? `host:${id}` : `git:${repository.commonDir}`, name, source: "repository" }
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
  const tempDirs = [...new Set(temp.flatMap((dir) => [path.resolve(dir), realPath(dir)]))]
  const expand = (folder: string) => (folder === "~" ? input.homedir : folder.startsWith("~/") ? path.join(input.homedir, folder.slice(2)) : folder)
  const mappings = Object.fromEntries(Object.entries(input.mappings ?? {}).map(([folder, name]) => [expand(folder), name]))
  return { home: input.homedir, tempDirs, memoryDirs: input.memoryDirs, mappings }
}

/**
 * The real path of `target`, symlinks resolved, also when it no longer exists (a deleted checkout
 * under a linked home): the deepest folder that exists is resolved and the rest appended.
 */
export function realPath(target: string): string {
  const resolved = path.resolve(target)
  try {
    return fs.realpathSync.native(resolved)
  } catch {
    const parent = path.dirname(resolved)
    return parent === resolved ? resolved : path.join(realPath(parent), path.basename(resolved))
  }
}

/** A folder as it was named and as it really is: a rule matches either, each against the same spelling of the rule's folder. */
interface Spellings {
  given: string
  real: string
}

function spellings(folder: string): Spellings {
  return { given: path.resolve(folder), real: realPath(folder) }
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
    const cacheKey = `${host?.key ?? ""}\u0000${directory}`
    const hit = this.resolved.get(cacheKey)
    if (hit && at - hit.at >= 0 && at - hit.at < RESOLVED_FOR_MS) return hit.identity
    const identity = projectIdentity(directory, this.rules, host)
    if (this.resolved.size >= RESOLVED_MAX) this.resolved.clear()
    this.resolved.set(cacheKey, { at, identity })
    return identity
  }
}

function mappingFor(dir: Spellings, mappings: Readonly<Record<string, string>> | undefined): string | undefined {
  let best: { length: number; name: string } | undefined
  for (const [folder, name] of Object.entries(mappings ?? {})) {
    if (!name.trim()) continue
    const mapped = spellings(folder)
    const length = within(dir.real, mapped.real) ? mapped.real.length : within(dir.given, mapped.given) ? mapped.given.length : -1
    if (length >= 0 && (!best || length > best.length)) best = { length, name: name.trim() }
  }
  return best?.name
}

function isExcluded(dir: Spellings, rules: ProjectRules): boolean {
  if (dir.real === path.parse(dir.real).root || dir.given === path.parse(dir.given).root) return true
  const home = spellings(rules.home)
  if (dir.real === home.real || dir.given === home.given) return true
  return [...rules.tempDirs, ...rules.memoryDirs].some((folder) => {
    const excluded = spellings(folder)
    return within(dir.real, excluded.real) || within(dir.given, excluded.given)
  })
}

function within(dir: string, parent: string): boolean {
  const relative = path.relative(parent, dir)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

interface Repository {
  /** The repository's common git folder, real path: the same for a checkout and all its linked worktrees. */
  commonDir: string
  /** The folder holding the `.git` that was found (this checkout or worktree). */
  checkout: string
  /** The main worktree, when git's files say where it is. */
  main?: string
  /** The name when the remote gives none: the same from every checkout and worktree of it. */
  name: string
  /** The common folder's `config`, where remotes and `core.worktree` are. */
  config: string | undefined
}

/**
 * The first `.git` walking up decides. A folder is git's folder itself. A file `gitdir: <path>`
 * names a linked worktree's, a submodule's or a `--separate-git-dir` repository's git folder; a
 * linked worktree's holds `commondir`, the path of the repository's common folder (relative to it),
 * while the others are the common folder themselves.
 */
function findRepository(start: string): Repository | undefined {
  try {
    const entry = findGitEntry(start)
    if (!entry) return undefined
    const gitDir = fs.realpathSync.native(entry.gitDir)
    const common = readSmall(path.join(gitDir, "commondir"))?.split(/\r?\n/, 1)[0]?.trim()
    const commonDir = common ? fs.realpathSync.native(path.resolve(gitDir, common)) : gitDir
    if (!readSmall(path.join(commonDir, "HEAD"))) return undefined
    const config = readSmall(path.join(commonDir, "config"), MAX_CONFIG_BYTES)
    return { commonDir, checkout: entry.checkout, config, ...mainAndName(commonDir, config) }
  } catch {
    return undefined
  }
}

/**
 * Where the main worktree is and what to call the repository, from the common folder alone, so
 * that every checkout and worktree of it says the same:
 * - `core.worktree` (a submodule's git folder, or a repository set up so) names the main worktree;
 * - a common folder called `.git` sits in its main worktree (the ordinary layout);
 * - otherwise git does not record the main worktree (a bare repository, the `.bare` layout, a
 *   `--separate-git-dir` repository: git itself lists the git folder as the main one), and the
 *   common folder names the repository: `tool.git` is `tool`, and a hidden one (`proj/.bare`) is
 *   named by the folder holding it (`proj`).
 */
function mainAndName(commonDir: string, config: string | undefined): { main?: string; name: string } {
  const worktree = configValues(config).find((entry) => entry.section === "core" && entry.key === "worktree")?.value
  if (worktree) {
    const main = path.resolve(commonDir, worktree)
    return { main, name: folderName(main) }
  }
  if (path.basename(commonDir) === ".git") {
    const main = path.dirname(commonDir)
    return { main, name: folderName(main) }
  }
  return { name: folderName(path.basename(commonDir).startsWith(".") ? path.dirname(commonDir) : commonDir) }
}

function folderName(folder: string): string {
  const base = path.basename(folder)
  return base.replace(/\.git$/i, "") || base || folder
}

/**
 * The project id OpenCode gives the repository, computed as both lines do (1.18.33 and 2.1.2):
 * the SHA-1 of `git-remote:<host/path>` of the `origin` remote, else the id OpenCode cached in
 * the common folder's `opencode` file, else the root commit. The root commit needs git's object
 * store, which is not read here: without a usable remote or cache the caller falls back to the
 * common folder, and the host's own id (given on every listed session) is preferred anyway.
 */
function openCodeProjectId(repository: Repository): string | undefined {
  const origin = configValues(repository.config).find((entry) => entry.section === "remote" && entry.subsection === "origin" && entry.key === "url")?.value
  const remote = origin ? openCodeRemote(origin) : undefined
  if (remote) return createHash("sha1").update(`git-remote:${remote}`).digest("hex")
  const cached = readSmall(path.join(repository.commonDir, "opencode"), 256)?.trim()
  return cached && cached !== NO_PROJECT_ID && CACHED_ID.test(cached) ? cached : undefined
}

/**
 * A remote URL as OpenCode reduces it before hashing: a URL's host (lowercased) and path, or
 * scp-like `[user@]host:path`; a leading slash, a trailing `.git` and trailing slashes dropped,
 * nothing decoded. File URLs and URLs without a host give none. Differs from normalizeRemote (the
 * name people read) on purpose: this one must give OpenCode's bytes.
 */
export function openCodeRemote(url: string): string | undefined {
  const value = url.trim()
  if (!value) return undefined
  let parsed: URL | undefined
  try {
    parsed = new URL(value)
  } catch {
    parsed = undefined
  }
  let host: string
  let pathname: string
  if (parsed) {
    if (parsed.protocol === "file:") return undefined
    host = parsed.hostname
    pathname = parsed.pathname
  } else {
    const scp = /^(?:[^@/:]+@)?([^/:]+):(.+)$/.exec(value)
    if (!scp) return undefined
    host = scp[1]!
    pathname = scp[2]!
  }
  const trimmed = pathname.replace(/^\/+/, "").replace(/\.git\/?$/, "").replace(/\/+$/, "")
  return host && trimmed ? `${host.toLowerCase()}/${trimmed}` : undefined
}

interface ConfigEntry {
  section: string
  subsection?: string
  key: string
  value: string
}

/**
 * The `key = value` lines of a git config file, in order: section and key names lowercased (git
 * compares them so), a `[section "sub"]` subsection as written, values unquoted and without a
 * trailing comment. Includes are not followed.
 */
function configValues(text: string | undefined): ConfigEntry[] {
  const entries: ConfigEntry[] = []
  let section: { name: string; sub?: string } | undefined
  for (const raw of (text ?? "").split(/\r?\n/)) {
    const line = raw.trim()
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line)
    if (header) {
      const name = header[1]!.toLowerCase()
      section = header[2] === undefined ? { name } : { name, sub: header[2].replace(/\\(.)/g, "$1") }
      continue
    }
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line)
    if (!section || !pair) continue
    entries.push({ section: section.name, ...(section.sub !== undefined ? { subsection: section.sub } : {}), key: pair[1]!.toLowerCase(), value: configValue(pair[2]!) })
  }
  return entries
}

/** A value as git reads it: quotes removed, `\` escapes kept literal, `#` or `;` outside quotes ends it. */
function configValue(raw: string): string {
  let out = ""
  let quoted = false
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!
    if (char === "\\" && i + 1 < raw.length) out += raw[++i]
    else if (char === '"') quoted = !quoted
    else if (!quoted && (char === "#" || char === ";")) break
    else out += char
  }
  return out.trim()
}

/** The origin remote's URL (else the first remote's) as host/path, without user or password. */
function remoteName(config: string | undefined): string | undefined {
  const urls = configValues(config).filter((entry) => entry.section === "remote" && entry.subsection !== undefined && entry.key === "url")
  const chosen = urls.find((entry) => entry.subsection === "origin") ?? urls[0]
  return chosen ? normalizeRemote(chosen.value) : undefined
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
    try {
      pathname = decodeURIComponent(parsed.pathname)
    } catch {
      return undefined
    }
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
