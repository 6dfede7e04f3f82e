// Memory exchange with the real Codex CLI (and a synthetic Claude Code home), end to end, offline.
//   1. Codex's own scripted phase 2 starts its memory with FACT-CODEX.
//   2. OpenCode learns FACT-DEPLOY from a session; its consolidation imports Codex's memory and a
//      Claude Code project's notes (FACT-CLAUDE) in the same run, then exports the result to Codex.
//      A new OpenCode session is shown FACT-CODEX and FACT-CLAUDE.
//   3. `codex exec` runs Codex's phase 2 on the export: its model reads our files (with the
//      `[from opencode]` rule) and writes them into Codex's memory, tagged.
//   4. Codex forgets FACT-CODEX; OpenCode's next consolidation forgets it too, and the tagged echo
//      of its own fact is not taken back as Codex's.
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diffDrivenConsolidator } from "./support/consolidator.js"
import { CODEX_VERSION, codexBinary, codexPhase2, createCodexHome, resetCodexPhase2, ScriptedCodexModel, shellJs, writeFileCmd, type CodexHome, type Phase2Script } from "./support/codex-cli.js"
import { FakeLlm, systemTexts } from "./support/fake-llm.js"
import { createSandbox, defaultPluginSpec, editConfig, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { phase2Status } from "./support/memory-db.js"

const HOUR = 3_600_000
const FACT_DEPLOY = "FACT-DEPLOY: acme ships with make ship on Tuesdays"
const FACT_CODEX = "FACT-CODEX: Rust tests run with cargo nextest"
const FACT_CLAUDE = "FACT-CLAUDE: the web app uses pnpm workspaces"

/** A V1 summary and handbook for Codex's side, holding `lines`. */
const codexSummary = (lines: string[]) => `v1\n## User Profile\nA developer.\n## User preferences\n${lines.map((l) => `- ${l}`).join("\n")}\n## General Tips\n## What's in Memory\n`
const codexHandbook = (lines: string[]) => `# Task Group: work\nscope: everything\n## Reusable knowledge\n${lines.map((l) => `- ${l}`).join("\n")}\n`

/** Codex's phase 2 in three steps: read what `read` names, write both files, finish. */
function codexConsolidator(read: string, lines: () => string[]): Phase2Script {
  return (request) => {
    const step = request.toolOutputs.length
    if (step === 0) return { type: "exec", js: shellJs(read) }
    if (step === 1) return { type: "exec", js: shellJs([writeFileCmd("memory_summary.md", codexSummary(lines())), writeFileCmd("MEMORY.md", codexHandbook(lines()))].join("\n")) }
    return { type: "message", text: "Consolidated." }
  }
}

describe("memory exchange with the real Codex CLI and a Claude Code home", () => {
  let llm: FakeLlm
  let codexModel: ScriptedCodexModel
  let sandbox: Sandbox
  let codex: CodexHome
  let server: ServeHandle | undefined
  let api: ServerApi
  let workDir: string
  const seen: {
    bootstrap?: { code: number | null }
    importedCopy?: string
    learned?: string
    shown?: string
    exportedSummary?: string
    codexReadOurs?: string
    codexMemory?: string
    forgotten?: string
    shownAfter?: string
  } = {}

  async function restartAt(offsetMs: number): Promise<void> {
    await server?.stop()
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(offsetMs)
    server = await startServe(sandbox)
    api = new ServerApi(server.url, sandbox.projectDir)
  }
  const ours = (file: string) => {
    const full = path.join(sandbox.memoryHome, "memories", file)
    return fs.existsSync(full) ? fs.readFileSync(full, "utf8") : ""
  }
  async function shownTo(title: string): Promise<string> {
    const before = llm.requests().length
    const session = (await api.createSession(title)).id
    await api.prompt(session, "what do you know about my projects?")
    const request = llm.requests().slice(before).find((r) => r.kind === "agent" && JSON.stringify(r.body.messages).includes("what do you know"))
    return systemTexts(request!.body).find((text) => text.includes("MEMORY SUMMARY BEGINS")) ?? ""
  }

  beforeAll(async () => {
    expect(execFileSync(codexBinary(), ["--version"], { encoding: "utf8" })).toContain(`codex-cli ${CODEX_VERSION}`)
    llm = await FakeLlm.start()
    codexModel = await ScriptedCodexModel.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [] })
    workDir = path.join(sandbox.root, "codex-work")
    fs.mkdirSync(workDir)
    codex = createCodexHome(path.join(sandbox.root, "codex-home"), codexModel.url, "v1")
    const claudeHome = path.join(sandbox.root, "claude")
    const project = path.join(claudeHome, "projects", "-work-web")
    fs.mkdirSync(path.join(project, "memory"), { recursive: true })
    fs.writeFileSync(path.join(project, "memory", "MEMORY.md"), `# web\n- ${FACT_CLAUDE}\n`)
    fs.writeFileSync(path.join(project, "7d1c.jsonl"), `${JSON.stringify({ type: "summary" })}\n${JSON.stringify({ cwd: sandbox.projectDir, type: "user" })}\n`)
    const options = { codex_interop: { import: true, export: true, codex_home: codex.dir }, claude_import: { enabled: true, claude_home: claudeHome } }
    editConfig(sandbox, (config) => {
      config.plugin = [[defaultPluginSpec(), options]]
    })

    // OpenCode's scripted model: an extractor for FACT-DEPLOY, and a consolidator acting on its
    // diff that passes over lines tagged [from opencode] (the echo rule).
    const root = path.join(sandbox.memoryHome, "memories")
    llm.setStructuredHandler((request) =>
      JSON.stringify(request.messages).includes(FACT_DEPLOY)
        ? { rollout_summary: `The user said how acme ships.\n${FACT_DEPLOY}`, raw_memory: `- ${FACT_DEPLOY}`, rollout_slug: "acme-ships" }
        : { rollout_summary: "", raw_memory: "", rollout_slug: "" },
    )
    llm.setAgentHandler(diffDrivenConsolidator(root, { skipTagged: "[from opencode]" }).handler)

    // 1. Codex starts its memory: its first phase 2 (a fresh home always has one) writes FACT-CODEX.
    codexModel.phase2 = codexConsolidator("ls -la", () => [FACT_CODEX])
    seen.bootstrap = await codexModel.exec(codex, "hello", workDir)
    expect(codexPhase2(codex)?.status).toBe("done")

    // 2. OpenCode learns, imports, consolidates, exports.
    await restartAt(0)
    const sessionA = (await api.createSession("deploy notes")).id
    await api.prompt(sessionA, `Please remember: ${FACT_DEPLOY}`)
    await restartAt(7 * HOUR)
    await api.prompt((await api.createSession("morning")).id, "good morning")
    await waitFor(() => [FACT_DEPLOY, FACT_CODEX, FACT_CLAUDE].every((fact) => ours("memory_summary.md").includes(fact)) && phase2Status(sandbox) === "done", {
      timeoutMs: 90_000,
      message: `OpenCode did not consolidate the three facts: ${ours("memory_summary.md")}`,
    })
    seen.learned = ours("MEMORY.md")
    seen.importedCopy = ours("extensions/codex_import/resources/codex/memory_summary.md")
    const exported = path.join(codex.memoryRoot, "extensions", "opencode_import", "resources", "opencode", "memory_summary.md")
    seen.exportedSummary = await waitFor(() => (fs.existsSync(exported) ? fs.readFileSync(exported, "utf8") : undefined), { timeoutMs: 15_000, message: "nothing was exported to Codex" })
    seen.shown = await shownTo("new task")

    // 3. Codex's phase 2 consolidates our export into its memory, tagged.
    resetCodexPhase2(codex)
    codexModel.phase2 = codexConsolidator(
      "cat extensions/opencode_import/instructions.md extensions/opencode_import/resources/opencode/MEMORY.md phase2_workspace_diff.md",
      () => [FACT_CODEX, `[from opencode] ${FACT_DEPLOY}`],
    )
    await codexModel.exec(codex, "hello again", workDir)
    seen.codexReadOurs = codexModel.requests.filter((r) => r.kind === "phase2").flatMap((r) => r.toolOutputs).join("\n")
    seen.codexMemory = fs.readFileSync(path.join(codex.memoryRoot, "MEMORY.md"), "utf8")

    // 4. Codex forgets FACT-CODEX (its user deleted it); OpenCode's next consolidation follows.
    for (const [file, text] of [["memory_summary.md", codexSummary([`[from opencode] ${FACT_DEPLOY}`])], ["MEMORY.md", codexHandbook([`[from opencode] ${FACT_DEPLOY}`])]]) {
      fs.writeFileSync(path.join(codex.memoryRoot, file!), text!)
    }
    await restartAt(14 * HOUR)
    await api.prompt((await api.createSession("later")).id, "hello")
    await waitFor(() => !ours("memory_summary.md").includes(FACT_CODEX) && phase2Status(sandbox) === "done", { timeoutMs: 90_000, message: `OpenCode did not forget FACT-CODEX\n${ours("memory_summary.md")}` })
    seen.forgotten = ours("MEMORY.md")
    seen.shownAfter = await shownTo("after forgetting")
  }, 300_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await codexModel?.close()
    await sandbox?.cleanup()
  })

  it("imports Codex's and Claude Code's memory into the consolidation that learned from OpenCode's session, and a new session is shown them", () => {
    expect(seen.learned).toContain(FACT_DEPLOY)
    expect(seen.learned).toContain(FACT_CODEX)
    expect(seen.learned).toContain(FACT_CLAUDE)
    expect(seen.shown).toContain(FACT_CODEX)
    expect(seen.shown).toContain(FACT_CLAUDE)
    const imported = path.join(sandbox.memoryHome, "memories", "extensions")
    expect(seen.importedCopy).toContain(FACT_CODEX)
    expect(JSON.parse(fs.readFileSync(path.join(imported, "external_agent_import", "resources", "-work-web", "scope.json"), "utf8"))).toEqual({ cwd: fs.realpathSync(sandbox.projectDir) })
  })

  it("exports OpenCode's memory to Codex, and Codex's own phase 2 reads it with the [from opencode] rule and keeps it tagged", () => {
    expect(seen.exportedSummary).toContain(FACT_DEPLOY)
    expect(seen.codexReadOurs).toContain(FACT_DEPLOY)
    expect(seen.codexReadOurs).toContain("Tag every entry you derive from them with `[from opencode]`")
    expect(seen.codexMemory).toContain(`[from opencode] ${FACT_DEPLOY}`)
    expect(codexPhase2(codex)?.status).toBe("done")
    // Only the one extension folder was written in Codex's memory; its baseline and databases are Codex's.
    expect(fs.readdirSync(path.join(codex.memoryRoot, "extensions")).sort()).toEqual(["ad_hoc", "opencode_import"])
  })

  it("forgets what Codex forgot at the next consolidation, and takes no echo of its own memory back as Codex's", () => {
    expect(seen.forgotten).not.toContain(FACT_CODEX)
    expect(seen.forgotten).toContain(FACT_DEPLOY)
    expect(seen.forgotten).not.toContain("[from opencode]")
    expect(seen.shownAfter).not.toContain(FACT_CODEX)
    expect(seen.shownAfter).toContain(FACT_CLAUDE)
  })
})
