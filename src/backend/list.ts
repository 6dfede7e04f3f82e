// memory_list: one folder, shallow, in byte order, paged. Dot-entries are not memory and are left
// out; symlinks and other special files are left out too, since nothing here follows or reads them.
// Names are shown redacted (search.ts's header): a secret in a file's name is not listed.
import fs from "node:fs"
import path from "node:path"
import { redactText } from "../redact/redact.js"
import { ioError, MemoryError } from "./errors.js"
import type { ListEntry, ListRequest, ListResult } from "./requests.js"
import { compareCodePoints, isHiddenName, resolveMemoryEntry, sortByCodePoints } from "./safe-path.js"
import { wholeNumber } from "./search-args.js"
import { decodeListCursor, encodeCursor } from "./search-cursor.js"

/** Default and maximum entries per page. */
export const LIST_MAX_RESULTS = 2_000

export function listMemoryFolder(root: string, request: ListRequest): ListResult {
  const maxResults = wholeNumber(request.max_results, "max_results", { min: 1, max: LIST_MAX_RESULTS, fallback: LIST_MAX_RESULTS })
  const folder = resolveMemoryEntry(root, request.path ?? "")
  if (!folder.stat.isDirectory()) {
    throw new MemoryError("invalid_argument", `"${folder.relative}" is a file, not a folder; call memory_read with this path to read it.`)
  }
  const after = request.cursor === undefined || request.cursor === null ? undefined : decodeListCursor(request.cursor, folder.relative).after
  let dirents: fs.Dirent[]
  try {
    dirents = fs.readdirSync(folder.absolute, { withFileTypes: true })
  } catch (error) {
    throw ioError(folder.relative, error)
  }
  const visible = sortByCodePoints(
    dirents.filter((dirent) => !isHiddenName(dirent.name) && (dirent.isFile() || dirent.isDirectory())),
    (dirent) => dirent.name,
  )
  const start = after === undefined ? 0 : firstAfter(visible, after)
  const page = visible.slice(start, start + maxResults)
  const prefix = folder.relative === "" ? "" : `${folder.relative}/`
  const entries: ListEntry[] = []
  for (const dirent of page) {
    const entry = describe(folder.absolute, prefix, dirent)
    if (entry) entries.push(entry)
  }
  const last = page[page.length - 1]
  const more = start + page.length < visible.length && last !== undefined
  return { path: redactText(folder.relative), entries, total: visible.length, ...(more ? { next_cursor: encodeCursor({ kind: "list", folder: folder.relative, after: last.name }) } : {}) }
}

/** The entry as it is now; undefined if it vanished or turned into something not listed. */
function describe(folder: string, prefix: string, dirent: fs.Dirent): ListEntry | undefined {
  const relative = redactText(prefix + dirent.name)
  if (dirent.isDirectory()) return { path: relative, type: "directory" }
  let stat: fs.Stats | undefined
  try {
    stat = fs.lstatSync(path.join(folder, dirent.name), { throwIfNoEntry: false })
  } catch {
    return undefined
  }
  return stat?.isFile() ? { path: relative, type: "file", size: stat.size } : undefined
}

function firstAfter(sorted: readonly fs.Dirent[], name: string): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (compareCodePoints(sorted[mid]!.name, name) <= 0) low = mid + 1
    else high = mid
  }
  return low
}
