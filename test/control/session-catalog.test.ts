// The session catalog as an instance keeps it from phase 1's listings: cleaned titles and folders
// for sessions that may be learned from, nothing for the rest, nothing rewritten when nothing
// changed, and every trace gone when OpenCode deleted the session.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { execFileSync } from "node:child_process"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Memory } from "../../src/memory.js"
import { FakeHost } from "../fakes/host.js"
import { openCodeRemoteId } from "../write/phase1/repositories.js"

const HOUR = 3_600_000
let clock: number
let home: string
let host: FakeHost
const memories: Memory[] = []

async function start(options: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Memory> {
  const memory = new Memory({ home, ...options }, { host, env, homedir: home, now: () => clock })
  memories.push(memory)
  await memory.start()
  return memory
}

const rows = (memory: Memory) => Object.fromEntries(memory.catalog.sessions!.all().map((row) => [row.session_id, row]))

beforeEach(() => {
  clock = Date.UTC(2026, 11, 1, 12)
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-catalog-"))
  host = new FakeHost(() => clock)
})
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.dispose()
  fs.rmSync(home, { recursive: true, force: true })
})

describe("the session catalog", () => {
  it("keeps each listed root session's times, and its title and folder cleaned of private spans and secrets", async () => {
    host.addSession({ id: "ses_a", title: "Rotate ghp_abcdefghijklmnopqrstuvwxyz0123456789 <private>ACME</private> today", directory: "/src/app", updatedAt: clock - HOUR })
    host.addSession({ id: "ses_child", parentId: "ses_a", title: "a subagent", updatedAt: clock - HOUR })
    host.addSession({ id: "ses_old", title: "long ago", updatedAt: clock - 60 * 24 * HOUR })
    const memory = await start()
    await memory.pipeline("v1").phase1!.pass()
    const listed = rows(memory)
    expect(Object.keys(listed)).toEqual(["ses_a"])
    expect(listed.ses_a).toMatchObject({ directory: "/src/app", updated_at: clock - HOUR })
    expect(listed.ses_a!.title).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    expect(listed.ses_a!.title).not.toContain("ACME")
    expect(listed.ses_a!.title).toMatch(/^Rotate .* today$/)
    // Waiting: listed in inspect with the time it becomes eligible.
    expect(memory.controls.inspect().text).toContain(`1 session to go idle (eligible: ${JSON.stringify(listed.ses_a!.title)} at ${new Date(clock + 5 * HOUR).toISOString()})`)
  })

  it("keeps each session's project, one for a repository and its subfolder, and inspect counts sessions by project", async () => {
    // Outside the memory home and the temp folder as this instance sees it (TMPDIR), so they are projects.
    const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-catalog-work-")))
    try {
      const app = path.join(work, "app")
      fs.mkdirSync(path.join(app, "web"), { recursive: true })
      execFileSync("git", ["init", "-q"], { cwd: app })
      execFileSync("git", ["remote", "add", "origin", "git@github.com:acme/app.git"], { cwd: app })
      host.addSession({ id: "ses_a", title: "a", directory: app, updatedAt: clock - HOUR })
      host.addSession({ id: "ses_b", title: "b", directory: path.join(app, "web"), updatedAt: clock - 2 * HOUR })
      host.addSession({ id: "ses_c", title: "c", directory: path.join(work, "notes"), updatedAt: clock - 3 * HOUR })
      host.addSession({ id: "ses_t", title: "t", directory: path.join(work, "tmp", "agent"), updatedAt: clock - 3 * HOUR })
      const memory = await start({ project_names: { [path.join(work, "notes")]: "Notes" } }, { TMPDIR: path.join(work, "tmp") })
      await memory.pipeline("v1").phase1!.pass()
      const listed = rows(memory)
      // No commit yet: OpenCode's id is the origin's hash.
      const key = `host:${openCodeRemoteId("github.com/acme/app")}`
      expect([listed.ses_a, listed.ses_b, listed.ses_c, listed.ses_t].map((row) => [row!.project_key, row!.project_name])).toEqual([
        [key, "github.com/acme/app"],
        [key, "github.com/acme/app"],
        ["map:Notes", "Notes"],
        [null, null],
      ])
      expect(memory.controls.sessions("v1").find((s) => s.sessionId === "ses_b")?.project).toEqual({ key, name: "github.com/acme/app" })
      expect(memory.controls.inspect().text).toContain("projects: github.com/acme/app (2 sessions, 0 records), Notes (1 session, 0 records)")
      // Kept out: its project goes with its title and folder.
      await memory.controls.setMode("ses_a", "disabled")
      expect(rows(memory).ses_a).toMatchObject({ title: null, directory: null, project_key: null, project_name: null })
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  })

  it("writes nothing for a listing that changed nothing, and the change when one did", async () => {
    host.addSession({ id: "ses_a", updatedAt: clock - HOUR })
    const memory = await start()
    const catalog = memory.catalog.sessions!
    const entry = { id: "ses_a", title: "t", directory: "/p", createdAt: 1, updatedAt: 2 }
    expect(catalog.remember([entry])).toBe(1)
    expect(catalog.remember([entry])).toBe(0)
    expect(catalog.remember([{ ...entry, updatedAt: 3 }])).toBe(1)
  })

  it("keeps no title or folder for a session kept out, forgotten, or from before a reset, and drops the row of a deleted one", async () => {
    for (const id of ["ses_on", "ses_off", "ses_gone"]) host.addSession({ id, title: `title of ${id}`, updatedAt: clock - 7 * HOUR })
    const memory = await start()
    await memory.pipeline("v1").phase1!.pass()
    expect(rows(memory).ses_off!.title).toBe("title of ses_off")
    await memory.controls.setMode("ses_off", "disabled")
    expect(rows(memory).ses_off).toMatchObject({ title: null, directory: null })
    // Level-triggered: the next listing does not bring it back while the mode is off.
    clock += 60_000
    await memory.pipeline("v1").phase1!.pass()
    expect(rows(memory).ses_off!.title).toBeNull()
    expect(memory.controls.sessions("v1").find((s) => s.sessionId === "ses_off")).toMatchObject({ state: "off", mode: "disabled" })

    host.sessions.delete("ses_gone")
    const signal = new AbortController().signal
    await memory.reconcile(await host.listRootSessions({ signal }), signal)
    expect(rows(memory).ses_gone).toBeUndefined()

    await memory.controls.reset()
    expect(rows(memory).ses_on).toMatchObject({ title: null, directory: null })
    clock += 60_000
    await memory.pipeline("v1").phase1!.pass()
    // Active only before the reset: never learned, so its title is not kept again.
    expect(rows(memory).ses_on!.title).toBeNull()
    expect(memory.controls.sessions("v1").find((s) => s.sessionId === "ses_on")?.state).toBe("before_reset")
  })
})
