// The TUI panel controls against the server part, through the status RPC on the OpenCode 2 fake.
import fs from "node:fs"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import tui, { describeStatus, type TuiCommand, type TuiContext } from "../../src/v2/tui.js"
import { settle, v2Setup, type V2Setup } from "./support.js"

let setup: V2Setup
afterEach(async () => setup?.cleanup())

/** A TUI context whose client calls the fake's RPC in `directory`, and which records what it showed. */
function tuiContext(s: V2Setup, directory: string, confirm: boolean | undefined) {
  const shown = { toasts: [] as string[], alerts: [] as string[], confirms: [] as string[] }
  let commands: TuiCommand[] = []
  const context: TuiContext = {
    keymap: { layer: (build) => void (commands = build().commands) },
    ui: {
      dialog: {
        confirm: async ({ title }) => {
          shown.confirms.push(title)
          return confirm
        },
        alert: async ({ message }) => void shown.alerts.push(message),
      },
      toast: { show: ({ message }) => void shown.toasts.push(message) },
    },
    client: {
      rpc: (definition) =>
        Object.fromEntries(Object.keys(definition.methods).map((method) => [method, (input?: unknown) => s.fake.callRpc(directory, definition.id, method, input ?? {})])),
    },
  }
  tui.setup(context)
  const run = async (id: string) => commands.find((command) => command.id === id)!.run()
  return { shown, run, commands: () => commands }
}

describe("the OpenCode 2 panel controls", () => {
  it("toggle use and generate memories, and every later TUI setup shows the same state", async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir)
    await settle(100)
    const first = tuiContext(setup, setup.projectDir, undefined)
    expect(first.commands().map((c) => c.slash?.name)).toEqual(["memory-use", "memory-generate", "memory-reset", "memory-status"])
    await first.run("memory.use")
    await first.run("memory.generate")
    expect(first.shown.toasts).toEqual(["Memory is no longer shown to conversations.", "Learning from sessions paused."])
    // A later server setup (another location) and a new TUI see the switches as they were left.
    const other = setup.project("other")
    await setup.fake.setup(setup.plugin(), other)
    await settle(100)
    const second = tuiContext(setup, other, undefined)
    await second.run("memory.status")
    expect(second.shown.alerts[0]).toContain("use memories: off; generate memories: off")
    await second.run("memory.use")
    expect(second.shown.toasts).toEqual(["Memory is shown to conversations again."])
  })

  it("resets only after the user confirms", async () => {
    setup = v2Setup()
    const summary = path.join(setup.home, "memories", "memory_summary.md")
    fs.mkdirSync(path.dirname(summary), { recursive: true })
    fs.writeFileSync(summary, "v1\nremembered\n")
    await setup.fake.setup(setup.plugin(), setup.projectDir)
    await settle(100)
    const declined = tuiContext(setup, setup.projectDir, false)
    await declined.run("memory.reset")
    expect(declined.shown.confirms).toEqual(["Erase all memory?"])
    expect(declined.shown.toasts).toEqual(["Nothing was erased."])
    expect(fs.existsSync(summary)).toBe(true)
    const confirmed = tuiContext(setup, setup.projectDir, true)
    await confirmed.run("memory.reset")
    expect(confirmed.shown.toasts[0]).toMatch(/^Memory erased: /)
    expect(fs.existsSync(summary)).toBe(false)
  })

  it("shows the status with V2's readiness, and says when memory is not reachable", async () => {
    setup = v2Setup()
    await setup.fake.setup(setup.plugin(), setup.projectDir, { dual_write: true })
    await settle(100)
    const panel = tuiContext(setup, setup.projectDir, undefined)
    await panel.run("memory.status")
    expect(panel.shown.alerts[0]).toContain("v1: read by new sessions, learning; not consolidated yet")
    expect(panel.shown.alerts[0]).toContain("v2: learning; not consolidated yet; not ready (0 of 20 sessions in one consolidation)")
    expect(panel.shown.alerts[0]).toContain("sessions: sessions of every project, through OpenCode's session domain")
    const nowhere = tuiContext(setup, setup.project("no-plugin"), undefined)
    await nowhere.run("memory.status")
    expect(nowhere.shown.toasts[0]).toMatch(/^memory is not available here: /)
  })

  it("describes a status in a few plain lines", () => {
    expect(
      describeStatus({
        switches: { use_memories: true, generate_memories: false },
        sessions: { source: "service", detail: "through the service" },
        versions: [{ version: "v2", selected: true, writes: true, lastSuccess: Date.UTC(2026, 10, 30), ready: true, readiness: "21 of 20 sessions in one consolidation" }],
        text: "",
      }),
    ).toBe("use memories: on; generate memories: off\nsessions: through the service\nv2: read by new sessions, learning; last consolidation 2026-11-30T00:00:00.000Z; ready (21 of 20 sessions in one consolidation)")
  })
})
