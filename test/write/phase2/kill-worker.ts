// One step of memory's write path in a process of its own, for kill-points.test.ts: the test names
// a kill point (ENV_TEST_KILL_AT) and this process dies there by SIGKILL, as an OpenCode killed at
// that instant would; nothing of its own clean-up runs. Runs under Bun (the opencode binary acting
// as Bun), the runtime OpenCode loads the plugin in, over the test's memory.db and folder.
//   consolidate <dir> <clock>  one phase-2 run; the consolidator copies <dir>/next/ into the folder,
//                              then reaches the kill point "consolidator-wrote"
//   register <dir>             registers a plugin instance in <dir>/memory.db, then dies
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Diagnostics } from "../../../src/diagnostics.js"
import { parseOptions } from "../../../src/options.js"
import { openDatabase } from "../../../src/store/database.js"
import { HomeInstances } from "../../../src/store/instances.js"
import { leaseOwners } from "../../../src/store/lease-owner.js"
import { MemoryStore } from "../../../src/store/memory-store.js"
import { Phase2Jobs } from "../../../src/store/phase2-jobs.js"
import { killPoint } from "../../../src/util/test-switches.js"
import { RateLimitBreaker } from "../../../src/write/helpers/breaker.js"
import { loadConsolidationTemplates } from "../../../src/write/phase2/consolidate-prompt.js"
import { v1Consolidation } from "../../../src/write/phase2/consolidation-strategy.js"
import { Phase2 } from "../../../src/write/phase2/phase2.js"
import { FakeHost } from "../../fakes/host.js"

const [scenario, dir, clockArg] = process.argv.slice(2)
if (!scenario || !dir) throw new Error("usage: kill-worker consolidate|register <dir> [clock]")
const { db } = openDatabase(path.join(dir, "memory.db"))

if (scenario === "register") {
  new HomeInstances(db, leaseOwners()).register(`pid:${process.pid}`)
  process.kill(process.pid, "SIGKILL")
}

if (scenario === "consolidate") {
  const clock = Number(clockArg)
  const templatesDir = fileURLToPath(new URL("../../../templates", import.meta.url))
  const host = new FakeHost(() => clock)
  host.responder = (_id, prompt) => {
    const next = path.join(dir, "next")
    for (const file of fs.readdirSync(next, { recursive: true, encoding: "utf8" })) {
      if (!fs.statSync(path.join(next, file)).isFile()) continue
      fs.mkdirSync(path.dirname(path.join(prompt.directory, file)), { recursive: true })
      fs.writeFileSync(path.join(prompt.directory, file), fs.readFileSync(path.join(next, file)))
    }
    killPoint("consolidator-wrote")
    return { text: "done" }
  }
  const phase2 = new Phase2({
    host,
    options: parseOptions({}).options,
    now: () => clock,
    strategy: v1Consolidation(loadConsolidationTemplates(templatesDir)),
    templatesDir,
    excludedSessions: () => new MemoryStore(db, () => clock).sessionsNotEnabled(),
    memoryRoot: path.join(dir, "memories"),
    jobs: () => new Phase2Jobs(db, () => clock),
    helperSessions: new Set(),
    consolidationModel: () => undefined,
    onConsolidated: () => undefined,
    diagnostics: new Diagnostics(host, () => clock),
    breaker: new RateLimitBreaker(() => clock),
    workerId: `pid:${process.pid}`,
  })
  const outcome = await phase2.run()
  await phase2.dispose()
  db.close()
  console.log(JSON.stringify(outcome))
}
