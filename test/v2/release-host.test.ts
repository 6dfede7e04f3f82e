// The Host port on what released OpenCode 2.0.x offers: helper sessions deleted through the
// service's DELETE route when the plugin's session domain has no `remove` (2.0.16), and lists of
// more than one page read by following the cursor alone (a message page refuses `order` beside
// it), all against the fake's service.
import os from "node:os"
import { afterEach, describe, expect, it } from "vitest"
import type { V2Context } from "../../src/v2/api.js"
import { createV2Host, ObservedSessions } from "../../src/v2/host.js"
import { discoverService, type ServiceState } from "../../src/util/opencode-service.js"
import { v2Setup, type V2Setup } from "./support.js"

let setup: V2Setup
afterEach(async () => setup?.cleanup())

async function hostOn(s: V2Setup, withService: boolean) {
  let ctx: V2Context | undefined
  await s.fake.setup({ id: "probe", setup: (c: V2Context) => void (ctx = c) }, s.projectDir)
  if (withService) await s.fake.startService(s.stateDir)
  const service = (signal: AbortSignal): Promise<ServiceState> => discoverService({ env: s.env, homedir: s.root ?? os.homedir(), pid: process.pid }, signal)
  const host = createV2Host({ ctx: () => ctx!, service, lastService: () => undefined, observed: new ObservedSessions(), confined: new Map(), helperSystem: new Map(), log: () => undefined })
  return { host, ctx: () => ctx! }
}

