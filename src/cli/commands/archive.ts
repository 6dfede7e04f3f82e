// export FILE and import FILE: the memory home as one portable, versioned archive (src/archive),
// written atomically; import validates everything before writing and refuses a non-empty home
// unless --replace.
import fs from "node:fs"
import path from "node:path"
import { ArchiveError } from "../../archive/errors.js"
import { exportHome } from "../../archive/export.js"
import { importArchive } from "../../archive/import.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { homeExists, locateHome, withHome } from "../home.js"

export const exportCommand: Command = {
  name: "export",
  usage: "export FILE [--force] [--home DIR]",
  summary: "write the memory home (folders and records, never OpenCode's data) to FILE (--force replaces an existing FILE)",
  flags: { force: { type: "boolean" } },
  positionals: { min: 1, max: 1 },
  async run({ cli, args }) {
    const file = path.resolve(args.positionals[0]!)
    if (!args.values.force && fs.existsSync(file)) throw new CliError("refused", `${file} already exists; export to another file, or pass --force to replace it`)
    const target = locateHome(cli, args.values.home as string | undefined)
    // Records of sessions kept out (an import can bring some) are forgotten before anything is read.
    if (homeExists(target)) await withHome(cli, args.values.home as string | undefined, async (home) => void home.memory.forgetting.sweep())
    const { archive, summary, skipped } = archiveCall(() => exportHome(target.home, cli.now ? { now: cli.now } : {}))
    // Beside the target, then renamed: a crash never leaves half an archive under its name.
    const temp = `${file}.tmp-${process.pid}`
    try {
      fs.writeFileSync(temp, archive, { flag: "wx" })
      fs.renameSync(temp, file)
    } catch (error) {
      fs.rmSync(temp, { force: true })
      throw new CliError("io", `could not write ${file}: ${(error as Error).message}`)
    }
    return { json: { file, home: target.home, ...summary, skipped }, text: `wrote ${file}: ${summary.files} files, ${Object.values(summary.tables).reduce((a, b) => a + b, 0)} rows${skipped.length ? `; skipped ${skipped.join(", ")}` : ""}` }
  },
}

export const importCommand: Command = {
  name: "import",
  usage: "import FILE [--replace] [--home DIR]",
  summary: "restore a memory home from an archive (refuses a non-empty home unless --replace)",
  flags: { replace: { type: "boolean" } },
  positionals: { min: 1, max: 1 },
  async run({ cli, args, readInput }) {
    const file = args.positionals[0]!
    const target = locateHome(cli, args.values.home as string | undefined)
    const input = await readInput(file)
    const result = archiveCall(() => importArchive(input, target.home, { replace: Boolean(args.values.replace), ...(cli.now ? { now: cli.now } : {}) }))
    return { json: { home: target.home, ...result }, text: `imported into ${target.home}: ${result.files} files, ${Object.values(result.tables).reduce((a, b) => a + b, 0)} rows` }
  },
}

function archiveCall<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    if (error instanceof ArchiveError) throw new CliError(error.code === "no_home" ? "no_home" : error.code, error.message)
    throw error
  }
}
