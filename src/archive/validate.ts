// Everything an import checks before it writes anything: the size, the JSON, the format and its
// version, the schema, the checksum, every file's path and hash, and every table and column name
// against the schema the archive's rows were written under. A refusal here leaves no trace.
import { PLUGIN_ID } from "../constants.js"
import { ArchiveError } from "./errors.js"
import {
  ARCHIVE_FORMAT,
  ARCHIVE_MAX_BYTES,
  ARCHIVE_VERSION,
  ARCHIVED_VERSIONS,
  archiveChecksum,
  archivePathProblem,
  archiveSchema,
  decodeFileContent,
  sha256Hex,
  type Archive,
} from "./format.js"
import { migratedSchema } from "./tables.js"

export interface ValidArchive {
  archive: Archive
  /** The archive's files, decoded and checked against their hashes. */
  files: Array<{ path: string; bytes: Buffer }>
}

/** How many schema problems a refusal lists before it only counts the rest. */
const ISSUES_SHOWN = 5

export function validateArchive(input: string | Buffer): ValidArchive {
  const size = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.length
  if (size > ARCHIVE_MAX_BYTES) {
    throw new ArchiveError(
      "too_large",
      `The archive is ${(size / (1024 * 1024)).toFixed(1)} MiB, more than the ${ARCHIVE_MAX_BYTES / (1024 * 1024)} MiB an archive may hold; export writes none this large, so this file was not made by it, or was changed since. Nothing was changed.`,
    )
  }
  const value = parseJson(decodeText(input))
  checkVersion(value)
  const parsed = archiveSchema.safeParse(value)
  if (!parsed.success) {
    const issues = parsed.error.issues
    const listed = issues.slice(0, ISSUES_SHOWN).map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
    const more = issues.length > ISSUES_SHOWN ? `; and ${issues.length - ISSUES_SHOWN} more` : ""
    throw invalid(`The archive does not have the expected fields (${listed.join("; ")}${more}). It was edited or damaged; export it again.`)
  }
  const archive = parsed.data
  // Of the parsed value, not the text: spacing and key order do not matter, only content.
  if (archiveChecksum(value as object) !== archive.checksum) {
    throw invalid(
      "The archive is damaged or truncated: its checksum does not match its content. Copy the file again from the machine that exported it (as a binary file), or export it again.",
    )
  }
  const files = checkFiles(archive)
  checkTables(archive)
  return { archive, files }
}

function decodeText(input: string | Buffer): string {
  if (typeof input === "string") return input.replace(/^\uFEFF/, "")
  try {
    // Fatal: an invalid byte is a damaged archive, not a character to guess. A BOM is dropped.
    return new TextDecoder("utf-8", { fatal: true }).decode(input)
  } catch {
    throw invalid("The archive is not UTF-8 text, so it is damaged or is not an archive; export it again.")
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const detail = (error as Error).message
    // A cut after a whole value reads as "Expected ',' or ']' ... at position N" with N at the end.
    const position = Number(/\bposition (\d+)/.exec(detail)?.[1] ?? Number.NaN)
    if (text.trim() === "" || /end of (JSON )?input|unterminated/i.test(detail) || position >= text.trimEnd().length) {
      throw invalid(`The archive is truncated: its JSON stops early (${detail}). Copy the file again, completely, or export it again.`)
    }
    throw invalid(`The archive is not JSON (${detail}); the file is damaged or is not an archive made by "${PLUGIN_ID} export".`)
  }
}

