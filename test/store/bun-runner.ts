// Runs the storage, stage-1 and phase-2 job suites under Bun (bun:sqlite), the runtime OpenCode
// loads the plugin in, and prints one JSON line per case. Started by storage-bun.test.ts as
// `BUN_BE_BUN=1 opencode <this file>`.
import { fileURLToPath } from "node:url"
import { phase2Cases } from "./phase2-suite.js"
import { runConcurrently } from "./run-processes.js"
import { stage1Cases } from "./stage1-suite.js"
import { storageCases } from "./storage-suite.js"

const worker = fileURLToPath(new URL("./open-worker.ts", import.meta.url))
const claimWorker = fileURLToPath(new URL("./claim-worker.ts", import.meta.url))
const phase2Worker = fileURLToPath(new URL("./phase2-claim-worker.ts", import.meta.url))

async function report(name: string, run: () => void | Promise<void>): Promise<void> {
  try {
    await run()
    console.log(JSON.stringify({ name, ok: true }))
  } catch (error) {
    console.log(JSON.stringify({ name, ok: false, error: String((error as Error)?.stack ?? error) }))
  }
}

for (const testCase of storageCases) {
  await report(testCase.name, () =>
    testCase.run({
      driver: "bun:sqlite",
      openInProcesses: (file, count) => runConcurrently(process.execPath, (startAt) => [worker, file, String(startAt)], count),
    }),
  )
}

for (const testCase of stage1Cases) {
  await report(testCase.name, () =>
    testCase.run({
      claimInProcesses: (file, sessions, count) => runConcurrently(process.execPath, (startAt) => [claimWorker, file, String(startAt), String(sessions), String(count)], count),
    }),
  )
}

for (const testCase of phase2Cases) {
  await report(testCase.name, () =>
    testCase.run({
      claimInProcesses: (file, count) => runConcurrently(process.execPath, (startAt) => [phase2Worker, file, String(startAt), String(count)], count),
    }),
  )
}
