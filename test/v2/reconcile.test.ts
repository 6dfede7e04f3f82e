// Reconciliation on OpenCode 2, on the fake: through the registered service the host lists every
// root session as a complete listing and tells a removed session (the service's 404) from a
// present one, so a session deleted where no event reaches the plugin is still forgotten; without
// the service the listing is partial and nothing is forgotten; and a service listing that would be
// cut short by its page limit fails instead of passing for complete.
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import { Memory } from "../../src/memory.js"
import { openDatabase } from "../../src/store/database.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import type { V2Context } from "../../src/v2/api.js"
import { createV2Host, ObservedSessions } from "../../src/v2/host.js"
import { discoverService, ServiceClient, type ServiceState } from "../../src/util/opencode-service.js"
import { FakeOpenCode2, type FakeVariant } from "../fakes/opencode2.js"
import { PACKAGE_DIR, settle, v2Setup, type V2Setup } from "./support.js"

/** Our plugin's throw-away home beside the fake, removed when the test ends. */
function fresh(variant?: FakeVariant): V2Setup {
  const s = v2Setup(variant ? { variant } : {})
  onTestFinished(() => s.cleanup())
  return s
}

const signal = () => AbortSignal.timeout(10_000)

/** The context OpenCode 2 gives a plugin in `directory`, taken by a plugin that only keeps it. */
async function contextOf(fake: FakeOpenCode2, directory: string): Promise<V2Context> {
  let kept: V2Context | undefined
  await fake.setup({ id: "context-probe", setup: (ctx) => void (kept = ctx as V2Context) }, directory)
  if (!kept) throw new Error("the fake set the probe up without a context")
  return kept
}

/** The adapter's Host over a location's context, discovering the service as the runtime does. */
function hostOver(s: V2Setup, ctx: V2Context, options: { observed?: ObservedSessions } = {}) {
  let last: ServiceState | undefined
  return createV2Host({
    ctx: () => ctx,
    service: async (sig) => (last = await discoverService({ env: s.env, homedir: s.root, pid: process.pid }, sig)),
    lastService: () => last,
    observed: options.observed ?? new ObservedSessions(),
    confined: new Map(),
    helperSystem: new Map(),
    log: (line) => s.logs.push(line),
  })
}

/** Records of OpenCode 2 sessions in the home's memory.db, as phase 1 on OpenCode 2 stores them. */
function seedRecords(home: string, sessions: ReadonlyArray<{ id: string; updatedAt: number }>): void {
  fs.mkdirSync(home, { recursive: true })
  const { db } = openDatabase(path.join(home, "memory.db"))
  try {
    const jobs = new Stage1Jobs(db)
    for (const session of sessions) {
      const claim = jobs.claim({ sessionId: session.id, updatedAt: session.updatedAt }, { workerId: "w", maxRunning: 9 })
      if (claim.type !== "claimed") throw new Error(claim.type)
      jobs.succeed(session.id, claim.token, { rawMemory: `- fact of ${session.id}`, rolloutSummary: `Learned from ${session.id}.`, slug: "s", cwd: "/p", host: "opencode2" })
    }
  } finally {
    db.close()
  }
}

function recordIds(home: string): string[] {
  const { db } = openDatabase(path.join(home, "memory.db"))
  try {
    return db.prepare("SELECT session_id FROM stage1_outputs ORDER BY session_id").all<{ session_id: string }>().map((row) => row.session_id)
  } finally {
    db.close()
  }
}

async function waitUntil(check: () => boolean, message: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(message())
    await settle(50)
  }
}

describe("the OpenCode 2 host with the registered service", () => {
  it("lists every root session in one complete listing", async () => {
    const s = fresh()
    await s.fake.startService(s.stateDir)
    const first = await s.fake.createSession(s.projectDir, "first")
    const elsewhere = await s.fake.createSession(s.project("other-project"), "in another project")
    const host = hostOver(s, await contextOf(s.fake, s.projectDir))
    const listing = await host.listRootSessions({ signal: signal() })
    expect(listing.complete).toBe(true)
    expect(listing.sessions.map((session) => session.id).sort()).toEqual([first, elsewhere].sort())
    // A search is a filter, never a listing to compare memory with.
    expect((await host.listRootSessions({ signal: signal(), search: "first" })).complete).toBe(false)
  })

  it("answers false for a removed session, from the service's 404, and true for a present one", async () => {
    const s = fresh()
    await s.fake.startService(s.stateDir)
    const present = await s.fake.createSession(s.projectDir, "present")
    const removed = await s.fake.createSession(s.projectDir, "removed")
    await s.fake.deleteSession(removed)
    const host = hostOver(s, await contextOf(s.fake, s.projectDir))
    expect(await host.sessionExists(present, signal())).toBe(true)
    expect(await host.sessionExists(removed, signal())).toBe(false)
    expect(await host.sessionExists("ses_never_existed", signal())).toBe(false)
  })
})

