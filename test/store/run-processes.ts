// Starts one command several times at once and collects exit codes and output.
import { spawn } from "node:child_process"

export function runConcurrently(command: string, args: (startAt: number) => string[], count: number, env: NodeJS.ProcessEnv = process.env) {
  // A shared start instant a little in the future, so every process is up before any opens the file.
  const startAt = Date.now() + 1_500
  return Promise.all(
    Array.from({ length: count }, () => {
      return new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(command, args(startAt), { env, stdio: ["ignore", "pipe", "pipe"] })
        let output = ""
        child.stdout.on("data", (chunk) => (output += chunk))
        child.stderr.on("data", (chunk) => (output += chunk))
        child.on("close", (code) => resolve({ code, output }))
        child.on("error", (error) => resolve({ code: -1, output: String(error) }))
      })
    }),
  )
}
