// Tries to claim the global phase-2 job and prints the outcome as one JSON line. Started several
// times at once by the phase-2 suite to race on one file. Runs under Bun (TypeScript as is; the
// Node runner starts it with the opencode binary acting as Bun). It exits only once all `workers`
// have claimed, so that the winner's lease is not taken over from an exited process.
import { openDatabase } from "../../src/store/database.js"
import { Phase2Jobs } from "../../src/store/phase2-jobs.js"
import { waitForPeers } from "./peers.js"

const [file, startArg, workersArg] = process.argv.slice(2)
if (!file || !startArg || !workersArg) throw new Error("usage: phase2-claim-worker <db file> <start at> <workers>")
const { db } = openDatabase(file)
const jobs = new Phase2Jobs(db)
// Start together: every worker waits for the same wall-clock instant.
const startAt = Number(startArg)
while (Date.now() < startAt) {
  /* spin: a timer would be too coarse to make the claims overlap */
}
const outcome = jobs.claim(`pid-${process.pid}`)
db.close()
waitForPeers(file, Number(workersArg))
console.log(JSON.stringify(outcome))