describe("the OpenCode 2 host port on 2.0.x as released", () => {
  it("deletes a helper session through DELETE /api/session/:id when the session domain has no remove", async () => {
    setup = v2Setup({ variant: { release: "2.0.16" } })
    const { host } = await hostOn(setup, true)
    const { id } = await host.createSession({ role: "extract", title: "helper", directory: setup.home, metadata: {} } as never)
    expect(await host.deleteSession(id)).toBe(true)
    expect(setup.fake.sessionIds()).not.toContain(id)
    expect(setup.fake.events.filter((event) => event.type === "session.deleted").map((event) => event.data?.sessionID)).toEqual([id])
  })

  it("without remove (2.0.16) and without a service, reports the helper session as not deleted, and never throws", async () => {
    setup = v2Setup({ variant: { release: "2.0.16" } })
    const { host } = await hostOn(setup, false)
    const { id } = await host.createSession({ role: "extract", title: "helper", directory: setup.home, metadata: {} } as never)
    expect(await host.deleteSession(id)).toBe(false)
    expect(setup.fake.sessionIds()).toContain(id)
  })

  it("uses the session domain's remove where a later 2.0.x has it", async () => {
    setup = v2Setup({ variant: { release: "2.0.16", sessionRemove: true } })
    const { host } = await hostOn(setup, false)
    const { id } = await host.createSession({ role: "extract", title: "helper", directory: setup.home, metadata: {} } as never)
    expect(await host.deleteSession(id)).toBe(true)
    expect(setup.fake.sessionIds()).not.toContain(id)
  })

  it("gives each listed session OpenCode's own project id, and none for \"global\"", async () => {
    setup = v2Setup({ variant: { projectIdOf: (directory) => (directory.endsWith("loose") ? "global" : "prj_app") } })
    const { host } = await hostOn(setup, true)
    const inApp = await setup.fake.createSession(setup.projectDir, "in the app")
    const loose = await setup.fake.createSession(`${setup.projectDir}-loose`, "outside")
    const listing = await host.listRootSessions({ signal: AbortSignal.timeout(10_000) } as never)
    const byId = new Map(listing.sessions.map((session) => [session.id, session]))
    expect(byId.get(inApp)?.project).toEqual({ key: "prj_app" })
    // Kept as given: the identity rules (project-identity.ts) are what set "global" aside.
    expect(byId.get(loose)?.project).toEqual({ key: "global" })
  })

  it("reads every root session and every message across pages of 200, following the cursor alone", async () => {
    setup = v2Setup()
    const { host } = await hostOn(setup, true)
    const ids: string[] = []
    for (let i = 0; i < 450; i++) ids.push(await setup.fake.createSession(setup.projectDir, `s${i}`))
    const listing = await host.listRootSessions({ signal: AbortSignal.timeout(10_000) } as never)
    expect(listing.complete).toBe(true)
    expect(new Set(listing.sessions.map((session) => session.id))).toEqual(new Set(ids))
    for (let i = 0; i < 250; i++) setup.fake.storeReply(ids[0]!, `reply ${i}`)
    const messages = await host.loadMessages(ids[0]!, AbortSignal.timeout(10_000))
    expect(messages).toHaveLength(250)
  })

  it("on 2.1.2, reads a model's window, variants and id from the model domain, the default model's when none is named", async () => {
    setup = v2Setup({ variant: { contextLimit: 16_000 } })
    const { host } = await hostOn(setup, false)
    const signal = AbortSignal.timeout(5_000)
    expect(await host.contextLimit({ providerID: "fake", modelID: "fake-model" }, signal)).toBe(16_000)
    expect(await host.contextLimit(undefined, signal)).toBe(16_000)
    expect(await host.contextLimit({ providerID: "fake", modelID: "other" }, signal)).toBeUndefined()
    expect(await host.modelVariants({ providerID: "fake", modelID: "fake-model" }, signal)).toEqual(["low", "medium", "high"])
    expect(await host.modelIds!(signal)).toEqual(["fake/fake-model"])
  })

  it("on 2.1.2, finds a model by the id OpenCode knows it by, not the name sent to its provider, and takes its input limit when it declares one", async () => {
    setup = v2Setup({
      variant: {
        models: [
          // providers.fake.models["alias-16k"] = { modelID: "upstream-16k", limit: { context: 16000, ... } }
          { id: "alias-16k", modelID: "upstream-16k", limit: { context: 16_000, output: 4_096 } },
          { id: "input-24k", limit: { context: 64_000, input: 24_000, output: 4_096 } },
        ],
      },
    })
    const { host } = await hostOn(setup, false)
    const signal = AbortSignal.timeout(5_000)
    expect(await host.contextLimit({ providerID: "fake", modelID: "alias-16k" }, signal)).toBe(16_000)
    expect(await host.modelVariants({ providerID: "fake", modelID: "alias-16k" }, signal)).toEqual(["low", "medium", "high"])
    // The provider's own name is not one OpenCode takes (generate.text answers "Model unavailable").
    expect(await host.contextLimit({ providerID: "fake", modelID: "upstream-16k" }, signal)).toBeUndefined()
    expect(await host.contextLimit({ providerID: "fake", modelID: "input-24k" }, signal)).toBe(24_000)
    expect(await host.modelIds!(signal)).toEqual(["fake/fake-model", "fake/alias-16k", "fake/input-24k"])
  })

  it("on 2.1.2, knows no window and no variants when the model domain fails or no location is live, and never throws", async () => {
    setup = v2Setup()
    const { ctx } = await hostOn(setup, false)
    const failing = { ...ctx(), model: { list: async () => Promise.reject(new Error("ServiceUnavailableError")), default: async () => Promise.reject(new Error("ServiceUnavailableError")) } }
    const deps = { service: async () => ({ state: "absent" }) as never, lastService: () => undefined, observed: new ObservedSessions(), confined: new Map(), helperSystem: new Map(), log: () => undefined }
    const signal = AbortSignal.timeout(5_000)
    for (const host of [createV2Host({ ...deps, ctx: () => failing }), createV2Host({ ...deps, ctx: () => { throw new Error("no OpenCode 2 location is live in this process") } })]) {
      expect(await host.contextLimit({ providerID: "fake", modelID: "fake-model" }, signal)).toBeUndefined()
      expect(await host.contextLimit(undefined, signal)).toBeUndefined()
      expect(await host.modelVariants({ providerID: "fake", modelID: "fake-model" }, signal)).toEqual([])
    }
  })

  it("on 2.0.16, knows no window (the model domain is not there)", async () => {
    setup = v2Setup({ variant: { release: "2.0.16" } })
    const { host } = await hostOn(setup, false)
    expect(await host.contextLimit({ providerID: "fake", modelID: "fake-model" }, AbortSignal.timeout(5_000))).toBeUndefined()
  })
})
