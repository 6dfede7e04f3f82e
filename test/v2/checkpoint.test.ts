// The session checkpoint on the OpenCode 2 fake: the compaction hook gets the view (also offered as
// the result itself with mode "replace", and judged by the compaction's end), the frozen view joins
// later primary requests, and a compaction's end captures the segment it closed.
import { afterEach, describe, expect, it } from "vitest"
import { CHECKPOINT_VIEW_BEGIN } from "../../src/checkpoint/view.js"
import { settle, v2Setup, type V2Setup } from "./support.js"

let setup: V2Setup
afterEach(async () => setup?.cleanup())

const views = (system: readonly string[]) => system.filter((text) => text.startsWith(CHECKPOINT_VIEW_BEGIN))

async function recordFact(s: V2Setup, id: string): Promise<void> {
  s.fake.model.script(
    { match: "remember", toolCalls: [{ name: "memory_checkpoint", arguments: { fact: { key: "deploy.day", value: "Deploys happen on Tuesdays", evidence: { source: "user", ref: "current" }, depends_on: [] } } }] },
    { match: "remember", text: "noted" },
  )
  await s.fake.prompt(id, "remember: deploys happen on Tuesdays")
}

describe("checkpoints on OpenCode 2", () => {
  it("augments the compaction with the view, then carries the frozen view on every primary request", async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir, {})
    await settle(100)
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await recordFact(setup, id)
    expect(setup.fake.requests.filter((r) => r.kind === "primary").flatMap((r) => views(r.system))).toEqual([])
    const compaction = await setup.fake.compact(id)
    expect(compaction.fromPlugin).toBe(false)
    const asked = setup.fake.requests.filter((r) => r.kind === "compaction")
    expect(asked).toHaveLength(1)
    const view = views(asked[0]!.system)
    expect(view).toHaveLength(1)
    expect(view[0]).toContain("- deploy.day: Deploys happen on Tuesdays")
    await settle(50)
    await setup.fake.prompt(id, "next")
    await setup.fake.prompt(id, "and next")
    const later = setup.fake.requests.filter((r) => r.kind === "primary").slice(-2).map((r) => views(r.system))
    expect(later[0]).toEqual(view)
    expect(later[1]).toEqual(view)
  })

  it('replaces the compaction with the view under mode "replace": no model request', async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir, { checkpoint: { enabled: true, mode: "replace" } })
    await settle(100)
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await recordFact(setup, id)
    const compaction = await setup.fake.compact(id)
    expect(compaction.fromPlugin).toBe(true)
    expect(compaction.summary).toContain("[SESSION_CHECKPOINT v1]")
    expect(compaction.summary).toContain("deploy.day")
    expect(setup.fake.requests.filter((r) => r.kind === "compaction")).toEqual([])
    // The compaction's end shows the host kept it: memory_inspect says replace is confirmed.
    await settle(50)
    const inspect = await setup.fake.callRpc(setup.projectDir, "opencode-codex-memory", "status")
    expect((inspect as { text: string }).text).toContain('checkpoint.mode "replace": confirmed on this OpenCode')
  })

  it('says "not yet confirmed" before a compaction, and runs as augment on a build that asks its model anyway', async () => {
    setup = v2Setup({ variant: { ignoresCompactionResult: true } })
    await setup.fake.setup(setup.plugin(), setup.projectDir, { checkpoint: { enabled: true, mode: "replace" } })
    await settle(100)
    const status = async () => ((await setup.fake.callRpc(setup.projectDir, "opencode-codex-memory", "status")) as { text: string }).text
    expect(await status()).toContain('checkpoint.mode "replace": not yet confirmed on this OpenCode')
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await recordFact(setup, id)
    const compaction = await setup.fake.compact(id)
    expect(compaction.fromPlugin).toBe(false)
    // The model that was asked anyway had the checkpoint to build on.
    const asked = setup.fake.requests.filter((r) => r.kind === "compaction")
    expect(asked).toHaveLength(1)
    expect(views(asked[0]!.system)[0]).toContain("deploy.day")
    await settle(50)
    expect(await status()).toContain("this OpenCode asked its compaction model anyway, so replace runs as augment here")
    expect(setup.logs.join("\n")).toMatch(/warn: .*replace runs as augment here/)
  })

  it("adds nothing with checkpoints off", async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir, { checkpoint: { enabled: false } })
    await settle(100)
    expect(setup.fake.nativeTools(setup.projectDir)).not.toContain("memory_checkpoint")
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await setup.fake.compact(id)
    await settle(50)
    await setup.fake.prompt(id, "next")
    expect(setup.fake.requests.flatMap((r) => views(r.system))).toEqual([])
  })
})
