// The one step of an import that changes the home: each top-level entry (the databases with their
// SQLite sidecars, the memory folders) is renamed into a backup folder, then each staged entry is
// renamed into its place, then the backup is deleted. Each rename is atomic, so no entry is ever
// half there. A rename that fails is undone, newest first, and the home is as it was.
//
// A crash during the swap (a kill, a power loss) cannot be undone: the home then holds some new
// entries and some old ones missing. Nothing is lost: the old entries moved so far are in the
// home's .import-backup-* folder, the new ones not yet moved in its .import-staging-* folder;
// moving the backup's entries back into the home restores it as it was.
import fs from "node:fs"
import path from "node:path"
import { ArchiveError } from "./errors.js"

export const STAGING_PREFIX = ".import-staging-"
export const BACKUP_PREFIX = ".import-backup-"

export interface SwapOperations {
  /** Renames are injectable so tests can fail one midway. */
  rename(from: string, to: string): void
}

const REAL: SwapOperations = Object.freeze({ rename: (from: string, to: string) => fs.renameSync(from, to) })

/**
 * Replaces the entries `names` of `home` with those of `staging` (an entry absent there ends up
 * absent from the home), then deletes `staging` and the backup. Returns the backup folder when it
 * could not be deleted: the import is done, but the previous memory is still in it.
 */
export function swapEntries(home: string, staging: string, names: readonly string[], operations: SwapOperations = REAL): string | undefined {
  let backup: string
  try {
    backup = fs.mkdtempSync(path.join(home, BACKUP_PREFIX))
  } catch (error) {
    remove(staging)
    throw new ArchiveError("io", `Could not create a backup folder in ${home} (${describe(error)}); nothing was changed. Check that the folder is writable, then import again.`)
  }
  const movedOut: string[] = []
  const movedIn: string[] = []
  try {
    for (const name of names) {
      if (!exists(path.join(home, name))) continue
      operations.rename(path.join(home, name), path.join(backup, name))
      movedOut.push(name)
    }
    for (const name of names) {
      if (!exists(path.join(staging, name))) continue
      operations.rename(path.join(staging, name), path.join(home, name))
      movedIn.push(name)
    }
  } catch (error) {
    if (undo(home, staging, backup, movedOut, movedIn, operations)) {
      remove(staging)
      remove(backup)
      throw new ArchiveError(
        "io",
        `Could not put the imported memory in place in ${home} (${describe(error)}); nothing was changed. Close OpenCode, which may hold the files open, then import again.`,
      )
    }
    throw new ArchiveError(
      "io",
      `The import stopped halfway (${describe(error)}), and ${home} now holds part of the imported memory. The previous memory is kept in ${backup}, the rest of the imported one in ${staging}: move the entries of ${backup} back into ${home} to restore it.`,
    )
  }
  remove(staging)
  return remove(backup) ? undefined : backup
}

/** Moves everything back where it was, newest first; false if any of it could not be moved. */
function undo(home: string, staging: string, backup: string, movedOut: readonly string[], movedIn: readonly string[], operations: SwapOperations): boolean {
  try {
    for (const name of [...movedIn].reverse()) operations.rename(path.join(home, name), path.join(staging, name))
    for (const name of [...movedOut].reverse()) operations.rename(path.join(backup, name), path.join(home, name))
    return true
  } catch {
    return false
  }
}

/** lstat, so a symlink counts as the entry it is, never as what it points to. */
function exists(file: string): boolean {
  return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined
}

export function remove(folder: string): boolean {
  try {
    fs.rmSync(folder, { recursive: true, force: true, maxRetries: 3 })
    return true
  } catch {
    return false
  }
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error as Error)?.message ?? String(error)
}
