import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeEach, describe, expect, it } from "vitest"
import { ReadPath } from "../../src/read/read-path.js"
import { loadReadPathTemplates } from "../../src/read/render.js"

const templates = loadReadPathTemplates(fileURLToPath(new URL("../../templates", import.meta.url)))
let root: string
let summaryFile: string
let helpers: Set<string>
let readPath: ReadPath

beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-rp-")), "memories")
  fs.mkdirSync(root)
  summaryFile = path.join(root, "memory_summary.md")
  helpers = new Set()
  readPath = new ReadPath({
    memoryRoot: root,
    summaryFile,
    dedicatedTools: true,
    templates,
    isHelperSession: (id) => helpers.has(id),
    onRefuse: () => undefined,
  })
})

const agentCall = { sessionID: "ses_user", system: ["You are OpenCode, the best coding agent."] }

describe("ReadPath.blockFor", () => {
  it("returns the same string, byte for byte, on every turn while the summary is unchanged", () => {
    fs.writeFileSync(summaryFile, "v1\nthe user deploys with make ship")
    const first = readPath.blockFor(agentCall)
    expect(first).toContain("the user deploys with make ship")
    expect(readPath.blockFor(agentCall)).toBe(first)
  })

  it("follows an edited summary", () => {
    fs.writeFileSync(summaryFile, "v1\nold fact")
    readPath.blockFor(agentCall)
    fs.writeFileSync(summaryFile, "v1\nnew fact, longer")
    expect(readPath.blockFor(agentCall)).toContain("new fact, longer")
  })

  it("injects nothing when the summary is missing or blank", () => {
    expect(readPath.blockFor(agentCall)).toBeUndefined()
    fs.writeFileSync(summaryFile, " \n ")
    expect(readPath.blockFor(agentCall)).toBeUndefined()
  })

  it("injects nothing for calls without a session, for helper sessions, or for title generation", () => {
    fs.writeFileSync(summaryFile, "v1\nfact")
    expect(readPath.blockFor({ system: agentCall.system })).toBeUndefined()
    helpers.add("ses_helper")
    expect(readPath.blockFor({ ...agentCall, sessionID: "ses_helper" })).toBeUndefined()
    expect(readPath.blockFor({ sessionID: "ses_user", system: ["You are a title generator. You output ONLY a thread title."] })).toBeUndefined()
    expect(readPath.blockFor(agentCall)).toContain("fact")
  })
})

describe("ReadPath with the Memory V2 templates", () => {
  it("injects the recap block, the same string byte for byte on every turn while the summary is unchanged", () => {
    const v2 = loadReadPathTemplates(fileURLToPath(new URL("../../templates", import.meta.url)), "v2")
    const reader = new ReadPath({ memoryRoot: root, summaryFile, dedicatedTools: false, templates: v2, isHelperSession: () => false, onRefuse: () => undefined })
    fs.writeFileSync(summaryFile, "v1\n## User Profile\nGo developer\n")
    const first = reader.blockFor(agentCall)
    expect(first).toContain("Below is a recap of this user's earlier OpenCode sessions")
    expect(first).toContain("----- MEMORY SUMMARY BEGINS -----\nv1\n## User Profile\nGo developer\n----- MEMORY SUMMARY ENDS -----")
    expect(reader.blockFor(agentCall)).toBe(first)
    expect(first).not.toBe(readPath.blockFor(agentCall))
  })
})

describe("ReadPath while a consolidation is unfinished", () => {
  // A run copies the folder before it writes; `whole` stands for the copy's marker on disk.
  function reader() {
    const copyFile = path.join(path.dirname(root), "copy_summary.md")
    const state = { whole: false, asked: 0 }
    const read = new ReadPath({
      memoryRoot: root,
      summaryFile,
      dedicatedTools: true,
      templates,
      isHelperSession: () => false,
      onRefuse: () => undefined,
      pendingCopy: { summaryFile: copyFile, whole: () => (state.asked++, state.whole) },
    })
    return { read, state, copyFile }
  }
  const touch = (file: string, text: string, at: number) => {
    fs.writeFileSync(file, text)
    fs.utimesSync(file, at, at)
  }

  it("serves the copy once the run writes, the folder again once the copy is gone, and asks the disk only when the summary changed or the copy is served", () => {
    const { read, state, copyFile } = reader()
    touch(summaryFile, "v1\n- committed fact\n", 1_000)
    expect(read.blockFor(agentCall)).toContain("committed fact")
    const asked = state.asked
    for (let i = 0; i < 5; i++) read.blockFor(agentCall)
    // Unchanged and committed: one lstat of the summary per call, no look for a copy.
    expect(state.asked).toBe(asked)
    // The run takes its copy, then writes its output in place.
    touch(copyFile, "v1\n- committed fact\n", 1_000)
    state.whole = true
    touch(summaryFile, "v1\n- half-written output\n", 2_000)
    expect(read.blockFor(agentCall)).toContain("committed fact")
    expect(read.blockFor(agentCall)).not.toContain("half-written")
    // The run succeeds: its copy goes, the summary is not written again, and it is now memory.
    state.whole = false
    expect(read.blockFor(agentCall)).toContain("half-written output")
    const after = state.asked
    read.blockFor(agentCall)
    expect(state.asked).toBe(after)
  })

  it("serves a killed run's copy to a reader that starts after the crash", () => {
    const { read, state, copyFile } = reader()
    touch(copyFile, "v1\n- what memory was\n", 1_000)
    touch(summaryFile, "v1\n- what the killed run left\n", 2_000)
    state.whole = true
    expect(read.blockFor(agentCall)).toContain("what memory was")
  })
})
