// Paging cursors for memory_list and memory_search. A cursor names the last item of the page it
// ends (keyset paging), not an offset, so a file added or removed between two calls shifts
// nothing: the next page starts right after that item in the same order. It also carries what it
// belongs to (a folder, or a fingerprint of the search), so a cursor passed to another call is
// refused instead of silently skipping results. The encoding is opaque to the model.
import { createHash } from "node:crypto"
import { MemoryError } from "./errors.js"

export interface ListCursor {
  kind: "list"
  /** The listed folder, normalized. */
  folder: string
  /** Name of the last entry returned. */
  after: string
}

export interface SearchCursor {
  kind: "search"
  fingerprint: string
  /** Path and 1-based line of the last match returned. */
  path: string
  line: number
}

/** Ranked pages are by position: ranks have no key to resume after. */
export interface RankedCursor {
  kind: "ranked"
  fingerprint: string
  offset: number
}

export function encodeRankedCursor(fingerprint: string, offset: number): string {
  return encodeCursor({ kind: "ranked", fingerprint, offset })
}

export function decodeRankedCursor(cursor: string, fingerprint: string): number {
  const value = decode(cursor)
  if (value?.kind !== "ranked" || !Number.isInteger(value.offset) || (value.offset as number) < 0) throw invalidCursor("memory_search")
  if (value.fingerprint !== fingerprint) throw otherRequest("memory_search", "search arguments")
  return value.offset as number
}

export function encodeCursor(cursor: ListCursor | SearchCursor | RankedCursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url")
}

export function decodeListCursor(cursor: string, folder: string): ListCursor {
  const value = decode(cursor)
  if (value?.kind !== "list" || typeof value.after !== "string") throw invalidCursor("memory_list")
  if (value.folder !== folder) throw otherRequest("memory_list", "path")
  return { kind: "list", folder, after: value.after }
}

export function decodeSearchCursor(cursor: string, fingerprint: string): SearchCursor {
  const value = decode(cursor)
  if (value?.kind !== "search" || typeof value.path !== "string" || !Number.isInteger(value.line)) throw invalidCursor("memory_search")
  if (value.fingerprint !== fingerprint) throw otherRequest("memory_search", "search arguments")
  return { kind: "search", fingerprint, path: value.path, line: value.line as number }
}

/** A short digest of everything that decides which matches a search has and in what order. */
export function fingerprintOf(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 16)
}

function decode(cursor: string): Record<string, unknown> | undefined {
  if (typeof cursor !== "string") return undefined
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return value && typeof value === "object" ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function invalidCursor(tool: string): MemoryError {
  return new MemoryError("invalid_argument", `cursor is not one that ${tool} returned; pass next_cursor from the previous result unchanged, or omit it to start from the first page.`)
}

function otherRequest(tool: string, what: string): MemoryError {
  return new MemoryError("invalid_argument", `cursor belongs to a ${tool} call with different ${what}; repeat that call's arguments with it, or omit cursor to start from the first page.`)
}