/** Before the schema: a newer archive may have fields this build does not know, so say "newer" first. */
function checkVersion(value: unknown): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw invalid(`The file is JSON but not an archive made by "${PLUGIN_ID} export".`)
  const fields = value as Record<string, unknown>
  if (fields.format !== ARCHIVE_FORMAT) {
    const found = typeof fields.format === "string" ? `its format is "${fields.format}"` : "it has no format field"
    throw invalid(`The file is not a memory archive (${found}, not "${ARCHIVE_FORMAT}"); make one with "${PLUGIN_ID} export FILE".`)
  }
  const schema = (fields.schema ?? {}) as Record<string, unknown>
  const newer: string[] = []
  const above = (found: unknown, supported: number) => typeof found === "number" && found > supported
  if (above(fields.archive_version, ARCHIVE_VERSION)) newer.push(`archive version ${String(fields.archive_version)}`)
  for (const version of ARCHIVED_VERSIONS) {
    if (above(schema[version.schema], version.migrations.length)) newer.push(`${version.database} schema ${String(schema[version.schema])}`)
  }
  if (newer.length) {
    const supported = ARCHIVED_VERSIONS.map((version) => `${version.database} schema up to ${version.migrations.length}`).join(", ")
    throw new ArchiveError(
      "newer_archive",
      `The archive was made by a newer ${PLUGIN_ID} (${newer.join(", ")}); this one reads archive version ${ARCHIVE_VERSION} with ${supported}. Upgrade ${PLUGIN_ID} on this machine, then import again. Nothing was changed.`,
    )
  }
}

function checkFiles(archive: Archive): ValidArchive["files"] {
  const files: ValidArchive["files"] = []
  const paths = new Set<string>()
  for (const file of archive.files) {
    const problem = archivePathProblem(file.path)
    if (problem) throw invalid(`The archive holds a file whose path "${printable(file.path)}" ${problem}; it was edited, or made by something else. Nothing was changed.`)
    if (paths.has(file.path)) throw invalid(`The archive holds "${file.path}" twice; it was edited or damaged. Nothing was changed.`)
    paths.add(file.path)
    const bytes = decodeFileContent(file)
    if (!bytes) throw invalid(`The content of "${file.path}" is not valid base64; the archive is damaged. Nothing was changed.`)
    if (sha256Hex(bytes) !== file.sha256) throw invalid(`The content of "${file.path}" does not match its sha256; the archive is damaged. Nothing was changed.`)
    files.push({ path: file.path, bytes })
  }
  // A path cannot be both a file and a folder holding another file.
  for (const file of paths) {
    const segments = file.split("/")
    for (let i = 2; i < segments.length; i++) {
      const folder = segments.slice(0, i).join("/")
      if (paths.has(folder)) throw invalid(`The archive holds "${folder}" both as a file and as the folder of "${file}"; it was edited. Nothing was changed.`)
    }
  }
  return files
}

/** Names are checked here so that only known names ever reach SQL text (quoted, at that). */
function checkTables(archive: Archive): void {
  for (const version of ARCHIVED_VERSIONS) {
    const database = archive.databases[version.database]
    if (!database) continue
    const schemaVersion = archive.schema[version.schema]
    const schema = migratedSchema(version.migrations.slice(0, schemaVersion))
    const where = `${version.database} (schema version ${schemaVersion})`
    for (const [name, table] of Object.entries(database.tables)) {
      const known = schema.get(name)
      if (!known) throw invalid(`The archive's ${version.database} has a table "${printable(name)}" that ${where} does not have; it was edited, or made by something else. Nothing was changed.`)
      const seen = new Set<string>()
      for (const column of table.columns) {
        if (!known.includes(column)) throw invalid(`The archive's table ${version.database}/${name} has a column "${printable(column)}" that ${where} does not have; it was edited. Nothing was changed.`)
        if (seen.has(column)) throw invalid(`The archive's table ${version.database}/${name} names the column "${column}" twice; it was edited. Nothing was changed.`)
        seen.add(column)
      }
      table.rows.forEach((row, index) => {
        if (row.length !== table.columns.length) {
          throw invalid(`Row ${index + 1} of ${version.database}/${name} has ${row.length} values for ${table.columns.length} columns; the archive was edited. Nothing was changed.`)
        }
      })
    }
  }
}

/** A zod issue path as a reader would write it: databases["memory.db"].tables.jobs.rows[2]. */
function fieldPath(segments: ReadonlyArray<PropertyKey>): string {
  let text = ""
  for (const segment of segments) {
    if (typeof segment === "number") text += `[${segment}]`
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(segment))) text += text ? `.${String(segment)}` : String(segment)
    else text += `[${JSON.stringify(String(segment))}]`
  }
  return text || "(the whole archive)"
}

/** Control characters (a NUL above all) shown as escapes, so a message stays one readable line. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
}

function invalid(message: string): ArchiveError {
  return new ArchiveError("invalid_archive", message)
}
