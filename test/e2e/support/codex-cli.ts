// The real Codex CLI (`@openai/codex`, fetched pinned on first use) as a test partner, offline: a
// CODEX_HOME of its own whose provider is a scripted Responses server on 127.0.0.1
// (ScriptedCodexModel below), and `codex exec` runs against it.
//
// Facts this relies on (codex-cli 0.171.0, checked on the binary): only `POST /v1/responses`
// with SSE is called; a reply is `response.created`, one `response.output_item.done` per item,
// `response.completed`. Memory phase 2 runs in the background on every root turn when Codex's
// memory workspace differs from its baseline (6 h cooldown after a success, reset by deleting its
// job row); its requests carry `x-openai-memgen-request: true`, and its one tool `exec` is a
// custom tool whose input is JavaScript calling `tools.exec_command({cmd})`, run with the memory
// folder as cwd and the only writable place. `codex exec` exits when its main turn ends, and
// Codex validates the consolidation up to about a second after the model's last reply, so the
// main reply is held until the job row has left `running`.
import { spawn } from "node:child_process"
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { createRequire } from "node:module"
import { CODEX_VERSION, ensureCodex as codexBinary } from "../../../scripts/test-partners.js"

const require = createRequire(import.meta.url)


// The pinned CLI's version, and its launcher (scripts/test-partners.ts), fetched on first use.
export { CODEX_VERSION, codexBinary }

/** Codex's memory version for a test home: V1 keeps `memories/` (Codex 0.171 defaults to V2, `memories_v2/`). */
export type CodexMemoryVersion = "v1" | "v2"

export interface CodexHome {
  dir: string
  memoryVersion: CodexMemoryVersion
  memoryRoot: string
  database: string
}

export function createCodexHome(dir: string, modelUrl: string, memoryVersion: CodexMemoryVersion = "v1"): CodexHome {
  fs.mkdirSync(dir, { recursive: true })
  const config = [
    'model = "fake-model"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    "",
    "[model_providers.fake]",
    'name = "fake"',
    `base_url = "${modelUrl}"`,
    'env_key = "FAKE_CODEX_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
    "[features]",
    "memories = true",
    "",
    "[memories]",
    "generate_memories = true",
    "use_memories = true",
    `version = "${memoryVersion}"`,
    "",
  ].join("\n")
  fs.writeFileSync(path.join(dir, "config.toml"), config)
  const suffix = memoryVersion === "v1" ? "" : "_v2"
  return { dir, memoryVersion, memoryRoot: path.join(dir, `memories${suffix}`), database: path.join(dir, `memories${suffix}_1.sqlite`) }
}

/** Codex's global consolidation job, read straight from its database (undefined before its first run). */
export function codexPhase2(home: CodexHome): { status: string; last_error: string | null } | undefined {
  if (!fs.existsSync(home.database)) return undefined
  const Database = require("better-sqlite3") as typeof import("better-sqlite3")
  const db = new Database(home.database, { readonly: true, fileMustExist: true })
  try {
    return db.prepare("SELECT status, last_error FROM jobs WHERE kind = 'memory_consolidate_global'").get() as { status: string; last_error: string | null } | undefined
  } finally {
    db.close()
  }
}

/** Ends Codex's consolidation cooldown, so the next `codex exec` consolidates again if anything changed. */
export function resetCodexPhase2(home: CodexHome): void {
  if (!fs.existsSync(home.database)) return
  const Database = require("better-sqlite3") as typeof import("better-sqlite3")
  const db = new Database(home.database, { fileMustExist: true })
  try {
    db.prepare("DELETE FROM jobs WHERE kind = 'memory_consolidate_global'").run()
  } finally {
    db.close()
  }
}

