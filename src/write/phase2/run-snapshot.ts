// What a consolidation may change, kept aside while it runs. The consolidator edits the memory
// folder in place, so a run that fails validation, errors, or is interrupted would leave its damage
// for every conversation to read (an emptied summary, pages of junk). Right before the consolidator
// starts, every file of the folder but the git baseline and the diff file is copied beside the
// folder (`.<folder>.before-consolidation/`, outside what the consolidator may touch); a run that
// does not succeed puts the folder back exactly as it was, and a success drops the copy. A copy
// found later means a run died midway (a crash): the next consolidation puts it back first.
//
// The copy is also what memory is while it exists: readers (the read path, the memory tools, the
// CLI and the viewer) read it instead of the folder (readableRoot), checked on disk at every read,
// so a run's output is seen only once it was validated and the copy dropped, whichever process runs
// it and whether it is alive or was killed. A kill must therefore leave a whole copy or none: it is
// built under another name, its marker written last, and renamed into place; it is removed by
// renaming it away first. A copy without its marker is never restored nor read.
import { randomBytes } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { linkFile, readRegularFile, TEMPORARY_MAX_AGE_MS } from "../../util/regular-file.js"
import { killPoint } from "../../util/test-switches.js"
import { WORKSPACE_DIFF_FILE } from "./workspace-diff.js"

/** Written last into a copy: a copy without it was cut short and is not the folder as it was. */
export const WHOLE_MARKER = ".before-consolidation-whole"
/** Entries of the folder a snapshot leaves alone: the baseline is the plugin's, the diff transient. */
const LEFT_ALONE = new Set([".git", WORKSPACE_DIFF_FILE, WHOLE_MARKER])
/** Where files arrive from outside a run (notes, imports): a restore keeps what it finds there. */
const ARRIVALS = "extensions/"

/** Where the folder's copy is kept while a consolidation runs. */
export function snapshotDir(root: string): string {
  return path.join(path.dirname(root), `.${path.basename(root)}.before-consolidation`)
}

/** Whether a whole copy exists: a consolidation is unfinished (running, failed midway, or killed). */
export function hasWholeSnapshot(root: string): boolean {
  const dir = snapshotDir(root)
  return isPlainDirectory(dir) && !!fs.lstatSync(path.join(dir, WHOLE_MARKER), { throwIfNoEntry: false })?.isFile()
}

/** The folder as readers see it now: the copy while a consolidation is unfinished, else the folder itself. */
export function readableRoot(root: string): string {
  return hasWholeSnapshot(root) ? snapshotDir(root) : root
}

/** Copies the folder aside; a copy left from earlier is replaced. Built beside, then renamed into place. */
export function takeSnapshot(root: string): void {
  const target = snapshotDir(root)
  // This process's own name: a leftover under it is from a dead process that had this pid.
  const building = `${target}.${process.pid}.tmp`
  fs.rmSync(building, { recursive: true, force: true })
  try {
    fs.mkdirSync(building)
    for (const file of filesOf(root)) {
      const bytes = readRegularFile(path.join(root, file))
      if (bytes === undefined) continue
      fs.mkdirSync(path.dirname(path.join(building, file)), { recursive: true })
      fs.writeFileSync(path.join(building, file), bytes, { flag: "wx" })
      killPoint("snapshot-copying")
    }
    fs.writeFileSync(path.join(building, WHOLE_MARKER), "", { flag: "wx" })
    discard(root, target)
    fs.renameSync(building, target)
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true })
    throw error
  }
}

/**
 * Puts the folder back as the snapshot has it (files rewritten only where their bytes differ,
 * files and folders the run added removed), then drops the snapshot. Files added under
 * `extensions/` stay: notes and imports arrive there while a run goes on (memory_add_note in
 * another session), and the consolidator has no business adding any. False when there was no
 * whole snapshot; one without its marker is dropped unused, since restoring it would delete every
 * file it lacks. A failure leaves the snapshot, so the next attempt can finish the job.
 */
