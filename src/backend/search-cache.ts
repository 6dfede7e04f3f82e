// File contents for memory_search, kept per backend instance so that a warm query costs one lstat
// per file instead of one read. An entry is reused only while search-identity.ts says so, so
// edits made outside the plugin are seen on the next query without any invalidation. Derived
// texts (lowercased, letters-and-digits only) are built on first use and at most two are kept per
// file; a character budget bounds the whole cache, and files read beyond it are not kept. Each
// file's redacted text (redactLines: every line on its number) is built on first use too, and is
// the same object as the text read when redaction changes nothing, as it usually does.
import type fs from "node:fs"
import { redactLines } from "../redact/redact.js"
import { readFileNoFollow } from "./safe-path.js"
import { identityOf, SETTLE_MS, stillValid, type Identity } from "./search-identity.js"
import { lineStarts } from "./search-lines.js"

/** How a file's text is compared: as is, lowercased, letters and digits only, or both. */
export type VariantKind = "exact" | "lower" | "letters" | "letters-lower"

export interface Variant {
  text: string
  /** Line starts of `text`; line numbers are the same in every variant of one file. */
  starts: Uint32Array
  /** Character-triple set (search-filter.ts), built on the first search of this variant. */
  triples?: Uint32Array
}

/** Characters (UTF-16 units) of text the cache may hold, originals and variants together. */
export const SEARCH_CACHE_MAX_CHARS = 64 * 1024 * 1024
/** Larger files are not searched: one would cost more than the rest of a typical memory folder. */
export const SEARCH_MAX_FILE_BYTES = 32 * 1024 * 1024
/** Derived variants kept per file; the original is always kept. */
const MAX_DERIVED_VARIANTS = 2

export interface CacheOptions {
  maxChars?: number
  settleMs?: number
  now?: () => number
}

export class CachedFile {
  readonly derived = new Map<VariantKind, Variant>()
  /** The file as answers may quote it (see FileCache.clean); `this` when redaction changes nothing. */
  cleaned: CachedFile | undefined

  constructor(
    readonly identity: Identity,
    /** Undefined for a file that is not searched (binary, or too large). */
    readonly original: Variant | undefined,
    /** False for a file read beyond the cache budget, used for one query only. */
    readonly kept: boolean,
  ) {}
}

export class FileCache {
  private readonly files = new Map<string, CachedFile>()
  private chars = 0
  private readonly maxChars: number
  private readonly settleMs: number
  private readonly now: () => number

  constructor(options: CacheOptions = {}) {
    this.maxChars = options.maxChars ?? SEARCH_CACHE_MAX_CHARS
    this.settleMs = options.settleMs ?? SETTLE_MS
    this.now = options.now ?? (() => Date.now())
  }

  /** The file as `stat` describes it, read again unless the cached read is still valid. Throws on a read failure. */
  load(relative: string, absolute: string, stat: fs.Stats): CachedFile {
    const cached = this.files.get(relative)
    if (cached && stillValid(cached.identity, stat)) return cached
    if (cached) this.forget(relative)
    const readAt = this.now()
    if (stat.size > SEARCH_MAX_FILE_BYTES) return this.keep(relative, new CachedFile(identityOf(stat, readAt, this.settleMs), undefined, true))
    const { bytes, stat: opened } = readFileNoFollow(absolute, relative, stat)
    const identity = identityOf(opened, readAt, this.settleMs)
    // A NUL byte is the usual sign of a binary file; its "lines" would only be noise.
    if (bytes.includes(0)) return this.keep(relative, new CachedFile(identity, undefined, true))
    const text = bytes.toString("utf8")
    const original = { text, starts: lineStarts(text) }
    const kept = this.chars + text.length <= this.maxChars
    return kept ? this.keep(relative, new CachedFile(identity, original, true)) : new CachedFile(identity, original, false)
  }

  /** The file's text compared the `kind` way, built on first use. */
  variant(file: CachedFile, kind: VariantKind): Variant | undefined {
    const original = file.original
    if (!original || kind === "exact") return original
    const known = file.derived.get(kind)
    if (known) return known
    const text = transformText(original.text, kind)
    // Lowercasing maps every UTF-16 unit to one unit except U+0130 (to two), so an unchanged
    // length means unchanged offsets and line starts; a text without capitals is shared, not copied.
    const variant = text === original.text ? original : { text, starts: text.length === original.text.length ? original.starts : lineStarts(text) }
    if (!file.kept) return variant
    const cost = variant === original ? 0 : text.length
    if (this.chars + cost > this.maxChars) return variant
    if (file.derived.size >= MAX_DERIVED_VARIANTS) {
      const [oldest, dropped] = file.derived.entries().next().value as [VariantKind, Variant]
      file.derived.delete(oldest)
      if (dropped !== original) this.chars -= dropped.text.length
    }
    file.derived.set(kind, variant)
    this.chars += cost
    return variant
  }

  /**
   * The file as the tools may show it, with every secret the redactor knows replaced by its marker
   * and every line on its number; built once per read of the file. Undefined for a file that is not
   * searched (binary, or too large).
   */
  clean(file: CachedFile): CachedFile | undefined {
    if (!file.original) return undefined
    if (file.cleaned) return file.cleaned
    const text = redactLines(file.original.text)
    if (text === file.original.text) return (file.cleaned = file)
    const clean = new CachedFile(file.identity, { text, starts: lineStarts(text) }, file.kept && this.chars + text.length <= this.maxChars)
    if (!clean.kept) return clean
    this.chars += text.length
    return (file.cleaned = clean)
  }

  /** Drops every entry whose path is not in `live` (files deleted or renamed since). */
  retain(live: ReadonlySet<string>): void {
    for (const relative of this.files.keys()) if (!live.has(relative)) this.forget(relative)
  }

  forget(relative: string): void {
    const file = this.files.get(relative)
    if (!file) return
    this.files.delete(relative)
    this.chars -= charsOf(file)
  }

  clear(): void {
    this.files.clear()
    this.chars = 0
  }

  /** Number of files and characters held. */
  get size(): { files: number; chars: number } {
    return { files: this.files.size, chars: this.chars }
  }

  private keep(relative: string, file: CachedFile): CachedFile {
    this.files.set(relative, file)
    this.chars += charsOf(file)
    return file
  }
}

/** The text (a whole file or a query) as the `kind` comparison sees it; "\n" always survives. */
export function transformText(text: string, kind: VariantKind): string {
  switch (kind) {
    case "exact":
      return text
    case "lower":
      return text.toLowerCase()
    case "letters":
      return lettersAndDigits(text)
    case "letters-lower":
      // Lowercase first: a capital can lowercase to a letter plus a combining mark, which is then dropped.
      return lettersAndDigits(text.toLowerCase())
  }
}

function lettersAndDigits(text: string): string {
  return text.replace(/[^\p{L}\p{N}\n]+/gu, "")
}

function charsOf(file: CachedFile): number {
  let chars = file.original?.text.length ?? 0
  for (const variant of file.derived.values()) if (variant !== file.original) chars += variant.text.length
  if (file.cleaned && file.cleaned !== file) chars += charsOf(file.cleaned)
  return chars
}
