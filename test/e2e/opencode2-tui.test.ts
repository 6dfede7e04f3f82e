// The TUI part on the real OpenCode 2.1.2, driven in a real terminal: tmux, or where there is none
// a pseudo-terminal read by a headless xterm.js (support/terminal.ts), runs `opencode` (the TUI,
// which starts the shared background service the server part runs in), keys are sent as a user
// types them, and each screen is captured; the captures are printed in the test output and kept
// in test-results/tui/. The slash commands and the palette entries appear, /memory-status
// shows the server part's status over the RPC, and /memory-use flips the switch it shows.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FakeLlm } from "./support/fake-llm.js"
import { repoRoot, waitFor } from "./support/opencode.js"
import { createSandbox2, opencode2Binary, type Sandbox2 } from "./support/opencode2.js"
import { startTerminal, type TestTerminal } from "./support/terminal.js"

const SHOTS = path.join(repoRoot(), "test-results", "tui")

describe("the TUI commands on the real OpenCode 2.1.2, in a terminal", () => {
  let llm: FakeLlm
  let sandbox: Sandbox2
  let terminal: TestTerminal | undefined
  const shots: Record<string, string> = {}

  const screen = () => terminal!.screen()
  const keys = (...sequence: string[]) => terminal!.keys(...sequence)
  /** Waits for `text` on the screen and keeps that screen as `name`. */
  const shot = async (name: string, text: string | RegExp) => {
    const seen = await waitFor(() => (typeof text === "string" ? screen().includes(text) : text.test(screen())) && screen(), { timeoutMs: 30_000, intervalMs: 200, message: `"${String(text)}" never appeared on the TUI's screen`, state: screen })
    shots[name] = seen
    fs.writeFileSync(path.join(SHOTS, `${name}.txt`), seen)
    console.log(`--- TUI screen (${terminal!.kind}): ${name} ---\n${seen.replace(/\s+$/gm, "").replace(/\n{3,}/g, "\n\n")}`)
    return seen
  }
  /** Closes the alert on the screen (its binding is Enter) and waits until it is gone. */
  const dismiss = async () => {
    keys("Enter")
    await waitFor(() => !screen().includes("use memories:"), { timeoutMs: 10_000, message: "the alert stayed open", state: screen })
  }
  /**
   * Types a slash command into an empty prompt, waits for the TUI to offer it, and runs it. The
   * command ran once the offer is gone; while it stays (a busy machine can drop the key while the
   * list redraws), Enter is sent again, so a switch is never flipped twice.
   */
  const slash = async (command: string) => {
    const offered = new RegExp(`${command.replace(/[-/]/g, "\\$&")}\\s{2,}\\S`)
    keys("C-u")
    keys("-l", command)
    await waitFor(() => offered.test(screen()), { timeoutMs: 15_000, message: `${command} was not offered`, state: screen })
    for (let attempt = 1; attempt <= 3; attempt++) {
      keys("Enter")
      if (await waitFor(() => !offered.test(screen()), { timeoutMs: 5_000, intervalMs: 200 }).then(() => true, () => false)) return
    }
    throw new Error(`${command} was offered but never ran\n${screen()}`)
  }

  /**
   * Runs /memory-status and keeps its alert as `name` once `text` is on it. On a loaded machine the
   * TUI can close the command list on Enter without running the command (the prompt is left empty,
   * no alert comes); the status only reads, so it is asked again, at most three times.
   */
  const showStatus = async (name: string, text: string) => {
    for (let attempt = 1; ; attempt++) {
      await slash("/memory-status")
      const shown = await waitFor(() => screen().includes("use memories:"), { timeoutMs: 10_000, intervalMs: 200 }).then(() => true, () => false)
      if (shown || attempt === 3) return shot(name, text)
    }
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true })
    llm = await FakeLlm.start()
    sandbox = await createSandbox2({ llmUrl: llm.url })
    const launcher = path.join(sandbox.root, "tui.sh")
    const exports = Object.entries({ ...sandbox.env, TERM: "xterm-256color" }).map(([key, value]) => `export ${key}=${JSON.stringify(value)}`)
    fs.writeFileSync(launcher, `${exports.join("\n")}\ncd ${JSON.stringify(sandbox.projectDir)}\nexec ${JSON.stringify(opencode2Binary())} 2>${JSON.stringify(path.join(sandbox.root, "tui.stderr"))}\n`, { mode: 0o755 })
    terminal = await startTerminal({ launcher, cols: 160, rows: 45, workDir: sandbox.root })
    await shot("start", "Ask anything")
  }, 90_000)

  afterAll(async () => {
    await terminal?.close()
    await sandbox?.cleanup()
    await llm?.close()
  })

  it("lists the four /memory commands as the user types /memory", async () => {
    keys("-l", "/memory")
    const seen = await shot("slash-list", "/memory-status")
    for (const command of ["/memory-use", "/memory-generate", "/memory-reset", "/memory-status"]) expect(seen).toContain(command)
    expect(seen).not.toContain("No matching commands")
  })

  it("/memory-status shows the server part's status, and /memory-use switches memory off for every TUI", async () => {
    const status = await showStatus("status", "use memories: on")
    expect(status).toMatch(/v1: read by new sessions/)
    await dismiss()
    await slash("/memory-use")
    await showStatus("status-after-switch", "use memories: off")
    await dismiss()
    await slash("/memory-use")
  })

  it("offers the same controls in the command palette", async () => {
    keys("C-u")
    keys("C-p")
    // Typed only once the palette is open: text that arrives with the key goes to the prompt.
    await waitFor(() => /Commands\s+esc/.test(screen()), { timeoutMs: 15_000, intervalMs: 200, message: "the command palette did not open", state: screen })
    keys("-l", "Memory:")
    const seen = await shot("palette", "Memory: status")
    expect(seen).toContain("Memory: use memories")
    keys("Escape")
  })
})