export async function codexExec(home: CodexHome, prompt: string, cwd: string, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: path.dirname(home.dir), CODEX_HOME: home.dir, FAKE_CODEX_KEY: "fake" }
  const child = spawn(codexBinary(), ["exec", "--skip-git-repo-check", prompt], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** One output item of a scripted reply. */
export type CodexItem = { type: "message"; text: string } | { type: "exec"; js: string }

/** The scripted phase 2: called with the conversation so far; returns the next item. */
export type Phase2Script = (request: CodexRequest) => CodexItem

export interface CodexRequest {
  kind: "main" | "phase2" | "other"
  headers: http.IncomingHttpHeaders
  body: { input?: Array<Record<string, unknown>>; [key: string]: unknown }
  /** The text of every tool output returned so far in this conversation, in order. */
  toolOutputs: string[]
}

/** A Responses-API server that plays Codex's model: phase 2 by script, main turns held until phase 2 is over. */
export class ScriptedCodexModel {
  readonly requests: CodexRequest[] = []
  phase2: Phase2Script = () => ({ type: "message", text: "Nothing to consolidate." })
  private home: CodexHome | undefined
  private phase2Seen = false

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<ScriptedCodexModel> {
    const server = http.createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    const model = new ScriptedCodexModel(server)
    server.on("request", (req, res) => void model.handle(req, res))
    return model
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`
  }

  /** The home whose consolidation job decides when a main turn may end. */
  watch(home: CodexHome): void {
    this.home = home
  }

  /** Runs `codex exec` and returns once it exited; phase 2, if any, has then ended too. */
  async exec(home: CodexHome, prompt: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    this.watch(home)
    this.phase2Seen = false
    return codexExec(home, prompt, cwd)
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let raw = ""
    for await (const chunk of req) raw += chunk
    const body = (raw ? JSON.parse(raw) : {}) as CodexRequest["body"]
    const memgen = req.headers["x-openai-memgen-request"] === "true"
    const prompt = JSON.stringify(body.input ?? [])
    const kind: CodexRequest["kind"] = memgen && /Memory Writing Agent: Phase 2|Consolidate the supplied rollout summaries/.test(prompt) ? "phase2" : memgen ? "other" : "main"
    const toolOutputs = (body.input ?? [])
      .filter((item) => item.type === "custom_tool_call_output")
      .map((item) => (Array.isArray(item.output) ? (item.output as Array<{ text?: string }>).map((part) => part.text ?? "").join("") : String(item.output ?? "")))
    const request: CodexRequest = { kind, headers: req.headers, body, toolOutputs }
    this.requests.push(request)
    if (kind === "phase2") {
      this.phase2Seen = true
      return sse(res, [toItem(this.phase2(request), this.requests.length)])
    }
    if (kind === "main") await this.holdForPhase2()
    sse(res, [toItem({ type: "message", text: kind === "main" ? "Done." : "{}" }, this.requests.length)])
  }

  /** Until the consolidation job has left `running`, or no consolidation started within 2 s. */
  private async holdForPhase2(): Promise<void> {
    const started = Date.now()
    while (!this.phase2Seen && Date.now() - started < 2_000) await sleep(50)
    if (!this.phase2Seen || !this.home) return
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const job = safe(() => codexPhase2(this.home!))
      if (job && job.status !== "running") return
      await sleep(100)
    }
  }
}

function toItem(item: CodexItem, n: number): Record<string, unknown> {
  if (item.type === "exec") return { type: "custom_tool_call", id: `ctc_${n}`, call_id: `call_${n}`, name: "exec", input: item.js }
  return { type: "message", role: "assistant", id: `msg_${n}`, content: [{ type: "output_text", text: item.text }] }
}

function sse(res: http.ServerResponse, items: Array<Record<string, unknown>>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const id = `resp_${Math.random().toString(36).slice(2)}`
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  send("response.created", { response: { id } })
  for (const item of items) send("response.output_item.done", { item })
  send("response.completed", { response: { id, usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 } } })
  res.end()
}

/** JavaScript for Codex's `exec` tool: run one shell command in the memory folder and return its output. */
export function shellJs(cmd: string): string {
  return `const r = await tools.exec_command({cmd: ${JSON.stringify(cmd)}});\ntext(r.output);`
}

/** A shell command writing `text` to `file` (a heredoc, so any text goes through unchanged). */
export function writeFileCmd(file: string, text: string): string {
  return `cat > ${file} <<'CODEX_TEST_EOF'\n${text.endsWith("\n") ? text : `${text}\n`}CODEX_TEST_EOF`
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn()
  } catch {
    return undefined
  }
}
