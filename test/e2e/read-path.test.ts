// Read path, end to end: the real OpenCode binary loads the built plugin (dist/src/index.js), and a fake
// LLM records what OpenCode sends. We check that the memory summary reaches the model's system prompt,
// stays byte-identical across calls, stays out of title requests, and that plugin errors fail open.
import { existsSync } from "node:fs"
import { describe, it, expect, beforeAll, afterAll } from "vitest"
import { FakeLlm, systemTexts, lastUserText } from "./support/fake-llm.js"
import type { LoggedRequest } from "./support/fake-llm.js"
import {
  builtPluginPath,
  createSandbox,
  parseJsonEvents,
  runOpencode,
  seedSummary,
} from "./support/opencode.js"
import type { RunResult, Sandbox } from "./support/opencode.js"

const HEADING = "## Memory"
const BEGINS = "----- MEMORY SUMMARY BEGINS -----"
const ENDS = "----- MEMORY SUMMARY ENDS -----"

// Markdown, non-ASCII, `$&`/`$1` (special in String.replace) and an inner line with trailing spaces:
// all of it must arrive verbatim.
const UNIQUE = "ZEBRA-42-read-path"
// The first line is the "v1" the read path requires of a V1 summary before it injects one.
const SUMMARY = [
  "v1",
  "# Memory summary",
  `- Project codename: ${UNIQUE} (Æøå ✓ 日本).`,
  "- Build with `npm run build`; costs $& and $1 are literal.",
  "    indented line with trailing spaces   ",
  "- Last line.",
].join("\n")

// ---------------------------------------------------------------------------------------------
// Helpers

function agentRequests(requests: LoggedRequest[]): LoggedRequest[] {
  return requests.filter((r) => r.kind === "agent")
}

/** Every memory block in a request: each system text holding the BEGINS line, from the heading on. */
function memoryBlocks(request: LoggedRequest): string[] {
  return systemTexts(request.body)
    .filter((text) => text.includes(BEGINS))
    .map((text) => text.slice(Math.max(0, text.indexOf(HEADING))))
}

/** The single memory block of a request; fails the test if there is not exactly one. */
function onlyBlock(request: LoggedRequest): string {
  const blocks = memoryBlocks(request)
  expect(blocks, "exactly one memory block per agent request").toHaveLength(1)
  return blocks[0] ?? ""
}

/** The text between the BEGINS line and the ENDS line of a block. */
function summaryBetweenMarkers(block: string): string {
  const start = block.indexOf(`${BEGINS}\n`)
  const end = block.indexOf(`\n${ENDS}`)
  expect(start, "BEGINS line present").toBeGreaterThanOrEqual(0)
  expect(end, "ENDS line after BEGINS").toBeGreaterThan(start)
  return block.slice(start + BEGINS.length + 1, end)
}

/** Nothing memory-related anywhere in a request's system messages. */
function expectNoMemory(request: LoggedRequest): void {
  const system = systemTexts(request.body).join("\n")
  expect(system).not.toContain(BEGINS)
  expect(system).not.toContain(ENDS)
  expect(system).not.toContain(UNIQUE)
  expect(system).not.toContain(HEADING)
}

function expectSuccess(result: RunResult): void {
  const why = `opencode run (code ${result.code}, ${result.ms} ms, timedOut ${result.timedOut})\n${result.stderr.slice(-3000)}`
  expect(result.timedOut, why).toBe(false)
  expect(result.code, why).toBe(0)
}

/** The assistant texts that `opencode run --format json` printed. */
function printedTexts(result: RunResult): string[] {
  return parseJsonEvents(result.stdout)
    .filter((e) => e["type"] === "text")
    .map((e) => {
      const part = e["part"] as { text?: unknown } | undefined
      return typeof part?.text === "string" ? part.text : ""
    })
}

// ---------------------------------------------------------------------------------------------

