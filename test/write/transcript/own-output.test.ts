import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import { MEMORY_TOOL_NAMES } from "../../../src/constants.js"
import { Memory } from "../../../src/memory.js"
import { selectEvidence } from "../../../src/write/phase1/evidence.js"
import { ownToolCalls, ownToolLine } from "../../../src/write/transcript/own-output.js"
import { renderTranscript, type TranscriptMessage, type TranscriptPart } from "../../../src/write/transcript/transcript.js"
import { FakeHost } from "../../fakes/host.js"

// The home, its memory folders and databases, as Memory lists them (src/util/paths.ts).
const HOMEDIR = "/home/ada"
const DATA = path.join(HOMEDIR, ".local/share")
const HOME = path.join(DATA, "opencode")
const ROOT = path.join(HOME, "memories")
const FOLDERS = [ROOT, path.join(HOME, "memory.db"), path.join(HOME, "memories_v2"), path.join(HOME, "memory_v2.db")]
const PATHS = { paths: FOLDERS, homedir: HOMEDIR, dataHome: DATA }
const PROJECT = path.join(HOMEDIR, "src/acme-api")

const own = ownToolCalls(PATHS, PROJECT)

// ---- Builders: OpenCode 1's message shape, as test/write/transcript.test.ts has it. ----

const user = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "user" }, parts })
const assistant = (...parts: TranscriptPart[]): TranscriptMessage => ({ info: { role: "assistant" }, parts })
const text = (value: string): TranscriptPart => ({ type: "text", text: value })
const completed = (tool: string, input: unknown, output: string): TranscriptPart => ({
  type: "tool",
  tool,
  callID: "call_1",
  state: { status: "completed", input, output, title: tool, metadata: {}, time: { start: 1, end: 2 } },
})

/** A session that read memory through the plugin's tool and through OpenCode's read. */
const session = (): TranscriptMessage[] => [
  user(text("What do you remember about deploying acme-api?")),
  assistant(
    text("Let me check memory."),
    completed("memory_read", { path: "MEMORY.md" }, "MEMORY.md (lines 1-2 of 2)\n1| # Memory\n2| - acme-api: REMEMBERED-FACT deploys on Tuesdays"),
    completed("read", { filePath: path.join(ROOT, "MEMORY.md") }, "<file>\n00001| - acme-api: REMEMBERED-FACT via read\n</file>"),
    text("Memory says it deploys on Tuesdays."),
  ),
  user(text("Then deploy it today.")),
]

