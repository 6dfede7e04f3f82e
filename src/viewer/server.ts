// `opencode-codex-memory ui`: a local web viewer of a memory home. Hono routes each page to the
// command-line tool's own commands (the same JSON contract, the same code paths for every change)
// and renders the answer (pages.ts). Every request passes security.ts first; nothing is served
// from a path the request names except the memory folder's own Markdown, through the memory
// backend's path rules (relative only, no "..", no symlink, no dot-file), and no database file.
// Every string a page shows of memory or the databases (text, titles, names, paths) goes through
// the redactor first (`shown`): the plugin writes them redacted, but a hand edit may not be.
import fs from "node:fs"
import http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import path from "node:path"
import { getRequestListener } from "@hono/node-server"
import { Hono, type Context } from "hono"
import { MemoryError } from "../backend/errors.js"
import { listNotes } from "../backend/notes.js"
import { readFileNoFollow, resolveMemoryEntry } from "../backend/safe-path.js"
import { parseCommand } from "../cli/args.js"
import type { Command, CommandResult } from "../cli/command.js"
import { forgetCommand, modeCommand, pause, resetCommand, resume } from "../cli/commands/control.js"
import { notesCommand } from "../cli/commands/notes.js"
import { recallCommand, viewCommand } from "../cli/commands/records.js"
import { searchCommand } from "../cli/commands/search.js"
import { sessionsCommand } from "../cli/commands/sessions.js"
import { statusCommand } from "../cli/commands/status.js"
import { CliError } from "../cli/errors.js"
import { withHome, type CliEnv } from "../cli/home.js"
import { READ_PATH } from "../constants.js"
import { redactDeep, redactText } from "../redact/redact.js"
import { packageRoot } from "../util/package-root.js"
import { html, query, type Part } from "./html.js"
import { markdownRenderer } from "./markdown.js"
import * as pages from "./pages.js"
import { SECURITY_HEADERS, ViewerSecurity } from "./security.js"

export interface ViewerOptions {
  cli: CliEnv
  /** The `--home` the command was given, if any. */
  home?: string
  /** 0 (the default) lets the system pick a free port. */
  port?: number
}

export interface RunningViewer {
  /** The address to open: it carries the run's token. */
  url: string
  port: number
  close(): Promise<void>
}

/** Largest memory file a page renders; the tools page through larger ones. */
const MAX_PAGE_BYTES = 2 * 1024 * 1024
// Never starting with "-": an id reaches the CLI's parser (after "--" too, but a flag-like id is no id).
const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9_#-]{0,159}$/
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** Deep enough for every answer a page renders (status nests five levels). */
const SHOWN_DEPTH = 16

/** What a page may show of a value from memory or the databases: every string in it redacted. */
function shown<T>(value: T): T {
  return redactDeep(value, SHOWN_DEPTH) as T
}

