// ui: the local web viewer (src/viewer). It prints its address, which carries this run's token,
// and serves until Ctrl+C; it opens a browser only when asked with --open.
import { spawn } from "node:child_process"
import type { Command } from "../command.js"
import { intFlag } from "../args.js"
import { locateHome, homeExists } from "../home.js"
import { CliError } from "../errors.js"

export const uiCommand: Command = {
  name: "ui",
  usage: "ui [--open] [--port N] [--home DIR]",
  summary: "a local web viewer of memory (127.0.0.1 only, with a per-run token); Ctrl+C stops it",
  flags: { open: { type: "boolean" }, port: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    const homeFlag = args.values.home as string | undefined
    const target = locateHome(cli, homeFlag)
    if (!homeExists(target)) throw new CliError("no_home", `no memory home at ${target.home} (from ${target.source}); it is created when OpenCode runs with the plugin, or pass --home`)
    const port = args.values.port === undefined ? 0 : intFlag(args.values.port, "port", 0, 1024, 65_535)
    // Loaded here, not with the CLI: no other command pays for the viewer's modules.
    const { startViewer } = await import("../../viewer/server.js")
    const viewer = await startViewer({ cli, port, ...(homeFlag !== undefined ? { home: homeFlag } : {}) })
    process.stderr.write(`memory viewer on ${viewer.url}\n(only this machine can reach it; the address carries this run's token. Ctrl+C stops it)\n`)
    if (args.values.open) openBrowser(viewer.url)
    await new Promise<void>((resolve) => {
      const stop = () => void viewer.close().then(resolve)
      process.once("SIGINT", stop)
      process.once("SIGTERM", stop)
    })
    return { json: { url: viewer.url, stopped: true }, text: "viewer stopped" }
  },
}

/** The system's way to open a URL; failures are the user's browser's business, not the viewer's. */
function openBrowser(url: string): void {
  const [command, ...args] = process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : ["xdg-open", url]
  try {
    spawn(command!, args, { stdio: "ignore", detached: true }).on("error", () => undefined).unref()
  } catch {
    // No opener: the printed address is there.
  }
}