describe("reconciliation on OpenCode 2", () => {
  it("forgets a session deleted where no event reaches the plugin, after a phase-1 pass lists sessions", async () => {
    const s = fresh()
    // The shared service is another OpenCode process: its sessions' events never reach a plugin
    // running in a process of its own, which sees them only through the service.
    const service = new FakeOpenCode2()
    onTestFinished(() => service.disposeAll())
    await service.startService(s.stateDir)
    const kept = await service.createSession(s.projectDir, "kept")
    const gone = await service.createSession(s.projectDir, "gone")
    const updated = (id: string) => service.session(id)!.info.time!.updated!
    seedRecords(s.home, [
      { id: kept, updatedAt: updated(kept) },
      { id: gone, updatedAt: updated(gone) },
    ])

    await s.fake.setup(s.plugin(), s.projectDir)
    await settle(100)
    await service.deleteSession(gone)
    expect(service.events.some((event) => event.type === "session.deleted")).toBe(true)
    expect(s.fake.events.some((event) => event.type === "session.deleted")).toBe(false)
    expect(recordIds(s.home)).toEqual([gone, kept].sort())

    // The first message of a conversation starts a phase-1 pass; reconciliation rides its listing.
    await s.fake.prompt(await s.fake.createSession(s.projectDir, "morning"), "good morning")
    await waitUntil(() => !recordIds(s.home).includes(gone), () => `the deleted session's record was not forgotten\n${s.logs.join("\n")}`)
    expect(recordIds(s.home)).toEqual([kept])
  })

  it("on 2.1.2, without the service, lists every project's sessions through the session domain as complete, and forgets a deleted one", async () => {
    const s = fresh()
    const here = await s.fake.createSession(s.projectDir, "here")
    const elsewhere = await s.fake.createSession(s.project("other"), "another project")
    const removed = await s.fake.createSession(s.projectDir, "removed")
    await s.fake.deleteSession(removed)
    seedRecords(s.home, [
      { id: elsewhere, updatedAt: Date.now() },
      { id: removed, updatedAt: Date.now() },
    ])
    const host = hostOver(s, await contextOf(s.fake, s.projectDir), { observed: new ObservedSessions() })
    const listing = await host.listRootSessions({ signal: signal() })
    expect(listing.complete).toBe(true)
    expect(listing.sessions.map((session) => session.id).sort()).toEqual([here, elsewhere].sort())
    expect(await host.sessionExists(removed, signal())).toBe(false)
    expect(await host.sessionExists(elsewhere, signal())).toBe(true)

    const memory = new Memory({}, { host, env: s.env, homedir: s.root, packageDir: PACKAGE_DIR, passive: true })
    onTestFinished(() => memory.dispose())
    expect(memory.openStores()).toBe(true)
    const report = await memory.reconcile(listing, signal())
    expect(report.forgotten).toEqual([removed])
    expect(recordIds(s.home)).toEqual([elsewhere])
  })

  it("on 2.0.16, without the service, lists only what this process observed as partial, and forgets nothing though a session with records is missing", async () => {
    const s = fresh({ release: "2.0.16" })
    const observedId = await s.fake.createSession(s.projectDir, "observed")
    const unlisted = await s.fake.createSession(s.projectDir, "never observed here")
    const removed = await s.fake.createSession(s.projectDir, "removed")
    await s.fake.deleteSession(removed)
    seedRecords(s.home, [
      { id: unlisted, updatedAt: Date.now() },
      { id: removed, updatedAt: Date.now() },
    ])
    const observed = new ObservedSessions()
    observed.touch(observedId, Date.now())
    const host = hostOver(s, await contextOf(s.fake, s.projectDir), { observed })

    const listing = await host.listRootSessions({ signal: signal() })
    expect(listing).toMatchObject({ complete: false, sessions: [expect.objectContaining({ id: observedId })] })
    expect(listing.sessions).toHaveLength(1)
    // Nor can it look a session up: a session this location cannot see is not one that is gone.
    await expect(host.sessionExists(removed, signal())).rejects.toThrow(/service is unavailable/)

    const memory = new Memory({}, { host, env: s.env, homedir: s.root, packageDir: PACKAGE_DIR, passive: true })
    onTestFinished(() => memory.dispose())
    expect(memory.openStores()).toBe(true)
    const report = await memory.reconcile(listing, signal())
    expect(report).toMatchObject({ outcome: "partial_listing", forgotten: [] })
    expect(recordIds(s.home)).toEqual([removed, unlisted].sort())
  })
})

describe("ServiceClient.rootSessions", () => {
  /** A service whose session list runs to `pages` pages (endless when undefined), each with a cursor to the next. */
  async function pagingService(pages: number | undefined): Promise<{ client: ServiceClient; cursors: Array<string | null> }> {
    const cursors: Array<string | null> = []
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const cursor = url.searchParams.get("cursor")
      cursors.push(cursor)
      const page = cursor === null ? 1 : Number(cursor.slice("page-".length))
      const last = pages !== undefined && page >= pages
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ data: [{ id: `ses_page${page}`, title: `page ${page}`, time: { created: 1, updated: 1 } }], cursor: last ? {} : { next: `page-${page + 1}` } }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        }),
    )
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { client: new ServiceClient({ url, pid: process.pid }, fetch), cursors }
  }

  it("follows the cursor to the last page", async () => {
    const { client, cursors } = await pagingService(3)
    const sessions = (await client.rootSessions(signal(), 3)) as Array<{ id: string }>
    expect(sessions.map((session) => session.id)).toEqual(["ses_page1", "ses_page2", "ses_page3"])
    expect(cursors).toEqual([null, "page-2", "page-3"])
  })

  it("throws rather than returning a cut list when there are more pages than maxPages", async () => {
    const { client, cursors } = await pagingService(4)
    await expect(client.rootSessions(signal(), 3)).rejects.toThrow(/more than 3 pages/)
    // It stopped at its limit: the fourth page was never asked for.
    expect(cursors).toEqual([null, "page-2", "page-3"])
    const endless = await pagingService(undefined)
    await expect(endless.client.rootSessions(signal(), 5)).rejects.toThrow(/more than 5 pages/)
    expect(endless.cursors).toHaveLength(5)
  })
})
