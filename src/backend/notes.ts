// Ad-hoc notes: what the user explicitly asked the model to remember or forget. Each note is a
// new file, created exclusively, so no note ever overwrites another; consolidation folds them in.
import fs from "node:fs"
import path from "node:path"
import { TOOLS } from "../constants.js"
import { errorMessage } from "../diagnostics.js"
import { createFile } from "../util/regular-file.js"
import { MemoryError } from "./errors.js"

export interface NewNote {
  title: string
  note: string
  /** The session that asked for the note, kept as provenance. */
  sessionId?: string
}

export interface WrittenNote {
  /** Relative to the memory root. */
  path: string
  redactions: Record<string, number>
}

export interface NoteDeps {
  root: string
  now: () => Date
  redact: (text: string) => { text: string; counts: Record<string, number> }
}

export function addNote(deps: NoteDeps, input: NewNote): WrittenNote {
  const title = input.title.trim()
  const note = input.note.trim()
  if (!title) throw new MemoryError("invalid_argument", "title is empty: give the note a short title")
  if (!note) throw new MemoryError("invalid_argument", "note is empty: write what should be remembered or forgotten")
  if (note.length > TOOLS.NOTE_MAX_CHARS) {
    throw new MemoryError("invalid_argument", `note has ${note.length} characters; the limit is ${TOOLS.NOTE_MAX_CHARS}: shorten it or split it into several notes`)
  }
  const safeTitle = deps.redact(title)
  const safeNote = deps.redact(note)
  const directory = noteDirectory(deps.root)
  const now = deps.now()
  // The file name comes from the redacted title: a secret must not become a path.
  const stem = `${fileTimestamp(now)}-${slugify(safeTitle.text)}`
  const body = renderNote(safeTitle.text, safeNote.text, now, input.sessionId)
  for (let attempt = 1; attempt <= 100; attempt++) {
    const name = attempt === 1 ? `${stem}.md` : `${stem}-${attempt}.md`
    try {
      // Created whole or not at all, and never over anything (a file, a symlink) already there.
      createFile(path.join(directory, name), body)
      return { path: `${TOOLS.NOTES_DIR}/${name}`, redactions: sumCounts(safeTitle.counts, safeNote.counts) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new MemoryError("io", `could not write the note: ${errorMessage(error)}`)
    }
  }
  throw new MemoryError("exists", "too many notes with this title in the same second; try again")
}

function noteDirectory(root: string): string {
  try {
    return ensureDirectory(root, TOOLS.NOTES_DIR)
  } catch (error) {
    if (error instanceof MemoryError) throw error
    throw new MemoryError("io", `could not write the note: ${errorMessage(error)}`)
  }
}

/** `YYYY-MM-DDTHH-MM-SS` in UTC: sortable, and safe in file names on every OS. */
export function fileTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace(/:/g, "-")
}

export function slugify(title: string): string {
  const slug = title
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, TOOLS.NOTE_SLUG_MAX)
    .replace(/-+$/, "")
  return slug || "note"
}

export function renderNote(title: string, note: string, now: Date, sessionId: string | undefined): string {
  const source = sessionId ? ` in session ${sessionId}` : ""
  return `# ${title.replace(/\s+/g, " ")}\n\nNoted ${now.toISOString()}${source}, at the user's request.\n\n${note}\n`
}

/** Creates each missing folder on the way; refuses a symlink or a file anywhere on it. */
function ensureDirectory(root: string, relative: string): string {
  let current = root
  for (const part of ["", ...relative.split("/")]) {
    current = part ? path.join(current, part) : current
    const stat = fs.lstatSync(current, { throwIfNoEntry: false })
    if (!stat) {
      fs.mkdirSync(current)
      continue
    }
    if (stat.isSymbolicLink()) throw new MemoryError("invalid_path", `${path.relative(root, current) || "the memory folder"} is a symlink; notes are not written through symlinks`)
    if (!stat.isDirectory()) throw new MemoryError("invalid_path", `${path.relative(root, current)} is not a folder`)
  }
  return current
}

function sumCounts(...all: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {}
  for (const counts of all) for (const [key, value] of Object.entries(counts)) total[key] = (total[key] ?? 0) + value
  return total
}

export interface NoteEntry {
  /** Relative to the memory root. */
  path: string
  /** The note's first heading, else its file name. */
  title: string
  bytes: number
}

/** Every note, oldest first (their names start with the time they were written). */
export function listNotes(root: string): NoteEntry[] {
  const directory = path.join(root, ...TOOLS.NOTES_DIR.split("/"))
  // Through no symlink, as everywhere in the memory folder.
  let folder = root
  for (const part of ["", ...TOOLS.NOTES_DIR.split("/")]) {
    folder = part ? path.join(folder, part) : folder
    if (!fs.lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) return []
  }
  return fs
    .readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".md") && !entry.name.startsWith("."))
    .map((entry) => {
      const file = path.join(directory, entry.name)
      const text = fs.readFileSync(file, "utf8")
      const title = /^# (.+)$/m.exec(text)?.[1]?.trim() || entry.name
      return { path: `${TOOLS.NOTES_DIR}/${entry.name}`, title, bytes: Buffer.byteLength(text) }
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * Deletes one note. Only a plain file directly in the notes folder qualifies: anything else (a
 * path elsewhere, a folder, a symlink) is refused. The next consolidation's diff shows it gone,
 * and what only it supported leaves memory.
 */
export function deleteNote(root: string, relative: string): void {
  const prefix = `${TOOLS.NOTES_DIR}/`
  const name = relative.startsWith(prefix) ? relative.slice(prefix.length) : ""
  if (!name || name.includes("/") || name.includes("\\") || name.startsWith(".") || !name.endsWith(".md")) {
    throw new MemoryError("invalid_path", `"${relative}" is not a note; notes are the .md files directly in ${TOOLS.NOTES_DIR}/`)
  }
  // No folder on the way may be a symlink: the file deleted is always inside the memory folder.
  let folder = root
  for (const part of ["", ...TOOLS.NOTES_DIR.split("/")]) {
    folder = part ? path.join(folder, part) : folder
    const on = fs.lstatSync(folder, { throwIfNoEntry: false })
    if (!on) throw new MemoryError("not_found", `no note "${relative}"`)
    if (!on.isDirectory()) throw new MemoryError("invalid_path", `${path.relative(root, folder) || "the memory folder"} is not a plain folder; nothing is deleted through it`)
  }
  const file = path.join(folder, name)
  const stat = fs.lstatSync(file, { throwIfNoEntry: false })
  if (!stat) throw new MemoryError("not_found", `no note "${relative}"`)
  if (!stat.isFile()) throw new MemoryError("invalid_path", `"${relative}" is not a plain file; it is left alone`)
  fs.rmSync(file)
}
