// `npm run demo`: the whole memory loop on your machine, with no account and no key. It starts
// the real OpenCode (the opencode-ai dev dependency) with this plugin and a scripted local model
// on 127.0.0.1, in a temporary home, and shows what memory learned, what a new session was
// shown, and how deleting the source session made memory forget.
import { runClosedLoop } from "../test/e2e/support/closed-loop.js"

const rule = (title: string) => console.log(`\n=== ${title} ${"=".repeat(Math.max(0, 70 - title.length))}`)
const indent = (text: string) => text.trimEnd().split("\n").map((line) => `  ${line}`).join("\n")

console.log("Starting OpenCode with opencode-codex-memory and a scripted model (well under a minute)...")
const result = await runClosedLoop({ keep: true, log: (line) => console.log(`- ${line}`) })

rule("What memory learned (memory_summary.md)")
console.log(indent(result.learnedSummary))
rule("The handbook (MEMORY.md)")
console.log(indent(result.learnedHandbook))
rule("The memory block injected into session B's system prompt (end)")
console.log(indent(result.injectedBlock.split("\n").slice(-12).join("\n")))
rule("After session A was deleted and memory consolidated again")
console.log(indent(result.forgottenSummary))
rule("Where the files are")
console.log(`  memory home:   ${result.memoryHome}`)
console.log(`  memory folder: ${result.memoryRoot}`)
console.log(`  database:      ${result.memoryHome}/memory.db`)
console.log("\nThe folder is kept so you can look around; delete it when you are done.")
