// The files memory_search looks at: every regular file under a folder, skipping dot-entries,
// symlinks and special files, sorted in byte order. A folder's listing is kept while the folder's
// identity is unchanged (search-identity.ts): creating, deleting or renaming an entry changes the
// folder's mtime and ctime, so a warm query costs one lstat per folder instead of a readdir, and
// when no folder changed the sorted list of the last walk is reused as is.
import fs from "node:fs"
import path from "node:path"
import { ioError } from "./errors.js"
import { isHiddenName, sortByCodePoints } from "./safe-path.js"
import type { CacheOptions } from "./search-cache.js"
import { identityOf, SETTLE_MS, stillValid, type Identity } from "./search-identity.js"

export interface Candidate {
  readonly relative: string
  readonly absolute: string
}

interface Listing {
  relative: string
  identity: Identity
  files: Candidate[]
  folders: Candidate[]
}

/** A folder a walk listed, with its identity when it was listed. */
export interface ListedFolder {
  relative: string
  identity: Identity
}

export class FolderCache {
  private readonly listings = new Map<string, Listing>()
  /** The last sorted walk per scope, with the listings it was made of. */
  private readonly walks = new Map<string, { files: readonly Candidate[]; made: Listing[] }>()
  private readonly settleMs: number
  private readonly now: () => number

  constructor(options: Pick<CacheOptions, "settleMs" | "now"> = {}) {
    this.settleMs = options.settleMs ?? SETTLE_MS
    this.now = options.now ?? (() => Date.now())
  }

  /**
   * Every regular file under the folder `scope` (whose lstat is `stat`), sorted by relative path
   * in byte order; `fresh` is false when it is the same array as the last walk of this scope.
   * The array is shared between calls: callers must not modify it.
   */
  walk(scope: Candidate, stat: fs.Stats): { files: readonly Candidate[]; fresh: boolean } {
    const used: Listing[] = []
    const files: Candidate[] = []
    const pending: Array<[Candidate, fs.Stats]> = [[scope, stat]]
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [folder, folderStat] = next
      const listing = this.listing(folder, folderStat, folder === scope)
      if (!listing) continue
      used.push(listing)
      for (const file of listing.files) files.push(file)
      for (const child of listing.folders) {
        // A subfolder that vanished, became unreadable or was swapped for a symlink is skipped.
        const childStat = lstatOrUndefined(child.absolute)
        if (childStat?.isDirectory()) pending.push([child, childStat])
      }
    }
    const last = this.walks.get(scope.relative)
    if (last && last.made.length === used.length && last.made.every((listing, i) => listing === used[i])) return { files: last.files, fresh: false }
    const sorted = sortByCodePoints(files, (file) => file.relative)
    if (scope.relative === "") this.forgetAllBut(used)
    this.walks.set(scope.relative, { files: sorted, made: used })
    return { files: sorted, fresh: true }
  }

  /** Every folder the last walk of `scope` listed, each with the identity it had before it was read. */
  listed(scope: string): readonly ListedFolder[] {
    return this.walks.get(scope)?.made ?? []
  }

  clear(): void {
    this.listings.clear()
    this.walks.clear()
  }

  /** After a changed walk of the whole folder: drop what belongs to folders that are gone. */
  private forgetAllBut(used: readonly Listing[]): void {
    const live = new Set(used)
    for (const [relative, listing] of this.listings) if (!live.has(listing)) this.listings.delete(relative)
    this.walks.clear()
  }

  private listing(folder: Candidate, stat: fs.Stats, isScope: boolean): Listing | undefined {
    const cached = this.listings.get(folder.relative)
    if (cached && stillValid(cached.identity, stat)) return cached
    const readAt = this.now()
    let dirents: fs.Dirent[]
    try {
      dirents = fs.readdirSync(folder.absolute, { withFileTypes: true })
    } catch (error) {
      this.listings.delete(folder.relative)
      // The scope itself must be readable; a subfolder that vanished or is unreadable is skipped.
      if (isScope) throw ioError(folder.relative, error)
      return undefined
    }
    const prefix = folder.relative === "" ? "" : `${folder.relative}/`
    const listing: Listing = { relative: folder.relative, identity: identityOf(stat, readAt, this.settleMs), files: [], folders: [] }
    for (const dirent of dirents) {
      if (isHiddenName(dirent.name)) continue
      // Plain concatenation: path.join per entry would cost more than the readdir itself.
      const child = { relative: prefix + dirent.name, absolute: folder.absolute + path.sep + dirent.name }
      if (dirent.isFile()) listing.files.push(child)
      else if (dirent.isDirectory()) listing.folders.push(child)
    }
    this.listings.set(folder.relative, listing)
    return listing
  }
}

function lstatOrUndefined(absolute: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(absolute, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}
