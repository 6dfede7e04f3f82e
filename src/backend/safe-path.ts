// Every path the model passes is relative to the memory folder. It is checked as text first (no
// absolute paths, no "..", no backslashes), then component by component with lstat, the root
// included, so that a symlink anywhere is refused instead of being followed out of the folder.
// Dot-components (".git", ".env") are reported exactly like missing paths: they are not memory.
import fs from "node:fs"
import path from "node:path"
import { ioError, MemoryError } from "./errors.js"

export interface ResolvedPath {
  absolute: string
  /** Normalized, "/"-separated, "" for the root. */
  relative: string
}

export interface ResolvedEntry extends ResolvedPath {
  /** lstat of the final component. */
  stat: fs.Stats
}

/** Resolves a path relative to the memory root. "" or "." means the root. Throws MemoryError. */
export function resolveMemoryPath(root: string, relative: string): ResolvedPath {
  const { absolute, relative: normalized } = resolveMemoryEntry(root, relative)
  return { absolute, relative: normalized }
}

/** `resolveMemoryPath`, also returning the lstat it took of the final component. */
export function resolveMemoryEntry(root: string, relative: string): ResolvedEntry {
  const components = splitRelative(relative)
  const normalized = components.join("/")
  let stat = lstatComponent(root, "", normalized)
  if (!stat.isDirectory()) throw noRoot()
  let absolute = root
  for (let i = 0; i < components.length; i++) {
    if (!stat.isDirectory()) throw notFound(normalized)
    absolute = absolute + path.sep + components[i]!
    stat = lstatComponent(absolute, components.slice(0, i + 1).join("/"), normalized)
  }
  return { absolute, relative: normalized, stat }
}

/** The components of a model-given relative path, after the textual checks. */
export function splitRelative(relative: string): string[] {
  if (typeof relative !== "string") throw new MemoryError("invalid_path", "A path must be a string relative to the memory folder, such as \"MEMORY.md\".")
  if (relative.includes("\0")) throw new MemoryError("invalid_path", "The path contains a NUL character; pass a plain relative path such as \"MEMORY.md\".")
  if (relative.includes("\\")) {
    throw new MemoryError("invalid_path", `"${relative}" contains a backslash; separate folders with "/", as in "rollout_summaries/file.md".`)
  }
  if (relative.startsWith("/") || /^[A-Za-z]:/.test(relative)) {
    throw new MemoryError("invalid_path", `"${relative}" is absolute; pass a path relative to the memory folder, such as "MEMORY.md" ("" for the folder itself).`)
  }
  const components = relative.split("/").filter((part) => part !== "" && part !== ".")
  if (components.includes("..")) {
    throw new MemoryError("invalid_path", `"${relative}" uses ".."; paths must stay inside the memory folder, so name the file from the folder's top.`)
  }
  if (components.some(isHiddenName)) throw notFound(components.join("/"))
  return components
}

/** Dot-entries are never memory: hidden from listings and searches, and absent to reads. */
export function isHiddenName(name: string): boolean {
  return name.startsWith(".")
}

/**
 * Orders strings as their UTF-8 bytes would be ordered (that is, by code point). JavaScript's `<`
 * compares UTF-16 units, which differs only between surrogates and U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      // Move surrogates above the rest of the BMP, where the code points they encode belong.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

/** Sorts in place by `key` in code-point order, using the native comparison when it agrees. */
export function sortByCodePoints<T>(items: T[], key: (item: T) => string): T[] {
  const native = !items.some((item) => /[\ud800-\uffff]/.test(key(item)))
  return items.sort(native ? (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) : (a, b) => compareCodePoints(key(a), key(b)))
}

/**
 * Reads a regular file without following a symlink at its last component, refusing it if it is
 * no longer the file `expected` described (swapped between the lstat and the open).
 * Returns the bytes and the fstat taken before reading, which is the identity of those bytes.
 */
export function readFileNoFollow(absolute: string, relative: string, expected: fs.Stats): { bytes: Buffer; stat: fs.Stats } {
  let fd: number
  try {
    // O_NONBLOCK keeps a FIFO swapped in after the lstat from blocking the open.
    fd = fs.openSync(absolute, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0))
  } catch (error) {
    throw changedOr(relative, error)
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || stat.ino !== expected.ino || stat.dev !== expected.dev) {
      throw new MemoryError("io", `"${relative}" changed while it was being opened; try again.`)
    }
    return { bytes: fs.readFileSync(fd), stat }
  } catch (error) {
    throw error instanceof MemoryError ? error : ioError(relative, error)
  } finally {
    fs.closeSync(fd)
  }
}

function lstatComponent(absolute: string, component: string, requested: string): fs.Stats {
  let stat: fs.Stats | undefined
  try {
    stat = fs.lstatSync(absolute, { throwIfNoEntry: false })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") throw notFound(requested)
    throw ioError(component, error)
  }
  if (!stat) {
    if (component === "") throw noRoot()
    throw notFound(requested)
  }
  if (stat.isSymbolicLink()) {
    const which = component === "" ? "the memory folder itself" : `"${component}"`
    throw new MemoryError("invalid_path", `Symlinks are not followed in the memory folder, and ${which} is one; use another path.`)
  }
  return stat
}

function noRoot(): MemoryError {
  return new MemoryError("not_found", "The memory folder does not exist yet, so it holds no memories.")
}

function notFound(relative: string): MemoryError {
  return new MemoryError("not_found", `"${relative}" does not exist in the memory folder; use memory_list to see what is there.`)
}

function changedOr(relative: string, error: unknown): MemoryError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === "ENOENT") return notFound(relative)
  if (code === "ELOOP") return new MemoryError("invalid_path", `Symlinks are not followed in the memory folder, and "${relative}" is one; use another path.`)
  return ioError(relative, error)
}
