import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { CitationUsage } from "../../src/read/citation-usage.js"
import { openDatabase } from "../../src/store/database.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import { VersionStore } from "../../src/store/version-store.js"

const BLOCK = "<memory-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<session_ids>\nses_src\n</session_ids>\n</memory-citation>"
const closers: Array<() => void> = []
afterEach(() => closers.splice(0).forEach((close) => close()))

function setup() {
  const { db } = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-cu-")), "memory.db"))
  closers.push(() => db.close())
  const store = new MemoryStore(db)
  db.prepare("INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ('ses_src', 1, 'r', 's', 1)").run()
  const errors: unknown[] = []
  // Wired as Memory wires it: the catalog counts each part once, the version bumps the sessions.
  const version = new VersionStore("v1", db)
  const sink = {
    recordCitation: (part: string, citing: string | undefined, sessions: readonly string[], files: Parameters<MemoryStore["recordCitation"]>[2]) => {
      const first = store.recordCitation(part, citing, files)
      if (first) version.bumpUsage(sessions)
      return first
    },
  }
  const usage = new CitationUsage({ sink: () => sink, onError: (e) => errors.push(e) })
  const count = () => db.prepare("SELECT usage_count FROM stage1_outputs").get<{ usage_count: number }>()?.usage_count
  return { usage, count, errors, db }
}

describe("CitationUsage", () => {
  it("strips the block from a completed part and counts it once across every hook", () => {
    const { usage, count } = setup()
    expect(usage.completeText("ses_user", "prt_1", `Done.\n\n${BLOCK}`)).toBe("Done.")
    usage.observePart({ id: "prt_1", sessionID: "ses_user", type: "text", text: `Done.\n\n${BLOCK}`, time: { end: 1 } })
    const messages = [{ info: { role: "assistant" }, parts: [{ id: "prt_1", type: "text", text: `Done.\n\n${BLOCK}` }] }]
    usage.stripHistory(messages)
    expect(messages[0]!.parts[0]!.text).toBe("Done.")
    expect(count()).toBe(1)
  })

  it("strips leftovers from history without touching user messages or other parts", () => {
    const { usage, count } = setup()
    const user = { info: { role: "user" }, parts: [{ id: "prt_u", type: "text", text: `quoting ${BLOCK}` }] }
    const tool = { info: { role: "assistant" }, parts: [{ id: "prt_t", type: "tool", text: BLOCK }] }
    usage.stripHistory([user, tool])
    expect(user.parts[0]!.text).toContain("<memory-citation>")
    expect(tool.parts[0]!.text).toBe(BLOCK)
    expect(count()).toBe(0)
  })

  it("counts a Memory V2 citation: a rollout summary and its session, no MEMORY.md", () => {
    const { usage, count, db } = setup()
    const file = "rollout_summaries/2026-11-30T08-09-10-AbCd-fix_flaky_deploy.md"
    const v2 = `<memory-citation>\n<citation_entries>\n${file}:3-8|note=[the deploy retry fix]\n</citation_entries>\n<session_ids>\nses_src\n</session_ids>\n</memory-citation>`
    expect(usage.completeText("ses_user", "prt_v2", `Use the retry loop.\n\n${v2}`)).toBe("Use the retry loop.")
    expect(count()).toBe(1)
    expect(db.prepare("SELECT path, last_range FROM cited_files").all()).toEqual([{ path: file, last_range: "3-8" }])
  })

  it("ignores parts that are still streaming", () => {
    const { usage, count } = setup()
    usage.observePart({ id: "prt_2", type: "text", text: BLOCK, time: {} })
    expect(count()).toBe(0)
  })

  it("redacts a secret in a cited path before it is stored", () => {
    const { usage, db } = setup()
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    usage.completeText("ses_user", "prt_3", `Done.\n\n${BLOCK.replace("MEMORY.md:1-2", `notes/${token}.md:1-2`)}`)
    expect(db.prepare("SELECT path FROM cited_files").all()).toEqual([{ path: "notes/[REDACTED:github-token].md" }])
  })

  it("still strips when the database is not open, and counts nothing", () => {
    const usage = new CitationUsage({ sink: () => undefined, onError: () => undefined })
    expect(usage.completeText("s", "p", `A ${BLOCK}`)).toBe("A")
  })
})
