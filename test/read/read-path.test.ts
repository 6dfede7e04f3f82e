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
