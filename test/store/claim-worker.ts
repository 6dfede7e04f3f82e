// Claims stage-1 jobs for the same numbered sessions as its siblings and prints what it claimed,
// as one JSON line. Started several times at once by the stage-1 suite to race on one file. Runs
// under Bun (TypeScript as is; the Node runner starts it with the opencode binary acting as Bun).
// It exits only once all `workers` have claimed, so that no claim is taken over from an exited one.
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { waitForPeers } from "./peers.js"
import { raceCandidates } from "./stage1-suite.js"

const [file, startArg, sessionsArg, workersArg] = process.argv.slice(2)
if (!file || !startArg || !sessionsArg || !workersArg) throw new Error("usage: claim-worker <db file> <start at> <sessions> <workers>")
const { db } = openDatabase(file)
const jobs = new Stage1Jobs(db)
const candidates = raceCandidates(Number(sessionsArg))
// Start together: every worker waits for the same wall-clock instant.
const startAt = Number(startArg)
while (Date.now() < startAt) {
  /* spin: a timer would be too coarse to make the claims overlap */
}
const claimed = jobs.claimMany(candidates, { workerId: `pid-${process.pid}`, maxClaims: candidates.length, maxRunning: 128 })
db.close()
waitForPeers(file, Number(workersArg))
console.log(JSON.stringify(claimed.map(({ sessionId, token }) => ({ sessionId, token }))))
