// The session checkpoint on the OpenCode 2 fake: the compaction hook gets the view (mode "replace"
// runs as augment: 2.1.2 always asks its compaction model), the frozen view joins later primary
// requests, and a compaction's end captures the segment it closed.
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
    await setup.fake.compact(id)
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

  it('runs mode "replace" as augment, and says so: the compaction model is asked, with the view to build on', async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir, { checkpoint: { enabled: true, mode: "replace" } })
    await settle(100)
    const id = await setup.fake.createSession(setup.projectDir, "chat")
    await recordFact(setup, id)
    await setup.fake.compact(id)
    const asked = setup.fake.requests.filter((r) => r.kind === "compaction")
    expect(asked).toHaveLength(1)
    expect(views(asked[0]!.system)[0]).toContain("deploy.day")
    const inspect = ((await setup.fake.callRpc(setup.projectDir, "opencode-codex-memory", "status")) as { text: string }).text
    expect(inspect).toContain('option "checkpoint.mode" = "replace": OpenCode 2 (2.1.2 reads no result from its compaction hook) always runs its own compaction model')
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
