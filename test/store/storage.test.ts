// The storage suite on Node's driver, better-sqlite3.
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, it } from "vitest"
import { runConcurrently } from "./run-processes.js"
import { storageCases } from "./storage-suite.js"

// The compiled worker: Node 20 cannot run TypeScript itself. `npm test` builds first.
const worker = fileURLToPath(new URL("../../dist/test/store/open-worker.js", import.meta.url))

describe("storage on better-sqlite3", () => {
  for (const testCase of storageCases) {
    it(testCase.name, () =>
      testCase.run({
        driver: "better-sqlite3",
        openInProcesses(file, count) {
          if (!fs.existsSync(worker)) throw new Error(`${worker} is missing: run "npm run build" first`)
          return runConcurrently(process.execPath, (startAt) => [worker, file, String(startAt)], count)
        },
      }),
    )
  }
})
