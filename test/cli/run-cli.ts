// The command-line tool in process, for the CLI tests: one call's exit code, its stdout parsed as
// JSON (or left as text for --text), and its stderr. The config folder and the home directory are
// under `root`, and the clock is fixed.
import path from "node:path"
import { fileURLToPath } from "node:url"
import { runCli } from "../../src/cli/run.js"

const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url))

export interface Ran {
  code: number
  json: Record<string, unknown>
  stderr: string
  stdout: string
}

export async function runCliIn(root: string, argv: readonly string[], now: number, env: Record<string, string> = {}): Promise<Ran> {
  let stdout = ""
  let stderr = ""
  const code = await runCli([...argv], {
    env: { XDG_CONFIG_HOME: path.join(root, "config"), ...env },
    homedir: root,
    packageDir: PACKAGE_DIR,
    now: () => now,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stdin: async () => Buffer.from(""),
  })
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(stdout) as Record<string, unknown>
  } catch {
    // --text output
  }
  return { code, json, stderr, stdout }
}
