// notes and notes delete: the notes the user asked the model to keep (extensions/ad_hoc/notes/),
// listed, and one deleted. The next consolidation sees the note gone in its diff and removes what
// only the note supported, as for any forgotten input.
import { deleteNote, listNotes } from "../../backend/notes.js"
import { MemoryError } from "../../backend/errors.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"
import { versionFlag } from "./records.js"

export const notesCommand: Command = {
  name: "notes",
  usage: "notes [delete PATH --yes] [--version v1|v2] [--home DIR] [--text]",
  summary: "the notes kept at the user's request; delete PATH removes one (the next consolidation forgets it)",
  flags: { version: { type: "string" }, yes: { type: "boolean" } },
  positionals: { min: 0, max: 2 },
  async run({ cli, args }) {
    const [verb, target] = args.positionals
    if (verb !== undefined && verb !== "delete") throw new CliError("usage", `notes takes no argument but "delete PATH"; got ${JSON.stringify(verb)}`)
    if (verb === "delete" && !target) throw new CliError("usage", "notes delete needs the note's path, as `notes` lists it")
    if (verb === "delete" && !args.values.yes) throw new CliError("usage", "deleting a note makes memory forget what it said; confirm with --yes")
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const version = versionFlag(args.values.version, home.memory.options.version)
      const root = home.memory.pipeline(version).paths.memoryRoot
      if (verb === "delete") {
        try {
          deleteNote(root, target!)
        } catch (error) {
          if (error instanceof MemoryError && error.kind === "not_found") throw new CliError("not_found", error.message)
          if (error instanceof MemoryError) throw new CliError("usage", error.message)
          throw error
        }
        home.memory.pipeline(version).invalidate()
        return { json: { version, deleted: target }, text: `deleted ${target}; the next consolidation of ${version} removes what only it said` }
      }
      const notes = listNotes(root)
      return { json: { version, notes }, text: notes.length ? notes.map((note) => `${note.path}  ${note.title}`).join("\n") : `no notes in ${version}` }
    })
  },
}
