#!/usr/bin/env node
// The `opencode-codex-memory` binary (package.json "bin"): runs on Node, with node:sqlite (22.13+)
// or, on older Node, better-sqlite3 (store/sqlite.ts).
import { spawnSync } from "node:child_process"
import os from "node:os"
import { runCli } from "./run.js"

// Node 22.5 to 22.12 have node:sqlite only behind a flag: the tool runs itself again with it, so
// those versions need no native build either.
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
if (major === 22 && minor >= 5 && minor < 13 && !process.execArgv.includes("--experimental-sqlite")) {
  const again = spawnSync(process.execPath, ["--experimental-sqlite", ...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" })
  process.exit(again.status ?? 1)
}

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  homedir: os.homedir(),
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdin: async () => {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  },
})