describe("read path: memory summary in the system prompt", () => {
  let llm: FakeLlm

  beforeAll(async () => {
    if (!existsSync(builtPluginPath())) {
      throw new Error(`the plugin is not built (${builtPluginPath()} is missing): run \`npm run build\` first`)
    }
    llm = await FakeLlm.start()
  })

  afterAll(async () => {
    await llm?.close()
  })

  describe("with a seeded summary", () => {
    let sandbox: Sandbox
    const firstPrompt = "first turn: please look at the config file"
    let firstRun: RunResult
    let secondRun: RunResult
    let firstTurn: LoggedRequest[] = []
    let secondTurn: LoggedRequest[] = []

    beforeAll(async () => {
      sandbox = await createSandbox({ llmUrl: llm.url })
      await seedSummary(sandbox, `${SUMMARY}\n`)

      // Turn 1: the model calls a tool, so the agent makes two LLM calls in the same turn. The read
      // tool: OpenCode's glob and grep fetch ripgrep from GitHub when the machine has none.
      llm.reset()
      llm.script({ toolCalls: [{ name: "read", arguments: { filePath: `${sandbox.projectDir}/opencode.json` } }] })
      firstRun = await runOpencode(sandbox, firstPrompt)
      firstTurn = llm.requests()

      // Turn 2: a new user message in the same session.
      llm.reset()
      secondRun = await runOpencode(sandbox, "second turn", { args: ["--continue"] })
      secondTurn = llm.requests()
    })

    afterAll(async () => {
      await sandbox?.cleanup()
    })

    it("(a) puts the summary verbatim into the agent's system messages", () => {
      expectSuccess(firstRun)
      const agent = agentRequests(firstTurn)
      expect(agent.length, "tool call + follow-up = two agent LLM calls").toBe(2)

      for (const request of agent) {
        const system = systemTexts(request.body)
        // OpenCode sends its own prompt first and the pushed block as a second system message.
        expect(system).toHaveLength(2)
        const block = onlyBlock(request)
        expect(system[1]).toBe(block)
        expect(block.startsWith(HEADING)).toBe(true)
        expect(summaryBetweenMarkers(block)).toBe(SUMMARY)
        expect(system[0]).not.toContain(UNIQUE)
      }
    })

    it("(b) sends a byte-identical block on consecutive calls and turns", () => {
      expectSuccess(firstRun)
      expectSuccess(secondRun)
      const turn1 = agentRequests(firstTurn)
      const turn2 = agentRequests(secondTurn)
      expect(turn1.length).toBe(2)
      expect(turn2.length).toBe(1)
      // The second run really continued the session: its history holds turn 1.
      const history = JSON.stringify(turn2[0]?.body.messages ?? [])
      expect(history).toContain(firstPrompt)
      expect(lastUserText(turn2[0]!.body)).toBe("second turn")

      const blocks = [...turn1, ...turn2].map(onlyBlock)
      const reference = Buffer.from(blocks[0] ?? "", "utf8")
      expect(reference.length).toBeGreaterThan(SUMMARY.length)
      for (const block of blocks.slice(1)) expect(Buffer.from(block, "utf8").equals(reference)).toBe(true)
    })

    it("(d) keeps the block out of title requests", () => {
      expectSuccess(firstRun)
      const titles = firstTurn.filter((r) => r.kind === "title")
      expect(titles, "a new session's first turn asks for a title").toHaveLength(1)
      const title = titles[0]!
      expectNoMemory(title)
      expect(systemTexts(title.body)).toHaveLength(1)
      // ...while the agent request of the same run has it.
      expect(memoryBlocks(agentRequests(firstTurn)[0]!)).toHaveLength(1)
    })
  })

  it.each([
    ["whitespace only", " \n\t\n  \n" as string | undefined],
    ["missing", undefined],
  ])("(c) adds no block when the summary is %s", async (_label, content) => {
    const sandbox = await createSandbox({ llmUrl: llm.url })
    try {
      if (content !== undefined) await seedSummary(sandbox, content)
      llm.reset()
      const result = await runOpencode(sandbox, "hello without memory")
      expectSuccess(result)

      const agent = agentRequests(llm.requests())
      expect(agent).toHaveLength(1)
      for (const request of llm.requests()) expectNoMemory(request)
      // Not even an empty extra system message.
      expect(systemTexts(agent[0]!.body)).toHaveLength(1)
    } finally {
      await sandbox.cleanup()
    }
  })

  it("(e) a plugin error does not fail the user's run", async () => {
    const sandbox = await createSandbox({
      llmUrl: llm.url,
      env: { OPENCODE_CODEX_MEMORY_TEST_FAULTS: "experimental.chat.system.transform,chat.message,event,config" },
    })
    try {
      await seedSummary(sandbox, `${SUMMARY}\n`)
      llm.reset()
      const result = await runOpencode(sandbox, "hello with a broken plugin")
      expectSuccess(result)

      const agent = agentRequests(llm.requests())
      expect(agent, "the agent request still reached the LLM").toHaveLength(1)
      expect(lastUserText(agent[0]!.body)).toBe("hello with a broken plugin")
      for (const request of llm.requests()) expectNoMemory(request)
      expect(printedTexts(result)).toContain("FAKE-REPLY #1")
      // The plugin did load: its guard caught the injected fault and logged it through OpenCode.
      expect(result.stderr).toContain("injected fault in experimental.chat.system.transform")
    } finally {
      await sandbox.cleanup()
    }
  })
})
