// The stage-1 job suite on Node's driver, better-sqlite3.
import { fileURLToPath } from "node:url"
import { describe, it } from "vitest"
import { runConcurrently } from "./run-processes.js"
import { stage1Cases } from "./stage1-suite.js"
import { opencodeBinary } from "../e2e/support/opencode.js"

// Node 20 cannot run the TypeScript worker, so the racing processes run as Bun (the opencode
// binary, as storage-bun.test.ts does); this side then checks the file through better-sqlite3.
const opencode = opencodeBinary()
const worker = fileURLToPath(new URL("./claim-worker.ts", import.meta.url))

describe("stage-1 jobs on better-sqlite3", () => {
  for (const testCase of stage1Cases) {
    it(testCase.name, () =>
      testCase.run({
        claimInProcesses: (file, sessions, count) =>
          runConcurrently(opencode, (startAt) => [worker, file, String(startAt), String(sessions), String(count)], count, { ...process.env, BUN_BE_BUN: "1" }),
      }),
    )
  }
})