export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const markdown = markdownRenderer()
  const css = fs.readFileSync(path.join(options.cli.packageDir ?? packageRoot(), "templates", "viewer", "viewer.css"), "utf8")
  // Known once the socket listens; every request is checked against it.
  const holder: { security?: ViewerSecurity } = {}
  const homeArgs = options.home !== undefined ? ["--home", options.home] : []

  /** A command of the CLI, run in this process: its answer (JSON, and the text `--text` prints). */
  const run = (async (command: Command, argv: readonly string[]) => {
    // --home first: user text after a "--" in argv must not be read as flags, nor hide this one.
    const args = parseCommand([...homeArgs, ...argv], command.flags, { ...command.positionals, usage: command.usage })
    return command.run({ cli: options.cli, args, readInput: async () => Promise.reject(new CliError("usage", "the viewer reads no input")) })
  }) satisfies RunResult
  /** Its JSON answer alone. */
  const json = async <T>(command: Command, argv: readonly string[]): Promise<T> => (await run(command, argv)).json as T

  const app = new Hono()
  app.use("*", async (c, next) => {
    const security = holder.security
    const url = new URL(c.req.url)
    const verdict = security
      ? security.check({
          method: c.req.method,
          url,
          host: c.req.header("host"),
          origin: c.req.header("origin"),
          secFetchSite: c.req.header("sec-fetch-site"),
          cookie: c.req.header("cookie"),
        })
      : ({ ok: false, status: 403, reason: "not ready" } as const)
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value)
    if (!verdict.ok) return c.text(verdict.reason, verdict.status)
    if (verdict.setCookie) {
      c.header("Set-Cookie", verdict.setCookie)
      return c.redirect(verdict.redirect ?? "/", 303)
    }
    await next()
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value)
  })

  const versionOf = (c: Context): pages.Version => (c.req.query("version") === "v2" ? "v2" : "v1")
  const ctxOf = (c: Context): pages.PageContext => ({ version: versionOf(c), markdown })
  const page = (c: Context, body: string, status: 200 | 400 | 403 | 404 | 409 | 500 = 200) => c.html(body, status)

  app.get("/assets/viewer.css", (c) => c.body(css, 200, { "Content-Type": "text/css; charset=utf-8" }))

  app.get("/", async (c) => page(c, pages.overviewPage(ctxOf(c), shown(await json(statusCommand, [])), READ_PATH.SUMMARY_TOKEN_LIMIT)))

  app.get("/summary", async (c) => {
    const ctx = ctxOf(c)
    const view = await json<{ injected: boolean; block: string | null; summary_file: string }>(viewCommand, ["--version", ctx.version])
    const status = await json<{ report: { versions: Array<{ version: string; summary?: { bytes: number; estimatedTokens: number; capped: boolean } }> } }>(statusCommand, [])
    return page(c, pages.summaryPage(ctx, shown(view), status.report.versions.find((v) => v.version === ctx.version)?.summary, READ_PATH.SUMMARY_TOKEN_LIMIT))
  })

  app.get("/memory", async (c) => {
    const ctx = ctxOf(c)
    const skill = c.req.query("skill")
    return withHome(options.cli, options.home, async (home) => {
      // Memory as it stands: while a consolidation is unfinished, its copy of the folder, never its output.
      const root = home.memory.pipeline(ctx.version).readableRoot()
      const skills = listSkills(root)
      // A folder named like a secret is listed by its redacted name, without a link that would carry it.
      const aside = pages.skillsList(ctx, skills.map((name) => ({ label: redactText(name), ...(redactText(name) === name ? { skill: name } : {}) })))
      const show = (title: string, file: string) => {
        const read = readMemoryFile(root, file)
        if ("refused" in read) return page(c, pages.errorPage(ctx, 404, shown(read.refused)), 404)
        return page(c, pages.markdownPage(ctx, shown(title), "/memory", shown(file), read.text, aside))
      }
      if (skill !== undefined) {
        if (!SKILL_NAME.test(skill) || !skills.includes(skill)) return page(c, pages.errorPage(ctx, 404, shown(`no skill ${JSON.stringify(skill)}`)), 404)
        return show(`Skill: ${skill}`, `skills/${skill}/SKILL.md`)
      }
      return show(ctx.version === "v1" ? "Handbook (MEMORY.md)" : "Recap (V2 keeps no handbook)", ctx.version === "v1" ? "MEMORY.md" : "memory_summary.md")
    })
  })

  app.get("/sessions", async (c) => {
    const ctx = ctxOf(c)
    return page(c, pages.sessionsPage(ctx, shown(await json(sessionsCommand, ["--version", ctx.version, "--limit", "1000"]))))
  })

  app.get("/session", async (c) => {
    const ctx = ctxOf(c)
    const id = c.req.query("id") ?? ""
    if (!SESSION_ID.test(id)) return page(c, pages.errorPage(ctx, 400, notSessionId(id)), 400)
    return page(c, pages.sessionPage(ctx, shown(await json(recallCommand, ["--", id]))))
  })

  app.get("/history", async (c) => {
    const ctx = ctxOf(c)
    const reviews = await withHome(options.cli, options.home, async (home) => home.memory.catalog.reviews?.list(20, ctx.version) ?? [])
    return page(c, pages.historyPage(ctx, shown(reviews)))
  })

  app.get("/cost", async (c) => {
    const status = await json<{ report: { spend?: { byDay: Array<{ day: string; phase: string; tokens: number; cost: number; sessions: number }> } } }>(statusCommand, [])
    return page(c, pages.costPage(ctxOf(c), shown(status.report.spend?.byDay ?? [])))
  })

  app.get("/jobs", async (c) => page(c, pages.jobsPage(ctxOf(c), shown(await json(statusCommand, [])))))

  app.get("/search", async (c) => {
    const ctx = ctxOf(c)
    const q = (c.req.query("q") ?? "").slice(0, 500)
    const mode = ["ranked", "any", "all_on_same_line", "all_within_lines"].includes(c.req.query("mode") ?? "") ? c.req.query("mode")! : "ranked"
    if (!q.trim()) return page(c, pages.searchPage(ctx, { q, mode }))
    try {
      // The query last, after "--": `-rf` or `--help` is text to search for, not a flag.
      const argv = ["--mode", mode, "--version", ctx.version, ...(mode === "all_within_lines" ? ["--lines", "3"] : []), "--", q]
      const answer = shown(await json<{ matches: Array<{ path: string; line: number; end_line: number; text: string; score?: number; record?: { session_id: string; field: string } }>; unconsolidated?: Array<{ session_id: string; field: string; line: number; text: string }> }>(searchCommand, argv))
      const results = [
        ...answer.matches.map((m) =>
          m.record
            ? { where: `record of ${m.record.session_id} (not consolidated yet), ${m.record.field}`, href: `/session${query({ version: ctx.version, id: m.record.session_id })}`, text: m.text, ...(m.score !== undefined ? { score: m.score } : {}) }
            : { where: `${m.path}:${m.line}${m.end_line > m.line ? `-${m.end_line}` : ""}`, ...(fileHref(ctx.version, m.path) ? { href: fileHref(ctx.version, m.path)! } : {}), text: m.text, ...(m.score !== undefined ? { score: m.score } : {}) },
        ),
        ...(answer.unconsolidated ?? []).map((m) => ({ where: `record of ${m.session_id} (not consolidated yet), ${m.field}:${m.line}`, href: `/session${query({ version: ctx.version, id: m.session_id })}`, text: m.text })),
      ]
      return page(c, pages.searchPage(ctx, { q, mode, results }))
    } catch (error) {
      if (error instanceof CliError) return page(c, pages.searchPage(ctx, { q, mode, error: shown(error.message) }), 400)
      throw error
    }
  })

  app.get("/controls", async (c) => {
    const ctx = ctxOf(c)
    const status = await json<{ learning: { paused: boolean } }>(statusCommand, [])
    const notes = await json<{ notes: Array<{ path: string; title: string }> }>(notesCommand, ["--version", ctx.version])
    return page(c, pages.controlsPage(ctx, { paused: status.learning.paused, notes: shown(notes.notes) }))
  })

  // ---- Changes: a preview whose form carries a one-time token bound to what it showed. --------

  const actions = actionTable(json, run)
  app.get("/action/:name", async (c) => {
    const ctx = ctxOf(c)
    const action = actions[c.req.param("name")]
    if (!action) return page(c, pages.errorPage(ctx, 404, "no such action"), 404)
    const params = action.params(Object.fromEntries(new URL(c.req.url).searchParams))
    if ("error" in params) return page(c, pages.errorPage(ctx, 400, params.error), 400)
    const state = await action.state(params.values, ctx.version)
    const token = holder.security!.issueAction(`${c.req.param("name")}:${JSON.stringify(params.values)}:${ctx.version}`, state.fingerprint)
    return page(c, pages.previewPage(ctx, { title: shown(action.title(params.values)), action: c.req.param("name"), params: params.values, lines: state.lines, token, danger: action.danger ?? false }))
  })
  app.post("/action/:name", async (c) => {
    const ctx = ctxOf(c)
    const action = actions[c.req.param("name")]
    if (!action) return page(c, pages.errorPage(ctx, 404, "no such action"), 404)
    const form = await c.req.parseBody()
    const fields = Object.fromEntries(Object.entries(form).filter((entry): entry is [string, string] => typeof entry[1] === "string"))
    const version: pages.Version = fields.version === "v2" ? "v2" : "v1"
    const pctx = { ...ctx, version }
    const params = action.params(fields)
    if ("error" in params) return page(c, pages.errorPage(pctx, 400, params.error), 400)
    const state = await action.state(params.values, version)
    const redeemed = holder.security!.redeemAction(fields.token, `${c.req.param("name")}:${JSON.stringify(params.values)}:${version}`, state.fingerprint)
    if (redeemed === "unknown") return page(c, pages.donePage(pctx, "Not done", "This change was not previewed here, or its preview was already used or is too old. Open it again to see what it would change.", false), 403)
    if (redeemed === "stale") return page(c, pages.donePage(pctx, "Not done", "Memory changed since this preview was shown; nothing was changed. Open the change again to see what it would do now.", false), 409)
    try {
      const message = await action.apply(params.values, version)
      return page(c, pages.donePage(pctx, "Done", shown(message), true))
    } catch (error) {
      if (error instanceof CliError) return page(c, pages.donePage(pctx, "Not done", shown(error.message), false), 409)
      throw error
    }
  })

  app.notFound((c) => page(c, pages.errorPage(ctxOf(c), 404, "There is no such page."), 404))
  app.onError((error, c) => {
    const status = error instanceof CliError && ["no_home", "not_found"].includes(error.code) ? 404 : 500
    return page(c, pages.errorPage(ctxOf(c), status, shown(error instanceof CliError ? error.message : `the viewer failed: ${(error as Error).message}`)), status)
  })

  const server = await listen(app, options.port ?? 0)
  const port = (server.address() as AddressInfo).port
  holder.security = new ViewerSecurity(`127.0.0.1:${port}`, options.cli.now ?? Date.now)
  return {
    url: holder.security.entryUrl(),
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // A browser keeps its connections open; the viewer stopping ends them rather than waiting.
        server.closeAllConnections()
      }),
  }
}

