// The phase-2 job suite on Node's driver, better-sqlite3.
import { fileURLToPath } from "node:url"
import { describe, it } from "vitest"
import { phase2Cases } from "./phase2-suite.js"
import { runConcurrently } from "./run-processes.js"
import { opencodeBinary } from "../e2e/support/opencode.js"

// Node 20 cannot run the TypeScript worker, so the racing processes run as Bun (the opencode
// binary, as storage-bun.test.ts does); this side then checks the file through better-sqlite3.
const opencode = opencodeBinary()
const worker = fileURLToPath(new URL("./phase2-claim-worker.ts", import.meta.url))

describe("phase-2 jobs on better-sqlite3", () => {
  for (const testCase of phase2Cases) {
    it(testCase.name, () =>
      testCase.run({
        claimInProcesses: (file, count) => runConcurrently(opencode, (startAt) => [worker, file, String(startAt), String(count)], count, { ...process.env, BUN_BE_BUN: "1" }),
      }),
    )
  }
})
