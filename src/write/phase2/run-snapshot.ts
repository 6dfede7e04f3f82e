// What a consolidation may change, kept aside while it runs. The consolidator edits the memory
// folder in place, so a run that fails validation, errors, or is interrupted would leave its damage
// for every conversation to read (an emptied summary, pages of junk). Right before the consolidator
// starts, every file of the folder but the git baseline and the diff file is copied beside the
// folder (`.<folder>.before-consolidation/`, outside what the consolidator may touch); a run that
// does not succeed puts the folder back exactly as it was, and a success drops the copy. A copy
// found later means a run died midway (a crash): the next consolidation puts it back first, and
// until then the read path serves the copy's summary (read/read-path.ts).
import fs from "node:fs"
import path from "node:path"
import { linkFile, readRegularFile } from "../../util/regular-file.js"
import { WORKSPACE_DIFF_FILE } from "./workspace-diff.js"

/** Entries of the folder a snapshot leaves alone: the baseline is the plugin's, the diff transient. */
const LEFT_ALONE = new Set([".git", WORKSPACE_DIFF_FILE])
/** Where files arrive from outside a run (notes, imports): a restore keeps what it finds there. */
const ARRIVALS = "extensions/"

/** Where the folder's copy is kept while a consolidation runs. */
export function snapshotDir(root: string): string {
  return path.join(path.dirname(root), `.${path.basename(root)}.before-consolidation`)
}

/** Copies the folder aside; a copy left from earlier is replaced. Built beside, then renamed into place. */
export function takeSnapshot(root: string): void {
  const target = snapshotDir(root)
  const building = `${target}.${process.pid}.tmp`
  fs.rmSync(building, { recursive: true, force: true })
  try {
    fs.mkdirSync(building)
    for (const file of filesOf(root)) {
      const bytes = readRegularFile(path.join(root, file))
      if (bytes === undefined) continue
      fs.mkdirSync(path.dirname(path.join(building, file)), { recursive: true })
      fs.writeFileSync(path.join(building, file), bytes, { flag: "wx" })
    }
    fs.rmSync(target, { recursive: true, force: true })
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
 * snapshot. A failure leaves the snapshot, so the next attempt can finish the job.
 */
export function restoreSnapshot(root: string): boolean {
  const source = snapshotDir(root)
  if (!isPlainDirectory(source)) return false
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
  fs.rmSync(source, { recursive: true, force: true })
  return true
}

/** A success: the run's changes stand, and the copy goes. */
export function dropSnapshot(root: string): void {
  fs.rmSync(snapshotDir(root), { recursive: true, force: true })
}

/** The snapshot's copy of one file, when a snapshot exists. */
export function snapshotFile(root: string, file: string): string {
  return path.join(snapshotDir(root), file)
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
