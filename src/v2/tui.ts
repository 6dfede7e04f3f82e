// OpenCode 2's TUI part (the package's `./tui` export): panel controls for memory, in the command
// palette and as slash commands. They hold no state of their own: each one asks the server part
// through the status RPC (rpc.ts), whose switches are process-wide and persisted, so a control
// shows the same state in every TUI and after any later setup.
//   - use memories: memory shown to conversations, or not
//   - generate memories: new sessions learned from, or not
//   - reset: erases all memory, after a confirmation
//   - status: switches, how sessions are found, and each version with V2's readiness
import { PLUGIN_ID } from "../constants.js"
import { MEMORY_RPC, type MemoryStatus, type SwitchName } from "./rpc.js"

/** The part of OpenCode 2's TUI plugin context these controls use (packages/plugin/src/tui/context.ts). */
export interface TuiContext {
  keymap: { layer(build: () => { mode?: "global" | "modal"; commands: TuiCommand[] }): unknown }
  ui: {
    dialog: {
      confirm(options: { title: string; message: string; label?: { confirm?: string; cancel?: string } }): Promise<boolean | undefined>
      alert(options: { title: string; message: string }): Promise<void> | void
    }
    toast: { show(options: { message: string; title?: string; variant?: "info" | "success" | "warning" | "error" }): void }
  }
  client: { rpc(definition: typeof MEMORY_RPC): Record<string, (input?: unknown) => Promise<unknown>> }
}

export interface TuiCommand {
  id: string
  title: string
  description?: string
  group?: string
  palette?: true
  slash?: { name: string }
  run(): Promise<void>
}

export function memoryCommands(context: TuiContext): TuiCommand[] {
  const rpc = () => context.client.rpc(MEMORY_RPC)
  const status = async () => (await rpc().status!({})) as MemoryStatus
  const toast = (message: string, variant: "info" | "success" | "warning" | "error" = "info") => context.ui.toast.show({ title: "Memory", message, variant })
  const guarded = (run: () => Promise<void>) => async () => {
    try {
      await run()
    } catch (error) {
      toast(`memory is not available here: ${(error as Error).message}`, "error")
    }
  }
  const flip = (name: SwitchName, on: string, off: string) =>
    guarded(async () => {
      const now = (await status()).switches[name]
      await rpc().setSwitch!({ name, value: !now })
      toast(now ? off : on, now ? "warning" : "success")
    })
  return [
    {
      id: "memory.use",
      title: "Memory: use memories (on/off)",
      description: "Show long-term memory to conversations, or stop",
      group: "Memory",
      palette: true,
      slash: { name: "memory-use" },
      run: flip("use_memories", "Memory is shown to conversations again.", "Memory is no longer shown to conversations."),
    },
    {
      id: "memory.generate",
      title: "Memory: generate memories (on/off)",
      description: "Learn from finished sessions, or pause learning",
      group: "Memory",
      palette: true,
      slash: { name: "memory-generate" },
      run: flip("generate_memories", "Learning from sessions resumed.", "Learning from sessions paused."),
    },
    {
      id: "memory.reset",
      title: "Memory: reset…",
      description: "Erase everything memory learned (asks first)",
      group: "Memory",
      palette: true,
      slash: { name: "memory-reset" },
      run: guarded(async () => {
        const sure = await context.ui.dialog.confirm({
          title: "Erase all memory?",
          message: "Everything learned from your sessions is deleted, in every memory version. Session modes are kept. This cannot be undone.",
          label: { confirm: "Erase", cancel: "Keep" },
        })
        if (sure !== true) return toast("Nothing was erased.")
        const report = (await rpc().reset!({ confirm: true })) as { type: string; reason?: string; outputs?: number; files?: number }
        if (report.type === "reset") toast(`Memory erased: ${report.outputs ?? 0} record(s), ${report.files ?? 0} item(s) in the memory folders.`, "success")
        else toast(`Not erased: ${report.reason ?? "refused"}`, "warning")
      }),
    },
    {
      id: "memory.status",
      title: "Memory: status",
      description: "Switches, session discovery and each memory version's state",
      group: "Memory",
      palette: true,
      slash: { name: "memory-status" },
      run: guarded(async () => context.ui.dialog.alert({ title: "Memory", message: describeStatus(await status()) })),
    },
  ]
}

/** The status in a few lines (pure). */
export function describeStatus(status: MemoryStatus): string {
  const onOff = (on: boolean) => (on ? "on" : "off")
  const lines = [
    `use memories: ${onOff(status.switches.use_memories)}; generate memories: ${onOff(status.switches.generate_memories)}`,
    `sessions: ${status.sessions.detail}`,
  ]
  for (const failure of status.registrations?.failed ?? []) lines.push(`refused by OpenCode: ${failure.name} (${failure.message}); memory runs without it`)
  for (const version of status.versions) {
    const role = [version.selected ? "read by new sessions" : undefined, version.writes ? "learning" : undefined].filter(Boolean).join(", ") || "idle"
    const success = version.lastSuccess ? `last consolidation ${new Date(version.lastSuccess).toISOString()}` : "not consolidated yet"
    const ready = version.ready === undefined ? "" : `; ${version.ready ? "ready" : "not ready"} (${version.readiness})`
    lines.push(`${version.version}: ${role}; ${success}${ready}`)
  }
  return lines.join("\n")
}

export default {
  id: PLUGIN_ID,
  setup(context: TuiContext): void {
    // "global": a layer without a mode is a base-mode layer, which 2.1.2 does not reach while the
    // prompt has the focus, so its commands were in neither the palette nor the slash list.
    context.keymap.layer(() => ({ mode: "global", commands: memoryCommands(context) }))
  },
}
