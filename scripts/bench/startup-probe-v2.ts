// Run by Bun (`BUN_BE_BUN=1 opencode2 <this file> <plugin folder> <home>`): the plugin's own
// start-up as OpenCode 2 goes through it, in-process, with a location context whose every
// registration succeeds at once. Prints one JSON line of milliseconds: importing the folder's
// entry (what 2.x resolves, <dir>/index), setup (the memory instance and every registration),
// and the first and next agent-loop request's context hook (the memory block).
import path from "node:path"
import { pathToFileURL } from "node:url"

const [folder, home] = process.argv.slice(2) as [string, string]

type Callback = (event: unknown) => unknown
const hooks = new Map<string, Callback>()
const registration = { dispose: async () => undefined }
const never: AsyncIterable<never> = {
  [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>(() => undefined) }),
}
const ctx = {
  app: { name: "cli", version: "2.1.2", channel: "latest" },
  location: { directory: home, project: { id: "p", directory: home, canonical: home } },
  options: { home },
  session: {
    hook: async (name: string, callback: Callback) => (hooks.set(name, callback), registration),
    list: async () => ({ data: [], cursor: {} }),
    get: async () => ({ id: "ses_probe" }),
    create: async () => ({ id: "ses_helper" }),
    prompt: async () => ({}),
    wait: async () => undefined,
    context: async () => [],
    interrupt: async () => ({}),
    remove: async () => undefined,
  },
  tool: {
    transform: async (callback: (editor: unknown) => void) => (callback({ get: () => undefined, add: () => undefined, update: () => undefined }), registration),
    hook: async () => registration,
  },
  agent: { transform: async (callback: (editor: unknown) => void) => (callback({ list: () => [], update: () => undefined }), registration), reload: async () => undefined },
  event: { subscribe: () => never },
  rpc: { register: async () => registration },
  storage: { get: async () => undefined, set: async () => undefined },
  model: { list: async () => ({ data: [] }), default: async () => ({ data: {} }) },
}

const at = () => performance.now()
const t0 = at()
const mod = ((await import(pathToFileURL(path.join(folder, "index.js")).href)) as { default: { setup: (ctx: unknown) => Promise<unknown> } }).default
const t1 = at()
await mod.setup(ctx)
const t2 = at()
const request = () => ({ sessionID: "ses_probe", system: [] as Array<{ type: string; text: string }>, messages: [] })
let event = request()
let t3 = at()
for (let i = 0; i < 2_000; i++) {
  event = request()
  await hooks.get("context")!(event)
  if (event.system.length) break
  await new Promise((resolve) => setTimeout(resolve, 1))
  t3 = at()
}
const t4 = at()
await hooks.get("context")!(request())
const t5 = at()
console.log(JSON.stringify({ import: t1 - t0, server: t2 - t1, firstBlock: t4 - t3, nextBlock: t5 - t4, injected: event.system.length > 0 }))
process.exit(0)
