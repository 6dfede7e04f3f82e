// A real terminal for a TUI under test, two ways:
//   - tmux, when it is installed: a detached session of the given size, keys by send-keys, the
//     screen by capture-pane;
//   - a pseudo-terminal otherwise (or when TUI_TEST_TERMINAL=pty): util-linux's `script` gives the
//     program a pty of its own, and @xterm/headless (a dev dependency: xterm.js without a DOM) plays
//     the terminal emulator: it keeps the screen from the program's output and answers the queries
//     a TUI sends at start (device attributes, cursor position, modes), as a terminal window would.
// So `npm install && npm test` needs no tmux; both give the same screen text for the same program.
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import path from "node:path"
import xterm from "@xterm/headless"

export interface TestTerminal {
  /** "tmux" or "pty": which one runs the program. */
  readonly kind: "tmux" | "pty"
  /** The visible screen, one line per row, trailing blanks kept off. */
  screen(): string
  /**
   * Keys as tmux's send-keys takes them: names (`Enter`, `Escape`, `C-u`, `C-p`) or, after `-l`,
   * literal text.
   */
  keys(...sequence: string[]): void
  close(): Promise<void>
}

export interface TerminalOptions {
  /** An executable script that runs the program (it sets its own environment and folder). */
  launcher: string
  cols: number
  rows: number
  /** Where tmux may keep its socket. */
  workDir: string
  env?: NodeJS.ProcessEnv
}

/** The terminal to use here: tmux when present, unless TUI_TEST_TERMINAL says otherwise. */
export async function startTerminal(options: TerminalOptions): Promise<TestTerminal> {
  const env = options.env ?? process.env
  const wanted = env.TUI_TEST_TERMINAL
  if (wanted === "tmux" || (wanted !== "pty" && hasTmux())) return startTmux(options)
  return startPty(options)
}

export function hasTmux(): boolean {
  return spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0
}

function startTmux(options: TerminalOptions): TestTerminal {
  const socket = path.join(options.workDir, "tmux.sock")
  const tmux = (...args: string[]) => {
    const ran = spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8" })
    if (ran.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${ran.stderr}`)
    return ran.stdout
  }
  tmux("new-session", "-d", "-s", "oc", "-x", String(options.cols), "-y", String(options.rows), options.launcher)
  return {
    kind: "tmux",
    screen: () => trimScreen(tmux("capture-pane", "-t", "oc", "-p").split("\n")),
    keys: (...sequence) => void tmux("send-keys", "-t", "oc", ...sequence),
    close: async () => void spawnSync("tmux", ["-S", socket, "kill-server"]),
  }
}

/** What tmux's key names send. */
const KEYS: Record<string, string> = { Enter: "\r", Escape: "\x1b", Tab: "\t", BSpace: "\x7f", Up: "\x1b[A", Down: "\x1b[B", Right: "\x1b[C", Left: "\x1b[D" }

/** A key name as bytes: `C-x` is the control character, anything else a name of KEYS. */
export function keyBytes(name: string): string {
  const control = /^C-([a-z@\[\\\]^_])$/i.exec(name)
  if (control) return String.fromCharCode(control[1]!.toUpperCase().charCodeAt(0) & 0x1f)
  const bytes = KEYS[name]
  if (bytes === undefined) throw new Error(`no key named ${JSON.stringify(name)} (use -l for text)`)
  return bytes
}

/** tmux's send-keys arguments as the bytes they send. */
export function sendKeysBytes(sequence: readonly string[]): string {
  let out = ""
  let literal = false
  for (const arg of sequence) {
    if (arg === "-l") literal = true
    else out += literal ? arg : keyBytes(arg)
  }
  return out
}

function startPty(options: TerminalOptions): TestTerminal {
  const terminal = new xterm.Terminal({ cols: options.cols, rows: options.rows, allowProposedApi: true, scrollback: 0 })
  // `script` sizes the pty from its own terminal, and has none here: the size is set inside.
  const inner = `stty rows ${options.rows} cols ${options.cols}; exec ${shellQuote(options.launcher)}`
  const child: ChildProcess = spawn("script", ["-q", "-f", "-e", "-c", inner, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"], env: options.env ?? process.env })
  child.stdout!.on("data", (chunk: Buffer) => terminal.write(chunk))
  child.stderr!.resume()
  // The emulator's answers to the program's queries go back in as typed input, as a window's would.
  terminal.onData((data) => child.stdin!.write(data))
  child.stdin!.on("error", () => {})
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    kind: "pty",
    screen: () => {
      const buffer = terminal.buffer.active
      const lines: string[] = []
      for (let row = 0; row < terminal.rows; row++) lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "")
      return trimScreen(lines)
    },
    keys: (...sequence) => void child.stdin!.write(sendKeysBytes(sequence)),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM")
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
        await exited
        clearTimeout(timer)
      }
      terminal.dispose()
    },
  }
}

function trimScreen(lines: readonly string[]): string {
  return `${lines.map((line) => line.replace(/\s+$/, "")).join("\n").replace(/\n+$/, "")}\n`
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}
