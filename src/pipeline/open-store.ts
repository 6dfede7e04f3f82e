// Opening one of the plugin's databases at start-up, saying in the log and in memory_inspect what
// the open had to do: a corrupt file moved aside, or a schema migrated. One function for memory.db
// (the catalog) and each version's own file, so both report alike.
import path from "node:path"
import type { Diagnostics } from "../diagnostics.js"
import { openDatabase, type OpenedDatabase, type OpenOptions } from "../store/database.js"

export function openReported(file: string, options: OpenOptions, diagnostics: Diagnostics): OpenedDatabase {
  const opened = openDatabase(file, options)
  const name = path.basename(file)
  const { recovered, migrated } = opened
  if (recovered) diagnostics.report("warn", "store", `${name} could not be read (${recovered.reason}); it was moved to ${recovered.movedTo} and a new one was created`)
  if (migrated.from !== migrated.to) diagnostics.report("info", "store", `${name} migrated from schema ${migrated.from} to ${migrated.to} (${opened.db.driver})`)
  return opened
}
