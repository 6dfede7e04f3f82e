#!/usr/bin/env node
// The `opencode-codex-memory` binary (package.json "bin"): runs on Node, with node:sqlite (22.13+)
// or, on older Node, better-sqlite3 (store/sqlite.ts).
import os from "node:os"
import { runCli } from "./run.js"

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
