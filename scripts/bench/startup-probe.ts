// Run by Bun (`BUN_BE_BUN=1 opencode <this file> <plugin entry> <home>`): the plugin's own start-up
// as OpenCode 1.x goes through it, in-process, with a client that answers every call at once.
// Prints one JSON line of milliseconds: importing the entry, building the instance and its hooks,
// the deferred start, and the first turn's system hook (the memory block).
import { pathToFileURL } from "node:url"

const [entry, home] = process.argv.slice(2) as [string, string]

/** A client whose every method resolves to empty data: the plugin's start-up calls must not wait. */
function stubClient(): unknown {
  const handler: ProxyHandler<object> = {
    get: (_target, key) => (key === "then" ? undefined : new Proxy(() => undefined, { ...handler, apply: async () => ({ data: [], response: new Response("[]") }) })),
  }
  return new Proxy({}, handler)
}

const at = () => performance.now()
const t0 = at()
const mod = ((await import(pathToFileURL(entry).href)) as { default: { server: (input: unknown, options: unknown) => Promise<Record<string, (input: unknown, output: unknown) => Promise<void>>> } }).default
const t1 = at()
const hooks = await mod.server({ client: stubClient(), directory: home, worktree: home, project: { id: "p" } }, { home })
const t2 = at()
// The instance starts in a timer after the hooks are returned; its start is over when a turn sees memory.
const output = { system: [] as string[] }
let t3 = at()
for (let i = 0; i < 2_000; i++) {
  output.system = []
  await hooks["experimental.chat.system.transform"]!({ sessionID: "ses_probe", model: {} }, output)
  if (output.system.length) break
  await new Promise((resolve) => setTimeout(resolve, 1))
  t3 = at()
}
const t4 = at()
output.system = []
await hooks["experimental.chat.system.transform"]!({ sessionID: "ses_probe", model: {} }, output)
const t5 = at()
console.log(JSON.stringify({ import: t1 - t0, server: t2 - t1, start: t3 - t2, firstBlock: t4 - t3, nextBlock: t5 - t4, injected: output.system.length > 0 }))
process.exit(0)
