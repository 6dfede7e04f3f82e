// The project filter of memory_search and the CLI's `search`: which rollout summaries and records
// name the project asked for. A project is asked for by its name ("github.com/acme/app"), the
// last part of it ("app"), or its key, in any case. Pure.
import { MemoryError } from "./errors.js"

/** The filter as compared: trimmed and lowercased; undefined when no filter was given. */
export function projectFilter(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string") throw new MemoryError("invalid_argument", `project must be a string (got ${JSON.stringify(value)}); pass a project's name, such as "github.com/acme/app" or "app".`)
  const filter = value.trim().toLowerCase()
  return filter || undefined
}

export function projectMatches(filter: string, project: { key?: string | null; name?: string | null }): boolean {
  const name = project.name?.trim().toLowerCase()
  const key = project.key?.trim().toLowerCase()
  return (!!key && key === filter) || (!!name && (name === filter || name.endsWith(`/${filter}`)))
}

/** The `project:` and `project_key:` lines of a rollout summary's header (the lines before the first blank one). */
export function headerProject(text: string): { key?: string; name?: string } {
  const project: { key?: string; name?: string } = {}
  for (const line of text.slice(0, HEADER_CHARS).split("\n")) {
    if (line.trim() === "") break
    if (line.startsWith("project: ")) project.name = line.slice("project: ".length)
    else if (line.startsWith("project_key: ")) project.key = line.slice("project_key: ".length)
  }
  return project
}

/** A header is a handful of short lines; no need to split a whole large file to find it. */
const HEADER_CHARS = 4_096