describe("ownToolCalls", () => {
  it("counts every tool of the plugin as memory's own, whatever its input", () => {
    for (const name of MEMORY_TOOL_NAMES) expect(own(name, {}), name).toBe(true)
    expect(own("memory_search", { queries: ["deploy"] })).toBe(true)
    expect(own("read", {})).toBe(false)
  })

  it("counts a call whose input names something inside a memory folder or database", () => {
    const cases: Array<[string, unknown]> = [
      ["read", { filePath: path.join(ROOT, "MEMORY.md") }],
      ["list", { path: ROOT }],
      ["read", { filePath: path.join(HOME, "memories_v2", "memory_summary.md") }],
      // The home-relative form a model writes.
      ["read", { filePath: "~/.local/share/opencode/memories/rollout_summaries/2026-01-02T03-04-05-Ab9Z-deploy.md" }],
      // Inside a command line, quoted or not.
      ["bash", { command: `grep -rn deploy ${ROOT}/ | head`, description: "search memory" }],
      ["bash", { command: `sqlite3 "${path.join(HOME, "memory.db")}" 'SELECT raw_memory FROM stage1_outputs'` }],
      ["bash", { command: "cat ~/.local/share/opencode/memories/MEMORY.md" }],
      // From the home folder's variables, as a shell command spells it.
      ["bash", { command: "cat $HOME/.local/share/opencode/memories/MEMORY.md" }],
      ["bash", { command: 'cat "${HOME}/.local/share/opencode/memories_v2/memory_summary.md"' }],
      ["bash", { command: "cat $XDG_DATA_HOME/opencode/memories/MEMORY.md" }],
      // A database's sidecars hold its recent pages.
      ["read", { filePath: path.join(HOME, "memory.db-wal") }],
      ["bash", { command: `strings ${path.join(HOME, "memory.db-wal")}` }],
      // Relative to the session's folder.
      ["read", { filePath: "../../.local/share/opencode/memories/MEMORY.md" }],
      // Deeper in the input.
      ["multiedit", { edits: [{ filePath: "README.md" }, { target: { filePath: path.join(ROOT, "skills", "deploy.md") } }] }],
    ]
    for (const [tool, input] of cases) expect(own(tool, input), JSON.stringify(input)).toBe(true)
  })

  it("does not count a sibling folder that merely starts like a memory folder, or an unrelated path", () => {
    const cases: Array<[string, unknown]> = [
      ["read", { filePath: `${ROOT}_old/MEMORY.md` }],
      ["bash", { command: `ls ${ROOT}.bak` }],
      ["read", { filePath: "~/.local/share/opencode/memories-archive/MEMORY.md" }],
      ["read", { filePath: path.join(PROJECT, "memories", "MEMORY.md") }],
      // Relative to the session's folder, this is the project's own memories/ folder.
      ["read", { filePath: "memories/MEMORY.md" }],
      ["bash", { command: "npm test" }],
      ["read", { filePath: path.join(HOME, "opencode.db") }],
    ]
    for (const [tool, input] of cases) expect(own(tool, input), JSON.stringify(input)).toBe(false)
  })

  it("resolves a relative path only where the session runs", () => {
    // Run inside the home, the same name is the memory folder.
    expect(ownToolCalls({ paths: FOLDERS }, HOME)("read", { filePath: "memories/MEMORY.md" })).toBe(true)
    expect(ownToolCalls({ paths: FOLDERS })("read", { filePath: "memories/MEMORY.md" })).toBe(false)
    // Without the home dir, the ~ form is not known to be the home.
    expect(ownToolCalls({ paths: FOLDERS })("read", { filePath: "~/.local/share/opencode/memories/MEMORY.md" })).toBe(false)
  })

  it("counts a search of the memory home, which reads the memory folders in it", () => {
    const withHome = ownToolCalls({ ...PATHS, paths: [HOME, ...FOLDERS] }, PROJECT)
    expect(withHome("bash", { command: "grep -rn deploy ~/.local/share/opencode" })).toBe(true)
    expect(withHome("grep", { pattern: "deploy", path: HOME })).toBe(true)
    expect(own("grep", { pattern: "deploy", path: HOME })).toBe(false)
    expect(withHome("bash", { command: "grep -rn deploy ~/.local/share" })).toBe(false)
  })

  it("lists exactly the tools the plugin can offer", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-own-tools-"))
    const memory = new Memory({ home }, { host: new FakeHost(), env: {}, homedir: home })
    onTestFinished(() => memory.dispose())
    await memory.start()
    // Use_memories, dedicated_tools and checkpoints are on by default: the largest tool set.
    expect(memory.tools().map((tool) => tool.name).sort()).toEqual([...MEMORY_TOOL_NAMES].sort())
  })
})

describe("ownToolLine", () => {
  it("names the tool and says why its result is left out", () => {
    expect(ownToolLine("memory_read")).toBe("[tool memory_read] (a memory tool: its result is memory's own text, left out so memory does not learn from itself)")
    expect(ownToolLine("read")).toBe("[tool read] (it read the memory folder: its result is memory's own text, left out so memory does not learn from itself)")
  })
})

describe("rendering memory's own tool calls", () => {
  const renderers = {
    renderTranscript: (messages: readonly TranscriptMessage[], options: { ownTool?: typeof own } = {}) => renderTranscript(messages, { maxTokens: 100_000, ...options }).text,
    selectEvidence: (messages: readonly TranscriptMessage[], options: { ownTool?: typeof own } = {}) => selectEvidence(messages, { budgetTokens: 250_000, ...options }).chunks.join(""),
  }

  for (const [name, render] of Object.entries(renderers)) {
    it(`${name} shows each such call as one line naming the tool, and keeps what the user and the assistant said`, () => {
      // Without the option, memory's text is copied: the rule below is what keeps it out.
      const plain = render(session())
      expect(plain).toContain("REMEMBERED-FACT deploys on Tuesdays")
      expect(plain).toContain("REMEMBERED-FACT via read")
      expect(plain).toContain(ROOT)

      const out = render(session(), { ownTool: own })
      expect(out).not.toContain("REMEMBERED-FACT")
      // Neither input is shown either.
      expect(out).not.toContain('"MEMORY.md"')
      expect(out).not.toContain(ROOT)
      // Each call is a block of its own, and that block is the one line.
      const toolBlocks = out.split("\n\n").filter((block) => block.includes("[tool "))
      expect(toolBlocks).toEqual([ownToolLine("memory_read"), ownToolLine("read")])
      for (const said of ["What do you remember about deploying acme-api?", "Let me check memory.", "Memory says it deploys on Tuesdays.", "Then deploy it today."]) {
        expect(out).toContain(said)
      }
    })

    it(`${name} still shows a tool call that did not read memory in full`, () => {
      const messages = [assistant(completed("bash", { command: "npm test" }, "PASS test/dates.test.ts"))]
      const out = render(messages, { ownTool: own })
      expect(out).toContain("npm test")
      expect(out).toContain("PASS test/dates.test.ts")
    })
  }
})