function listen(app: Hono, port: number): Promise<http.Server> {
  const handle = getRequestListener(app.fetch, { hostname: "127.0.0.1" })
  const server = http.createServer((req, res) => {
    // Set before any answer is written, so also the adapter's own (a 400 for a request it cannot
    // turn into a URL, a 500) carries them: writeHead merges its headers into these.
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value)
    void handle(req, res)
  })
  // What node's parser refuses (malformed, headers too large) never reaches a handler; its
  // default answer would carry none of the headers, so this one is written whole here.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => refuseMalformed(error, socket))
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve(server))
  })
}

/** The answer to a request node's HTTP parser refused, with every security header. */
function refuseMalformed(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400
  const body = `${http.STATUS_CODES[status]}: the viewer could not read this request\n`
  const headers = { ...SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)), Connection: "close" }
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n${body}`)
}

/** Why an id is refused: said plainly, redacted like anything else a page shows. */
function notSessionId(id: string): string {
  return shown(`not a session id: ${JSON.stringify(id.slice(0, 200))} (ids are letters, digits, "_", "-" and "#", and start with a letter, digit or "_")`)
}

/** The link to a memory file the viewer renders, if it renders that one. */
function fileHref(version: string, file: string): string | undefined {
  if (file === "MEMORY.md" || file === "memory_summary.md") return `/memory${query({ version })}`
  const skill = /^skills\/([^/]+)\/SKILL\.md$/.exec(file)?.[1]
  return skill ? `/memory${query({ version, skill })}` : undefined
}

/**
 * A memory file's text through the backend's path rules (`text` undefined when it does not
 * exist), or why the rules refused it (a symlink, say): the viewer's answer, not its failure.
 */
function readMemoryFile(root: string, relative: string): { text: string | undefined } | { refused: string } {
  try {
    const entry = resolveMemoryEntry(root, relative)
    if (!entry.stat.isFile()) return { text: undefined }
    if (entry.stat.size > MAX_PAGE_BYTES) return { text: `(${entry.stat.size} bytes: too large to show here; search it, or open it with memory_read)` }
    // Memory files are written redacted, but a hand edit may have put a secret in one since.
    return { text: redactText(readFileNoFollow(entry.absolute, entry.relative, entry.stat).bytes.toString("utf8")) }
  } catch (error) {
    if (error instanceof MemoryError && (error.kind === "not_found" || error.kind === "unavailable")) return { text: undefined }
    if (error instanceof MemoryError && error.kind === "invalid_path") return { refused: error.message }
    throw error
  }
}

/** Skills with a SKILL.md, by folder name, through no symlink. */
function listSkills(root: string): string[] {
  const folder = path.join(root, "skills")
  const stat = fs.lstatSync(folder, { throwIfNoEntry: false })
  if (!stat?.isDirectory() || !fs.lstatSync(root).isDirectory()) return []
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && SKILL_NAME.test(entry.name) && fs.lstatSync(path.join(folder, entry.name, "SKILL.md"), { throwIfNoEntry: false })?.isFile())
    .map((entry) => entry.name)
    .sort()
}

interface Action {
  title(params: Record<string, string>): string
  danger?: boolean
  params(input: Record<string, string>): { values: Record<string, string> } | { error: string }
  /** What the preview shows, and a fingerprint of it that a later change to memory alters. */
  state(params: Record<string, string>, version: pages.Version): Promise<{ lines: Part[]; fingerprint: string }>
  apply(params: Record<string, string>, version: pages.Version): Promise<string>
}

type RunResult = (command: Command, argv: readonly string[]) => Promise<CommandResult>
type RunJson = <T>(command: Command, argv: readonly string[]) => Promise<T>

function actionTable(json: RunJson, run: RunResult): Record<string, Action> {
  const session = (input: Record<string, string>) => (SESSION_ID.test(input.session ?? "") ? { values: { session: input.session! } } : { error: input.session ? notSessionId(input.session) : "a session id is needed" })
  type Recall = { mode: string; versions: Array<{ version: string; records: Array<{ session_id: string; updated_at: string; consolidated: boolean }> }> }
  const recall = async (id: string) => {
    try {
      return await json<Recall>(recallCommand, ["--", id])
    } catch (error) {
      if (error instanceof CliError && error.code === "not_found") return undefined
      throw error
    }
  }
  const held = (r: Recall | undefined) => (r ? shown(r).versions.flatMap((v) => v.records.map((rec) => `${v.version}: record ${rec.session_id} of ${rec.updated_at}${rec.consolidated ? ", in the memory folder" : ", not consolidated yet"}`)) : [])
  const fingerprint = (value: unknown) => JSON.stringify(value)
  /** Pause or resume: the CLI's command of that name, previewed with the pause as it is now. */
  const pauseAction = (paused: boolean): Action => ({
    title: () => (paused ? "Pause learning" : "Resume learning"),
    params: () => ({ values: {} }),
    async state() {
      const now = (await json<{ learning: { paused: boolean } }>(statusCommand, [])).learning.paused
      const effect = paused ? "Every OpenCode window stops starting learning work at its next pass." : "Learning goes on at the next pass of every OpenCode window."
      return { lines: [html`${effect}`, html`Learning is now ${now ? "paused" : "on"}.`], fingerprint: fingerprint(now) }
    },
    async apply() {
      await run(paused ? pause : resume, [])
      return paused ? "Learning is paused." : "Learning resumed."
    },
  })
  return {
    forget: {
      title: (p) => `Forget what was learned from ${p.session}`,
      params: session,
      async state(p) {
        const r = await recall(p.session!)
        if (!r) return { lines: [html`Memory knows nothing of ${shown(p.session)}: there is nothing to forget.`], fingerprint: "unknown" }
        const records = held(r)
        return {
          lines: [
            ...(records.length ? records.map((line) => html`Deleted: ${line}.`) : [html`No record of it is held.`]),
            html`Text of it in the memory folder goes at the next consolidation, minutes after the last one.`,
            html`What it says from now on can be learned again (keep it out of memory to stop that).`,
          ],
          fingerprint: fingerprint(r),
        }
      },
      async apply(p) {
        if (!(await recall(p.session!))) throw new CliError("not_found", `memory knows nothing of ${p.session}`)
        const answer = await json<{ forgotten_from: string[]; forgetting_queued: string[] }>(forgetCommand, ["--", p.session!])
        return answer.forgotten_from.length ? `Forgot what was learned from ${p.session} (${answer.forgotten_from.join(", ")})${answer.forgetting_queued.length ? "; the next consolidation removes it from the memory folder" : ""}.` : `Nothing had been learned from ${p.session}.`
      },
    },
    mode: {
      title: (p) => (p.mode === "disabled" ? `Keep ${p.session} out of memory` : `Let ${p.session} back into memory`),
      params: (input) => {
        const s = session(input)
        if ("error" in s) return s
        return input.mode === "enabled" || input.mode === "disabled" ? { values: { ...s.values, mode: input.mode } } : { error: "mode is enabled or disabled" }
      },
      async state(p) {
        const r = await recall(p.session!)
        if (!r) return { lines: [html`Memory knows nothing of ${shown(p.session)}.`], fingerprint: "unknown" }
        const lines: Part[] = [html`Its mode: ${r.mode} → ${p.mode}.`]
        if (p.mode === "disabled") lines.push(...held(r).map((line) => html`Deleted: ${line}.`), html`Nothing it says is learned until it is let back in.`)
        return { lines, fingerprint: fingerprint(r) }
      },
      async apply(p) {
        if (!(await recall(p.session!))) throw new CliError("not_found", `memory knows nothing of ${p.session}`)
        const answer = await json<{ previous: string; mode: string }>(modeCommand, ["--", p.session!, p.mode!])
        return `${p.session}: ${answer.previous} → ${answer.mode}.`
      },
    },
    pause: pauseAction(true),
    resume: pauseAction(false),
    "delete-note": {
      title: (p) => `Delete the note ${p.path}`,
      danger: true,
      params: (input) => (/^extensions\/ad_hoc\/notes\/[^/]+\.md$/.test(input.path ?? "") ? { values: { path: input.path! } } : { error: "not a note's path" }),
      async state(p, version) {
        const notes = await json<{ notes: Array<{ path: string; title: string; bytes: number }> }>(notesCommand, ["--version", version])
        const note = notes.notes.find((n) => n.path === p.path)
        if (!note) return { lines: [html`There is no note ${shown(p.path)}.`], fingerprint: "missing" }
        return { lines: [html`Deleted: the note “${shown(note.title)}” (${note.bytes} bytes).`, html`The next consolidation of ${version} removes what only this note said.`], fingerprint: fingerprint(note) }
      },
      async apply(p, version) {
        await run(notesCommand, ["delete", "--yes", "--version", version, "--", p.path!])
        return `Deleted ${p.path}; the next consolidation removes what only it said.`
      },
    },
    reset: {
      title: () => "Erase everything learned",
      danger: true,
      params: () => ({ values: {} }),
      async state() {
        const status = await json<{ report: { versions: Array<{ version: string; counts?: { outputs: number } }> } }>(statusCommand, [])
        const counts = status.report.versions.map((v) => `${v.version}: ${v.counts?.outputs ?? 0} records`)
        return {
          lines: [html`Erased in every version: records, jobs, the memory folders (${counts.join("; ")}), citations, checkpoints and consolidation reviews.`, html`Kept: session modes, version stamps, forget times, the pause, the spend ledger and the redaction counts.`, html`Sessions from before now are not learned again.`],
          fingerprint: fingerprint(counts),
        }
      },
      async apply() {
        // The CLI's own words: what was erased, and what was kept.
        return (await run(resetCommand, ["--yes"])).text ?? "Memory was reset."
      },
    },
  }
}
