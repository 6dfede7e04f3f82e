// `npm run demo`: the whole memory loop on your machine, with no account and no key. It starts
// the real OpenCode (the opencode-ai dev dependency) with this plugin and a scripted local model
// on 127.0.0.1, in a temporary home, and shows what memory learned, what a new session was
// shown, and how deleting the source session made memory forget.
//
// `npm run demo -- --version v2` shows the Memory V2 loop (summary only); `--dual-write` has
// both versions learn from the same sessions while new sessions read the chosen one.
import { parseArgs } from "node:util"
import type { MemoryVersion } from "../src/util/paths.js"
import { runClosedLoop } from "../test/e2e/support/closed-loop.js"

const { values } = parseArgs({ options: { version: { type: "string", default: "v1" }, "dual-write": { type: "boolean", default: false } } })
if (values.version !== "v1" && values.version !== "v2") {
  console.error(`--version must be v1 or v2, not ${JSON.stringify(values.version)}`)
  process.exit(2)
}
const version: MemoryVersion = values.version
const dualWrite = values["dual-write"]

const rule = (title: string) => console.log(`\n=== ${title} ${"=".repeat(Math.max(0, 70 - title.length))}`)
const indent = (text: string) => text.trimEnd().split("\n").map((line) => `  ${line}`).join("\n")

console.log(`Starting OpenCode with opencode-codex-memory (Memory ${version.toUpperCase()}${dualWrite ? ", dual-write" : ""}) and a scripted model (well under a minute)...`)
const result = await runClosedLoop({ keep: true, version, dualWrite, log: (line) => console.log(`- ${line}`) })

for (const [written, outcome] of Object.entries(result.writers)) {
  rule(`What Memory ${written.toUpperCase()} learned (memory_summary.md)`)
  console.log(indent(outcome.learnedSummary))
  if (outcome.learnedHandbook !== undefined) {
    rule(`The handbook (MEMORY.md, ${written.toUpperCase()})`)
    console.log(indent(outcome.learnedHandbook))
  }
}
rule(`The memory block injected into session B's system prompt (${version.toUpperCase()}, end)`)
console.log(indent(result.injectedBlock.split("\n").slice(-12).join("\n")))
for (const [written, outcome] of Object.entries(result.writers)) {
  rule(`${written.toUpperCase()} after session A was deleted and memory consolidated again`)
  console.log(indent(outcome.forgottenSummary))
}
rule("Where the files are")
console.log(`  memory home:   ${result.memoryHome}`)
for (const [written, outcome] of Object.entries(result.writers)) console.log(`  ${written} folder:     ${outcome.memoryRoot}`)
console.log(`  catalog:       ${result.memoryHome}/memory.db${Object.keys(result.writers).includes("v2") ? `  (V2: ${result.memoryHome}/memory_v2.db)` : ""}`)
console.log("\nThe folder is kept so you can look around; delete it when you are done.")
