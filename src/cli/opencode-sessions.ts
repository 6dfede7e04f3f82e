// Whether OpenCode has a session, asked of OpenCode's own command line: `opencode export <id>
// --pure` reads the session by id (any project) and fails with "Session not found" when there is
// none. The CLI never opens OpenCode's database itself; OpenCode answers for its own data. Its output
// (the session's whole history) is thrown away unread, and `--pure` keeps plugins, this one
// included, from loading in that process.
import { spawn } from "node:child_process"

const TIMEOUT_MS = 30_000
/** Enough of OpenCode's stderr to find its verdict in. */
const STDERR_MAX_CHARS = 16_384

export interface OpencodeSessionsOptions {
  /** The OpenCode binary (`--opencode`), else `opencode` from PATH. */
  binary: string
  env: Readonly<Record<string, string | undefined>>
}

/** True when OpenCode has the session, false when it says it has none; throws when it cannot be asked. */
export function opencodeHasSession(sessionId: string, options: OpencodeSessionsOptions): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let stderr = ""
    const child = spawn(options.binary, ["export", sessionId, "--pure"], {
      env: { ...process.env, ...options.env } as NodeJS.ProcessEnv,
      stdio: ["ignore", "ignore", "pipe"],
      timeout: TIMEOUT_MS,
    })
    child.stderr?.setEncoding("utf8")
    child.stderr?.on("data", (chunk: string) => {
      if (stderr.length < STDERR_MAX_CHARS) stderr += chunk
    })
    child.on("error", (error) => reject(new Error(`could not run \`${options.binary} export\` (${error.message}); pass --opencode PATH`)))
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(true)
      if (/session not found/i.test(stderr)) return resolve(false)
      const why = signal ? `stopped by ${signal}` : `exit ${code}`
      // Colours and the spinner are OpenCode's; only the last line says what went wrong.
      const last = stderr.replace(/\u001b\[[0-9;]*m/g, "").trim().split("\n").pop() ?? ""
      reject(new Error(`\`${options.binary} export\` failed (${why})${last ? `: ${last.slice(0, 300)}` : ""}`))
    })
  })
}
