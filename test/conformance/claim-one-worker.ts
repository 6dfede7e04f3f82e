// Claims one stage-1 job and prints the outcome's type, as one JSON line. Started several times at
// once by state-runtime.test.ts to race on one file (Codex's concurrent-claim tests). Runs under Bun
// (the opencode binary acting as Bun), and stays alive until every racer has claimed, so that no
// racer's lease belongs to a process that is already gone.
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { waitForPeers } from "../store/peers.js"

const [file, startArg, sessionId, updatedArg, maxRunningArg, workersArg] = process.argv.slice(2)
if (!file || !startArg || !sessionId || !updatedArg || !maxRunningArg || !workersArg) {
  throw new Error("usage: claim-one-worker <db file> <start at> <session> <updated at> <max running> <workers>")
}
const { db } = openDatabase(file)
const jobs = new Stage1Jobs(db)
const startAt = Number(startArg)
while (Date.now() < startAt) {
  /* spin: a timer would be too coarse to make the claims overlap */
}
const outcome = jobs.claim({ sessionId, updatedAt: Number(updatedArg) }, { workerId: `pid-${process.pid}`, maxRunning: Number(maxRunningArg) })
db.close()
waitForPeers(file, Number(workersArg))
console.log(JSON.stringify({ type: outcome.type }))
