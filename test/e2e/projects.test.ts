// One project however it is opened, on the real OpenCode 1.18.33: sessions in a repository's main
// checkout, in a linked worktree of it and in a subfolder produce records with one project key
// (OpenCode's project id, which 1.18.33 lists with each session), named by the remote without its
// credentials, and the rollout summaries and the consolidator's input (the workspace diff it reads
// through OpenCode's read tool) name that one project; a session in a folder outside any
// repository is a project of its own. The sandbox lives in the
// temp folder, which is never a project: OpenCode here gets a temp folder of its own (TMPDIR).
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diffDrivenConsolidator } from "./support/consolidator.js"
import { copyingExtractor } from "./support/facts.js"
import { FakeLlm } from "./support/fake-llm.js"
import { phase2Status, query } from "./support/memory-db.js"
import { createSandbox, defaultPluginSpec, repoRoot, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"
import { openCodeRemoteId } from "../write/phase1/repositories.js"

const HOUR = 3_600_000
// OpenCode's own project id of the repository (the hash of its origin), as 1.18.33 lists it on each session.
const appKey = `host:${openCodeRemoteId("git.example.com/acme/app")}`

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], { cwd, stdio: "ignore" })
}

describe("one project however it is opened, on a real OpenCode", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle | undefined
  let root: string
  const folders = { main: "", worktree: "", subfolder: "", loose: "" }
  const sessions: Record<string, string> = {}
  let consolidator: ReturnType<typeof diffDrivenConsolidator>

  beforeAll(async () => {
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [[defaultPluginSpec(), { max_rollouts_per_startup: 8 }]] })
    root = path.join(sandbox.memoryHome, "memories")
    const tmp = path.join(sandbox.root, "tmp")
    fs.mkdirSync(tmp)
    sandbox.env.TMPDIR = tmp
    const repos = path.join(sandbox.root, "repos")
    folders.main = path.join(repos, "app")
    fs.mkdirSync(folders.main, { recursive: true })
    git(folders.main, "init", "-q")
    fs.writeFileSync(path.join(folders.main, "README.md"), "app\n")
    git(folders.main, "add", ".")
    git(folders.main, "commit", "-qm", "first")
    git(folders.main, "remote", "add", "origin", "https://deploy:s3cr3t-pass@git.example.com/acme/app.git")
    folders.worktree = path.join(repos, "app-wt", "feature")
    git(folders.main, "worktree", "add", "-q", folders.worktree, "-b", "feature")
    folders.subfolder = path.join(folders.main, "packages", "web")
    fs.mkdirSync(folders.subfolder, { recursive: true })
    folders.loose = path.join(repos, "notes")
    fs.mkdirSync(folders.loose)

    llm.setStructuredHandler(copyingExtractor)
    consolidator = diffDrivenConsolidator(root)
    llm.setAgentHandler(consolidator.handler)
    // The sessions, while they are fresh.
    server = await startServe(sandbox)
    const facts: Record<keyof typeof folders, string> = {
      main: "FACT-MAIN: the api deploys with make ship",
      worktree: "FACT-WORKTREE: the feature branch needs a flag",
      subfolder: "FACT-WEB: the web package builds with vite",
      loose: "FACT-NOTES: standups are at nine",
    }
    for (const [where, fact] of Object.entries(facts) as Array<[keyof typeof folders, string]>) {
      const api = new ServerApi(server.url, folders[where])
      sessions[where] = (await api.createSession(where)).id
      await api.prompt(sessions[where]!, `Please remember: ${fact}`)
    }
    await server.stop()
    // Hours later: the next start learns from all four, and consolidates.
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(7 * HOUR)
    server = await startServe(sandbox)
    const api = new ServerApi(server.url, sandbox.projectDir)
    await api.prompt((await api.createSession("morning")).id, "good morning")
    await waitFor(() => phase2Status(sandbox) === "done" && query(sandbox, "SELECT 1 FROM stage1_outputs").length >= 4, {
      timeoutMs: 120_000,
      message: "the four sessions were not learned and consolidated",
      state: () => `${JSON.stringify(query(sandbox, "SELECT kind, job_key, status, last_error FROM jobs"))}\n${server?.stderr().split("\n").filter((line) => line.includes("codex-memory")).slice(-20).join("\n")}`,
    })
  }, 240_000)

  afterAll(async () => {
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  const records = () =>
    Object.fromEntries(
      query<{ session_id: string; cwd: string; project_key: string | null; project_name: string | null }>(sandbox, "SELECT session_id, cwd, project_key, project_name FROM stage1_outputs").map((row) => [row.session_id, row]),
    )

  it("stores one project key for the checkout, its worktree and its subfolder, named by the remote without credentials", () => {
    const byId = records()
    const inRepo = [sessions.main!, sessions.worktree!, sessions.subfolder!].map((id) => byId[id])
    expect(inRepo.map((row) => row?.cwd)).toEqual([folders.main, folders.worktree, folders.subfolder])
    const keys = new Set(inRepo.map((row) => row?.project_key))
    expect(keys).toEqual(new Set([appKey]))
    expect(inRepo.map((row) => row?.project_name)).toEqual(Array(3).fill("git.example.com/acme/app"))
    expect(byId[sessions.loose!]).toMatchObject({ project_key: `dir:${folders.loose}`, project_name: "notes" })
    expect(JSON.stringify(byId)).not.toContain("s3cr3t-pass")
  })

  it("names that one project in the rollout summaries and in the diff the consolidator read", () => {
    const key = appKey
    const summaries = fs.readdirSync(path.join(root, "rollout_summaries")).map((file) => fs.readFileSync(path.join(root, "rollout_summaries", file), "utf8"))
    expect(summaries).toHaveLength(4)
    const inRepo = summaries.filter((text) => /FACT-(MAIN|WORKTREE|WEB)/.test(text))
    expect(inRepo).toHaveLength(3)
    for (const text of inRepo) expect(text).toContain(`project: git.example.com/acme/app\nproject_key: ${key}\n`)
    expect(summaries.find((text) => text.includes("FACT-NOTES"))).toContain("project: notes\n")
    // The read tool numbers each line; the added lines of the diff follow the number.
    const diff = consolidator.runs[0]!.diff
    const added = (field: string) => [...diff.matchAll(new RegExp(`\\+${field}: (.*)$`, "gm"))].map((match) => match[1]!.trim())
    // Each session's section of raw_memories.md and its rollout summary: two keys, the repository's six times.
    expect(new Set(added("project_key"))).toEqual(new Set([key, `dir:${folders.loose}`]))
    expect(added("project_key").filter((value) => value === key)).toHaveLength(6)
    expect(new Set(added("project"))).toEqual(new Set(["git.example.com/acme/app", "notes"]))
    expect(diff).not.toContain("s3cr3t-pass")
  })

  it("lists the sessions by project, and finds a project's rollout summaries with the project filter", () => {
    const cli = (...args: string[]) =>
      JSON.parse(execFileSync(process.execPath, [path.join(repoRoot(), "dist", "src", "cli", "main.js"), ...args, "--home", sandbox.memoryHome], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: sandbox.home } })) as Record<string, unknown>
    const listed = (cli("sessions").sessions as Array<{ session_id: string; project: { name: string } | null }>).filter((s) => Object.values(sessions).includes(s.session_id))
    expect(listed.map((s) => s.project?.name).sort()).toEqual(["git.example.com/acme/app", "git.example.com/acme/app", "git.example.com/acme/app", "notes"])
    const found = cli("search", "FACT-", "--case-sensitive", "--project", "acme/app").matches as Array<{ text: string }>
    expect(found.map((m) => m.text.match(/FACT-[A-Z]+/)?.[0]).sort()).toEqual(["FACT-MAIN", "FACT-WEB", "FACT-WORKTREE"])
  })
})
