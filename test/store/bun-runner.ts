// Runs the storage suite under Bun (bun:sqlite), the runtime OpenCode loads the plugin in, and
// prints one JSON line per case. Started by storage-bun.test.ts as `BUN_BE_BUN=1 opencode <this file>`.
import { fileURLToPath } from "node:url"
import { runConcurrently } from "./run-processes.js"
import { storageCases } from "./storage-suite.js"

const worker = fileURLToPath(new URL("./open-worker.ts", import.meta.url))

for (const testCase of storageCases) {
  try {
    await testCase.run({
      driver: "bun:sqlite",
      openInProcesses: (file, count) => runConcurrently(process.execPath, (startAt) => [worker, file, String(startAt)], count),
    })
    console.log(JSON.stringify({ name: testCase.name, ok: true }))
  } catch (error) {
    console.log(JSON.stringify({ name: testCase.name, ok: false, error: String((error as Error)?.stack ?? error) }))
  }
}
