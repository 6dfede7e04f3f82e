// The memory archive: one JSON document that carries a whole memory home to another machine.
// Version 1 holds every table row of memory.db (and memory_v2.db when the home has one) under its
// column names, and every regular file of memories/ and memories_v2/. The git baselines (.git,
// .git-baseline-next) stay behind: the next consolidation rebuilds them from the folder. The
// checksum is the SHA-256 of the canonical JSON of everything else, so a damaged or truncated copy
// is refused as a whole before anything is written.
import { createHash } from "node:crypto"
import { MIGRATIONS, V2_MIGRATIONS } from "../store/migrations.js"
import type { MemoryVersion } from "../util/paths.js"
import { z, type Infer } from "../util/zod.js"

export const ARCHIVE_FORMAT = "opencode-codex-memory-archive"
export const ARCHIVE_VERSION = 1
/** Both ways: export refuses to write a larger archive, import to read one. */
export const ARCHIVE_MAX_BYTES = 4 * 1024 * 1024

/**
 * What each memory version keeps in a home, under the names memoryPaths gives them (a test holds
 * the two together). `schema` names the archive's field recording that database's schema version.
 */
export const ARCHIVED_VERSIONS = Object.freeze([
  { version: "v1", database: "memory.db", folder: "memories", schema: "catalog", migrations: MIGRATIONS },
  { version: "v2", database: "memory_v2.db", folder: "memories_v2", schema: "v2", migrations: V2_MIGRATIONS },
] as const satisfies ReadonlyArray<{ version: MemoryVersion; database: string; folder: string; schema: string; migrations: unknown }>)

export type ArchivedVersion = (typeof ARCHIVED_VERSIONS)[number]
export type DatabaseName = ArchivedVersion["database"]

/** Folders never archived, at any depth: git baselines, rebuilt by the next consolidation. */
export const EXCLUDED_DIRS: readonly string[] = Object.freeze([".git", ".git-baseline-next"])

/** A column value: JSON carries text, numbers and NULL as they are; a BLOB travels as base64. */
const cell = z.union([z.string(), z.number(), z.null(), z.strictObject({ base64: z.string() })])

const table = z.strictObject({
  columns: z.array(z.string().min(1)),
  rows: z.array(z.array(cell)),
})

const database = z.strictObject({ tables: z.record(z.string().min(1), table) })

const file = z.strictObject({
  /** Relative to the home, "/"-separated: "memories/MEMORY.md". */
  path: z.string().min(1),
  /** utf8 for files that are valid UTF-8, base64 for the rest. */
  encoding: z.enum(["utf8", "base64"]),
  content: z.string(),
  /** Of the file's bytes, lowercase hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits"),
})

export const archiveSchema = z.strictObject({
  format: z.literal(ARCHIVE_FORMAT),
  archive_version: z.literal(ARCHIVE_VERSION),
  created_at: z.iso.datetime(),
  /** The schema version (migration count) of each database's rows: the exporting build's. */
  schema: z.strictObject({ catalog: z.number().int().positive(), v2: z.number().int().positive() }),
  databases: z.strictObject({ "memory.db": database, "memory_v2.db": database.optional() }),
  files: z.array(file),
  checksum: z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits"),
})

export type Archive = Infer<typeof archiveSchema>
export type ArchiveCell = Infer<typeof cell>
export type ArchiveTable = Infer<typeof table>
export type ArchiveDatabase = Infer<typeof database>
export type ArchiveFile = Infer<typeof file>

/**
 * JSON with every object's keys sorted, no whitespace: the same value always gives the same text,
 * whatever order or spacing the file was written with.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** The checksum of an archive: of everything but its own `checksum` field. */
export function archiveChecksum(archive: object): string {
  const { checksum: _ignored, ...body } = archive as Record<string, unknown>
  return sha256Hex(Buffer.from(canonicalJson(body), "utf8"))
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex")
}

/** A file's bytes as the archive carries them: as text when they are exactly valid UTF-8. */
export function encodeFileContent(bytes: Buffer): Pick<ArchiveFile, "encoding" | "content"> {
  // Decoding replaces invalid sequences with U+FFFD, so only valid UTF-8 survives the round trip.
  const text = bytes.toString("utf8")
  return Buffer.from(text, "utf8").equals(bytes) ? { encoding: "utf8", content: text } : { encoding: "base64", content: bytes.toString("base64") }
}

/** The bytes of an archived file, or undefined when base64 content is not canonical base64. */
export function decodeFileContent(file: Pick<ArchiveFile, "encoding" | "content">): Buffer | undefined {
  if (file.encoding === "utf8") return Buffer.from(file.content, "utf8")
  const bytes = Buffer.from(file.content, "base64")
  return bytes.toString("base64") === file.content ? bytes : undefined
}

/**
 * Why `relative` cannot name a file in an archive, or undefined when it can: "/"-separated inside
 * memories/ or memories_v2/, with no empty, "." or ".." segment, no backslash, no NUL and no git
 * folder. Export skips files that fail this, so every archive it writes can be imported.
 */
export function archivePathProblem(relative: string): string | undefined {
  if (relative.includes("\0")) return "contains a NUL character"
  if (relative.includes("\\")) return "contains a backslash (archive paths are separated by \"/\")"
  if (relative.startsWith("/") || /^[A-Za-z]:/.test(relative)) return "is absolute (archive paths are relative to the memory home)"
  const segments = relative.split("/")
  if (segments.some((segment) => segment === "")) return "has an empty segment"
  if (segments.some((segment) => segment === "." || segment === "..")) return "uses \".\" or \"..\""
  if (!ARCHIVED_VERSIONS.some((version) => version.folder === segments[0])) {
    return `is outside the memory folders (it must start with ${ARCHIVED_VERSIONS.map((version) => `"${version.folder}/"`).join(" or ")})`
  }
  if (segments.length < 2) return "names a memory folder, not a file in it"
  // Lowercased: on a case-insensitive file system ".GIT" is the git folder too.
  if (segments.some((segment) => EXCLUDED_DIRS.includes(segment.toLowerCase()))) return "is inside a git folder, which archives never carry"
  return undefined
}