export function restoreSnapshot(root: string, onPartial?: () => void): boolean {
  const source = snapshotDir(root)
  if (!isPlainDirectory(source)) return false
  if (!hasWholeSnapshot(root)) {
    onPartial?.()
    discard(root, source)
    return false
  }
  if (!isPlainDirectory(root)) fs.mkdirSync(root, { recursive: true })
  const kept = new Set(filesOf(source))
  for (const file of filesOf(root)) if (!kept.has(file) && !file.startsWith(ARRIVALS)) fs.rmSync(path.join(root, file), { force: true })
  for (const file of kept) {
    const bytes = readRegularFile(path.join(source, file))!
    const target = path.join(root, file)
    if (readRegularFile(target)?.equals(bytes)) continue
    fs.mkdirSync(path.dirname(target), { recursive: true })
    // Linked, not copied: a consolidation that failed on a full disk must still be undone.
    linkFile(path.join(source, file), target)
  }
  removeEmptyFolders(root, kept)
  discard(root, source)
  return true
}

/** A success: the run's changes stand, and the copy goes. */
export function dropSnapshot(root: string): void {
  discard(root, snapshotDir(root))
}

/** The snapshot's copy of one file, when a snapshot exists. */
export function snapshotFile(root: string, file: string): string {
  return path.join(snapshotDir(root), file)
}

/**
 * Removes what killed processes left beside the folder: copies they were building and copies they
 * were removing, each named with its process's pid. One is left alone only while that process is
 * alive (never this one: its snapshot steps are synchronous) and it is younger than
 * TEMPORARY_MAX_AGE_MS. Returns the names removed.
 */
export function sweepSnapshotLeftovers(root: string, alive: (pid: number) => boolean, now: number = Date.now()): string[] {
  const parent = path.dirname(root)
  const prefix = `${path.basename(snapshotDir(root))}.`
  const removed: string[] = []
  let names: string[]
  try {
    names = fs.readdirSync(parent).filter((name) => name.startsWith(prefix))
  } catch {
    return removed
  }
  for (const name of names) {
    const pid = /^(\d+)(?:-[0-9a-f]+)?\.(?:tmp|removing)$/.exec(name.slice(prefix.length))?.[1]
    if (!pid) continue
    try {
      const stat = fs.lstatSync(path.join(parent, name))
      if (Number(pid) !== process.pid && alive(Number(pid)) && now - stat.mtimeMs < TEMPORARY_MAX_AGE_MS) continue
      fs.rmSync(path.join(parent, name), { recursive: true, force: true })
      removed.push(name)
    } catch {
      // Gone meanwhile, or not removable now: the next sweep tries again.
    }
  }
  return removed
}

/**
 * Removes a copy so that a kill partway never leaves a cut-short one under the copy's name: it is
 * renamed away first (under this process's pid, for sweepSnapshotLeftovers), its marker goes, and
 * only then the rest.
 */
function discard(root: string, dir: string): void {
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })) return
  const away = `${snapshotDir(root)}.${process.pid}-${randomBytes(4).toString("hex")}.removing`
  fs.renameSync(dir, away)
  fs.rmSync(path.join(away, WHOLE_MARKER), { force: true })
  killPoint("snapshot-removing")
  fs.rmSync(away, { recursive: true, force: true })
}

/** Every regular file below `root` (relative, `/`-separated), but what is left alone; symlinks are passed over. */
function filesOf(root: string): string[] {
  const files: string[] = []
  if (!isPlainDirectory(root)) return files
  const folders = [""]
  for (let relative = folders.pop(); relative !== undefined; relative = folders.pop()) {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = relative ? `${relative}/${entry.name}` : entry.name
      if (!relative && LEFT_ALONE.has(entry.name)) continue
      if (entry.isDirectory()) folders.push(child)
      else if (entry.isFile()) files.push(child)
    }
  }
  return files.sort()
}

/** Folders below `root` that hold none of `kept` and nothing at all once the run's files went. */
function removeEmptyFolders(root: string, kept: ReadonlySet<string>): void {
  const wanted = new Set<string>()
  for (const file of kept) for (let dir = path.posix.dirname(file); dir !== "."; dir = path.posix.dirname(dir)) wanted.add(dir)
  const visit = (relative: string): void => {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = relative ? `${relative}/${entry.name}` : entry.name
      if ((!relative && LEFT_ALONE.has(entry.name)) || !entry.isDirectory() || `${child}/`.startsWith(ARRIVALS)) continue
      visit(child)
      if (!wanted.has(child) && fs.readdirSync(path.join(root, child)).length === 0) fs.rmdirSync(path.join(root, child))
    }
  }
  visit("")
}

function isPlainDirectory(absolute: string): boolean {
  const stat = fs.lstatSync(absolute, { throwIfNoEntry: false })
  return !!stat && !stat.isSymbolicLink() && stat.isDirectory()
}
