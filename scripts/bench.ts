// `npm run bench`: every benchmark of the project, each judged by its checks (a ratio against a
// baseline measured in the same run, or an absolute value beside its target; see bench/measure.ts).
import { benchCheckpoint } from "./bench/checkpoint.js"
import { benchCliSearch } from "./bench/cli-search.js"
import { benchClosedLoop } from "./bench/closed-loop.js"
import { benchEvidence } from "./bench/evidence.js"
import { benchHelperRequests } from "./bench/helper-requests.js"
import { benchInstall } from "./bench/install.js"
import { benchOpencodeRun } from "./bench/opencode-run.js"
import { benchPhase1 } from "./bench/phase1.js"
import { benchPhase2 } from "./bench/phase2.js"
import { benchReadPath } from "./bench/read-path.js"
import { benchReconcile } from "./bench/reconcile.js"
import { benchRedact } from "./bench/redact.js"
import { benchRankedSearch } from "./bench/ranked-search.js"
import { benchSearch } from "./bench/search.js"
import { benchTokens } from "./bench/tokens.js"
import { benchTranscript } from "./bench/transcript.js"
import { benchTranscriptMemory } from "./bench/transcript-memory.js"
import { benchTurnCost } from "./bench/turn-cost.js"
import { report, type BenchResult } from "./bench/measure.js"

const benches: Array<[string, () => Promise<BenchResult>]> = [
  ["read-path", benchReadPath],
  ["opencode-run", benchOpencodeRun],
  ["turn-cost", benchTurnCost],
  ["search", benchSearch],
  ["ranked-search", benchRankedSearch],
  ["cli-search", benchCliSearch],
  ["transcript", benchTranscript],
  ["transcript-memory", benchTranscriptMemory],
  ["evidence", benchEvidence],
  ["checkpoint", benchCheckpoint],
  ["redact", benchRedact],
  ["tokens", benchTokens],
  ["phase1", benchPhase1],
  ["reconcile", benchReconcile],
  ["closed-loop", benchClosedLoop],
  ["helper-requests", benchHelperRequests],
  ["phase2", benchPhase2],
  ["install", benchInstall],
]

const only = process.argv.slice(2)
let ok = true
for (const [name, run] of benches) {
  if (only.length && !only.includes(name)) continue
  ok = report(await run()) && ok
}
console.log(ok ? "\nall benchmark targets met" : "\nsome benchmark targets missed")
process.exitCode = ok ? 0 : 1
