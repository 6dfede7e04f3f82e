// Whether OpenCode has a session, asked of OpenCode itself: the CLI never opens OpenCode's
// database; OpenCode answers for its own data, on either line.
//   - 1.x: `opencode export <id> --pure` reads the session by id (any project) and fails with
//     "Session not found" when there is none; `--pure` keeps plugins from loading there.
//   - 2.x (2.1.2 has no `--pure`): the running background service, when one is registered, is
//     asked `GET /api/session/:id` (404: none); else `opencode session export <id> --standalone`
//     runs a private server for the one question, with this plugin switched off in it
//     (OPENCODE_CODEX_MEMORY_DISABLE), and fails with "Session not found" the same way.
// Output (the session's whole history) is thrown away unread.
import { spawn, spawnSync } from "node:child_process"
import os from "node:os"
import { ENV_DISABLE } from "../util/paths.js"
import { discoverService } from "../util/opencode-service.js"

const TIMEOUT_MS = 30_000
/** Enough of OpenCode's output to find its verdict in. */
const OUTPUT_MAX_CHARS = 16_384

export interface OpencodeSessionsOptions {
  /** The OpenCode binary (`--opencode`), else `opencode` from PATH. */
  binary: string
  env: Readonly<Record<string, string | undefined>>
  /** The user's home folder, where OpenCode's state folder is by default. */
  homedir?: string
  /** The background service's HTTP, replaced by tests. */
  fetch?: typeof fetch
}

/** True when OpenCode has the session, false when it says it has none; throws when it cannot be asked. */
export async function opencodeHasSession(sessionId: string, options: OpencodeSessionsOptions): Promise<boolean> {
  const line = opencodeLine(options)
  if (line === 1) return runVerdict(options, ["export", sessionId, "--pure"], "export")
  // The service this OpenCode registered: found from the CLI's own environment, as OpenCode finds it.
  const service = await discoverService({ env: options.env, homedir: options.homedir ?? os.homedir(), pid: -1, ...(options.fetch ? { fetch: options.fetch } : {}) }, AbortSignal.timeout(5_000)).catch(() => undefined)
  if (service?.state === "ready") return service.client.sessionExists(sessionId, AbortSignal.timeout(TIMEOUT_MS))
  return runVerdict(options, ["session", "export", sessionId, "--standalone"], "session export")
}

/** The major line of the binary, from `--version` ("1.18.33", "opencode v2.1.2"); 1 when it cannot say. */
export function opencodeLine(options: Pick<OpencodeSessionsOptions, "binary" | "env">): 1 | 2 {
  const ran = spawnSync(options.binary, ["--version"], { env: { ...process.env, ...options.env } as NodeJS.ProcessEnv, encoding: "utf8", timeout: 10_000 })
  if (ran.error) throw new Error(`could not run \`${options.binary} --version\` (${ran.error.message}); pass --opencode PATH`)
  return parseOpencodeLine(`${ran.stdout ?? ""}`)
}

export function parseOpencodeLine(versionOutput: string): 1 | 2 {
  const match = /(\d+)\.\d+\.\d+/.exec(versionOutput)
  return match && Number(match[1]) >= 2 ? 2 : 1
}

function runVerdict(options: OpencodeSessionsOptions, args: string[], what: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let output = ""
    const keep = (chunk: string) => {
      if (output.length < OUTPUT_MAX_CHARS) output += chunk
    }
    const child = spawn(options.binary, args, {
      env: { ...process.env, ...options.env, [ENV_DISABLE]: "1" } as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: TIMEOUT_MS,
    })
    // stdout holds the whole session on success: only its start is kept, to find a verdict in.
    child.stdout?.setEncoding("utf8").on("data", keep)
    child.stderr?.setEncoding("utf8").on("data", keep)
    child.on("error", (error) => reject(new Error(`could not run \`${options.binary} ${what}\` (${error.message}); pass --opencode PATH`)))
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(true)
      if (/session not found/i.test(output)) return resolve(false)
      const why = signal ? `stopped by ${signal}` : `exit ${code}`
      // Colours and the spinner are OpenCode's; only the last line says what went wrong.
      const last = output.replace(/\u001b\[[0-9;]*m/g, "").trim().split("\n").pop() ?? ""
      reject(new Error(`\`${options.binary} ${what}\` failed (${why})${last ? `: ${last.slice(0, 300)}` : ""}`))
    })
  })
}
