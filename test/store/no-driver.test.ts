// A runtime with no SQLite driver (the desktop app's Node without node:sqlite, and no
// better-sqlite3): the plugin turns itself off with one log line and a memory_inspect reason, and
// nothing it does afterwards throws into the host, logs again, or injects memory.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { Memory } from "../../src/memory.js"
import { NoSqliteDriverError } from "../../src/store/sqlite.js"
import { toV1Tools } from "../../src/v1/tools.js"
import { FakeHost } from "../fakes/host.js"

const clock = Date.UTC(2026, 11, 3, 12)
let memory: Memory | undefined

afterEach(async () => {
  await memory?.dispose()
  memory = undefined
})

function noDriver(): never {
  throw new NoSqliteDriverError([
    { driver: "node:sqlite", reason: "No such built-in module: node:sqlite" },
    { driver: "better-sqlite3", reason: "not installed" },
  ])
}

describe("no SQLite driver in the runtime", () => {
  it("turns memory off with one clear log line and an inspect reason, and never throws", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-nodriver-"))
    const host = new FakeHost(() => clock)
    host.addSession({ id: "ses_me", updatedAt: clock })
    fs.mkdirSync(path.join(home, "memories"), { recursive: true })
    fs.writeFileSync(path.join(home, "memories", "memory_summary.md"), "v1\n- a fact\n")
    memory = new Memory({ home }, { host, env: {}, homedir: home, now: () => clock, loadDriver: noDriver })
    await memory.start()

    const errors = () => host.logs.filter((line) => line.level === "error")
    expect(errors()).toHaveLength(1)
    expect(errors()[0]!.message).toMatch(/off in this process: no SQLite driver loads in this runtime \(node:sqlite: No such built-in module: node:sqlite; better-sqlite3: not installed\)\. Use Node 22\.13 or later/)
    expect(memory.controls.inspect().text).toContain("disabled: opencode-codex-memory is off in this process: no SQLite driver loads")
    expect(memory.controls.inspect().text).not.toContain("reopening:")

    // Later work: a pass, a tool call and a turn neither throw nor log the cause again.
    await memory.pipeline("v1").phase1?.pass()
    const context = { sessionID: "ses_me", messageID: "msg_1", agent: "build", directory: home, worktree: home, abort: new AbortController().signal, metadata: () => undefined, ask: async () => {} }
    const reply = await toV1Tools(memory.tools(), memory.diagnostics).memory_mode!.execute({ mode: "disabled" } as never, context as never)
    expect(typeof reply === "string" ? reply : reply.output).toMatch(/^Error \(unavailable\): memory is off in this OpenCode process: no SQLite driver loads/)
    expect(memory.systemBlock({ sessionID: "ses_me", agent: "build" } as never)).toBeUndefined()
    expect(errors().filter((line) => /SQLite driver/.test(line.message))).toHaveLength(1)
  })
})
