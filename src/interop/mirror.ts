// Keeping a folder of copies in step with a source, for the imports and the export: a folder is
// made to hold exactly the files given, each written only when its bytes change (temp file and
// rename, so a reader never sees half a file), extras removed, and no symlink followed anywhere
// on the way. Reads of the source side never follow a symlink either and stop at a size cap.
import fs from "node:fs"
import path from "node:path"
import { readRegularFile, replaceFile } from "../util/regular-file.js"

/** Larger files are not copied: memory files are kilobytes, and a huge one is a mistake. */
export const MAX_COPY_BYTES = 4 * 1024 * 1024

export interface MirrorResult {
  written: string[]
  removed: string[]
}

/** A regular file's bytes (no symlink followed), or undefined when it is missing, not a file, or over the cap. */
export function readSource(file: string): Buffer | undefined {
  const stat = fs.lstatSync(file, { throwIfNoEntry: false })
  if (!stat?.isFile() || stat.size > MAX_COPY_BYTES) return undefined
  return readRegularFile(file)
}

/** The first `maxBytes` of a regular file (no symlink followed), or undefined when it cannot be read. */
export function readHead(file: string, maxBytes: number): string | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0))
  } catch {
    return undefined
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined
    const buffer = Buffer.alloc(maxBytes)
    const read = fs.readSync(fd, buffer, 0, maxBytes, 0)
    return buffer.toString("utf8", 0, read)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Makes `dir` (below `base`, created as needed) hold exactly `files` (relative paths -> bytes).
 * Refuses when `base`, or any folder between it and a file, is a symlink or not a folder.
 */
export function mirrorFolder(base: string, dir: string, files: ReadonlyMap<string, Buffer>): MirrorResult {
  const target = ensureFolder(base, dir)
  const result: MirrorResult = { written: [], removed: [] }
  const wanted = new Set([...files.keys()].map((name) => path.normalize(name)))
  for (const existing of listFiles(target)) {
    if (wanted.has(existing)) continue
    fs.rmSync(path.join(target, existing), { force: true })
    result.removed.push(existing)
  }
  removeEmptyFolders(target)
  for (const [name, bytes] of files) {
    const relative = path.normalize(name)
    if (relative.startsWith("..") || path.isAbsolute(relative)) throw new Error(`refusing to write ${name} outside ${dir}`)
    const file = path.join(ensureFolder(target, path.dirname(relative)), path.basename(relative))
    if (readRegularFile(file)?.equals(bytes)) continue
    if (fs.lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) fs.rmSync(file, { recursive: true, force: true })
    replaceFile(file, bytes)
    result.written.push(relative)
  }
  return result
}

/** Removes `dir` below `base` with everything in it; true when there was something. */
export function removeFolder(base: string, dir: string): boolean {
  const target = path.join(base, dir)
  if (!fs.lstatSync(target, { throwIfNoEntry: false })) return false
  assertNoSymlink(base, dir)
  fs.rmSync(target, { recursive: true, force: true })
  return true
}

/** Writes one file below `base` if its bytes changed; true when it was written. */
export function writeFileIfChanged(base: string, relative: string, bytes: Buffer): boolean {
  const file = path.join(ensureFolder(base, path.dirname(relative)), path.basename(relative))
  if (readRegularFile(file)?.equals(bytes)) return false
  replaceFile(file, bytes)
  return true
}

/** Every regular file below `dir`, relative to it; symlinks and dot-temp files are left out. */
export function listFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (entry.isFile() && !entry.name.endsWith(".tmp")) out.push(child)
    }
  }
  if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) walk("")
  return out.sort()
}

function ensureFolder(base: string, relative: string): string {
  const stat = fs.lstatSync(base, { throwIfNoEntry: false })
  if (!stat || stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`${base} is missing, a symlink or not a folder`)
  let current = base
  for (const part of relative.split(/[\\/]/).filter((p) => p && p !== ".")) {
    current = path.join(current, part)
    const entry = fs.lstatSync(current, { throwIfNoEntry: false })
    if (!entry) fs.mkdirSync(current)
    else if (entry.isSymbolicLink()) throw new Error(`${current} is a symlink; it is not written through`)
    else if (!entry.isDirectory()) throw new Error(`${current} is not a folder`)
  }
  return current
}

function assertNoSymlink(base: string, relative: string): void {
  let current = base
  for (const part of relative.split(/[\\/]/).filter(Boolean)) {
    current = path.join(current, part)
    if (fs.lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink()) throw new Error(`${current} is a symlink; it is not removed through`)
  }
}

function removeEmptyFolders(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const child = path.join(dir, entry.name)
    removeEmptyFolders(child)
    if (fs.readdirSync(child).length === 0) fs.rmdirSync(child)
  }
}
