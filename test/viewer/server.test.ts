// The viewer's promises, each as a request a hostile page or process could make: no token, a
// foreign Host (DNS rebinding), a foreign Origin, a cross-site form post, paths out of the memory
// folder (plain, encoded, into the database), model-written <script> and javascript: links, and
// changes without a fresh preview. Real HTTP on 127.0.0.1, a home built with the core's stores.
import fs from "node:fs"
import http from "node:http"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { SpendLedger } from "../../src/store/ledger.js"
import { MemoryStore } from "../../src/store/memory-store.js"
import { ConsolidationReviews } from "../../src/store/reviews.js"
import { SessionCatalog } from "../../src/store/session-catalog.js"
import { Stage1Jobs } from "../../src/store/stage1-jobs.js"
import { startViewer, type RunningViewer } from "../../src/viewer/server.js"

const NOW = Date.UTC(2026, 11, 1, 12)
let root: string
let home: string
let viewer: RunningViewer
let cookie: string
let origin: string

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** One raw request: the path is sent exactly as given, and any header can be forged. */
function request(pathname: string, options: { method?: string; headers?: Record<string, string>; body?: string; port?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: options.port ?? viewer.port, method: options.method ?? "GET", path: pathname, headers: options.headers ?? {} }, (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end(options.body)
  })
}

const get = (pathname: string, headers: Record<string, string> = {}) => request(pathname, { headers: { cookie, ...headers } })
const post = (pathname: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  request(pathname, { method: "POST", body: new URLSearchParams(form).toString(), headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded", ...headers } })
const tokenIn = (page: string) => /name="token" value="([^"]+)"/.exec(page)?.[1]

function buildHome(): void {
  const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
  const jobs = new Stage1Jobs(db, () => NOW)
  for (const [id, text] of [["ses_alpha", "deploys use make ship"], ["ses_beta", "tests need the vpn"]] as const) {
    const claim = jobs.claim({ sessionId: id, updatedAt: NOW - 1_000 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed(id, claim.token, { rawMemory: `- ${text}`, rolloutSummary: `Learned: ${text}. <script>alert("record")</script>`, slug: "s", cwd: "/p" })
  }
  db.prepare("INSERT INTO redaction_log (session_id, stage, recorded_at, counts) VALUES ('ses_alpha', 'transcript', 1, '{\"github-token\":2}')").run()
  new SessionCatalog(db, () => NOW).remember([{ id: "ses_alpha", title: "Deploy <b>notes</b>", directory: "/src/app", createdAt: NOW - 9_000, updatedAt: NOW - 5_000 }])
  new ConsolidationReviews(db, () => NOW).add("v1", { inputsAdded: ["rollout_summaries/a.md"], inputsRemoved: [], notes: [], changed: ["MEMORY.md"], sessions: 2 }, "diff --git a/MEMORY.md b/MEMORY.md\n+- deploys use make ship <img src=x onerror=alert(1)>\n")
  // ses_alpha's replies cited memory: MEMORY.md once, the ship skill twice, and two paths a page must not show as written.
  const citations = new MemoryStore(db, () => NOW - 60_000)
  citations.recordCitation("prt_cite_1", "ses_alpha", [{ path: "MEMORY.md", start: 2, end: 2 }, { path: "skills/ship/SKILL.md", start: 4, end: 4 }])
  citations.recordCitation("prt_cite_2", "ses_alpha", [{ path: "skills/ship/SKILL.md", start: 4, end: 4 }, { path: "notes/ghp_0123456789abcdefghijABCDEFGHIJ0123456789.md", start: 1, end: 1 }, { path: '<script>alert("cited")</script>.md', start: 1, end: 1 }])
  new SpendLedger(db, () => NOW).record("extraction", { input: 100, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0.01 })
  db.close()
  const memories = path.join(home, "memories")
  fs.mkdirSync(path.join(memories, "skills", "ship"), { recursive: true })
  fs.mkdirSync(path.join(memories, "extensions", "ad_hoc", "notes"), { recursive: true })
  fs.writeFileSync(path.join(memories, "memory_summary.md"), "v1\n## Deploying\nUse make ship.\n")
  fs.writeFileSync(
    path.join(memories, "MEMORY.md"),
    '# Memory\n- deploys use make ship\n- hand-edited: the token is ghp_0123456789abcdefghijABCDEFGHIJ0123456789\n- <script>alert("memory")</script> and <img src=x onerror=alert(2)>\n- [click me](javascript:alert(3)) and [data](data:text/html;base64,PHNjcmlwdD4=) and [docs](https://example.com/docs)\n- ![tracker](https://tracker.example/pixel.png)\n',
  )
  fs.writeFileSync(path.join(memories, "skills", "ship", "SKILL.md"), "---\nname: ship\n---\n1. run make ship\n")
  fs.writeFileSync(path.join(memories, "extensions", "ad_hoc", "notes", "2026-12-01T10-00-00-freeze.md"), "# Release freeze\n\nReleases freeze in December.\n")
  fs.writeFileSync(path.join(root, "outside.md"), "SECRET OUTSIDE THE HOME")
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-viewer-"))
  home = path.join(root, "home")
  fs.mkdirSync(home)
  buildHome()
  viewer = await startViewer({ cli: { env: {}, homedir: root, now: () => NOW }, home })
  origin = `http://127.0.0.1:${viewer.port}`
  const entry = await request(new URL(viewer.url).pathname + new URL(viewer.url).search)
  cookie = String(entry.headers["set-cookie"]?.[0] ?? "").split(";")[0]!
})
afterAll(async () => {
  await viewer?.close()
  fs.rmSync(root, { recursive: true, force: true })
})

describe("who gets in", () => {
  it("listens on 127.0.0.1 only, and prints an address that carries the run's token", () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/)
  })

  it("turns the printed address into an HttpOnly, SameSite=Strict cookie and takes the token out of the address", async () => {
    const entry = await request(new URL(viewer.url).pathname + new URL(viewer.url).search)
    expect(entry.status).toBe(303)
    expect(entry.headers.location).toBe("/")
    expect(String(entry.headers["set-cookie"])).toMatch(new RegExp(`^ocm_viewer_${viewer.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`))
  })

  it("redirects the hand-off only to a path of its own origin, however the path begins", async () => {
    const { token } = Object.fromEntries(new URL(viewer.url).searchParams)
    for (const probe of ["//other.example/landing", "///other.example/landing", "/.//other.example/", "/%2F/other.example/", "//other.example", "/./\\other.example/?x=1"]) {
      const answer = await request(`${probe}${probe.includes("?") ? "&" : "?"}token=${token}`)
      if (answer.status === 400) continue // a backslash in the path: the adapter refuses it outright
      expect(answer.status, probe).toBe(303)
      const location = String(answer.headers.location)
      expect(location, probe).toMatch(/^\/(?![/\\])/)
      expect(new URL(location, origin).origin, probe).toBe(origin)
    }
    expect((await request(`//other.example/landing?token=${token}&q=1`)).headers.location).toBe("/other.example/landing?q=1")
  })

  it("takes the token out of the address bar even when the cookie is already set (a second tab)", async () => {
    const entry = await request(new URL(viewer.url).pathname + new URL(viewer.url).search, { headers: { cookie } })
    expect(entry.status).toBe(303)
    expect(entry.headers.location).toBe("/")
  })

  it("names its cookie after its port: a second viewer neither overwrites it nor accepts it", async () => {
    const second = await startViewer({ cli: { env: {}, homedir: root, now: () => NOW }, home })
    try {
      const entry = await request(new URL(second.url).pathname + new URL(second.url).search, { port: second.port })
      const secondCookie = String(entry.headers["set-cookie"]?.[0] ?? "").split(";")[0]!
      expect(secondCookie.split("=")[0]).toBe(`ocm_viewer_${second.port}`)
      expect(secondCookie.split("=")[0]).not.toBe(cookie.split("=")[0])
      // The browser sends both to either port; each viewer reads only its own.
      const both = `${cookie}; ${secondCookie}`
      expect((await request("/", { headers: { cookie: both } })).status).toBe(200)
      expect((await request("/", { port: second.port, headers: { cookie: both, host: `127.0.0.1:${second.port}` } })).status).toBe(200)
      // The first one's token under the second one's name, and the other way round: refused.
      expect((await request("/", { port: second.port, headers: { cookie: `ocm_viewer_${second.port}=${cookie.split("=")[1]}`, host: `127.0.0.1:${second.port}` } })).status).toBe(401)
      expect((await request("/", { headers: { cookie: `ocm_viewer=${cookie.split("=")[1]}` } })).status).toBe(401)
    } finally {
      await second.close()
    }
  })

  it("refuses a request without the token, or with a wrong one", async () => {
    expect((await request("/")).status).toBe(401)
    expect((await request("/?token=guess")).status).toBe(401)
    expect((await request("/", { headers: { cookie: `ocm_viewer_${viewer.port}=guess` } })).status).toBe(401)
    expect((await request("/sessions")).body).not.toContain("ses_alpha")
  })

  it("refuses a foreign Host (a DNS-rebinding page's requests name the attacker's host), even with the token", async () => {
    for (const host of ["evil.example", `evil.example:${viewer.port}`, `localhost:${viewer.port}`, "127.0.0.1"]) {
      const answer = await get("/", { host })
      expect(answer.status, host).toBe(421)
      expect(answer.body).not.toContain("ses_alpha")
    }
  })

  it("refuses another origin's requests, reads and writes alike", async () => {
    expect((await get("/", { origin: "http://evil.example" })).status).toBe(403)
    expect((await get("/", { origin: "http://localhost:" + viewer.port })).status).toBe(403)
  })

  it("sends a strict Content-Security-Policy, no caching, and no framing on every page", async () => {
    for (const page of ["/", "/summary", "/memory", "/sessions", "/history", "/cost", "/jobs", "/search", "/controls", "/nowhere"]) {
      const answer = await get(page)
      expect(answer.headers["content-security-policy"], page).toBe("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
      expect(answer.headers["cache-control"]).toBe("no-store")
      expect(answer.headers["x-frame-options"]).toBe("DENY")
      expect(answer.body).not.toMatch(/<script/i)
    }
  })
})

describe("what it serves", () => {
  it("renders each page with what memory holds", async () => {
    expect((await get("/")).body).toContain("Extracted sessions")
    expect((await get("/summary")).body).toContain("Use make ship.")
    expect((await get("/summary")).body).toContain("MEMORY SUMMARY BEGINS")
    expect((await get("/memory")).body).toContain("deploys use make ship")
    expect((await get("/memory?skill=ship")).body).toContain("run make ship")
    expect((await get("/sessions")).body).toContain("ses_alpha")
    expect((await get("/session?id=ses_alpha")).body).toContain("Learned: deploys use make ship.")
    expect((await get("/session?id=ses_alpha")).body).toContain("github-token ×2")
    expect((await get("/history")).body).toContain("rollout_summaries/a.md")
    expect((await get("/cost")).body).toMatch(/<svg[^>]*role="img"/)
    expect((await get("/jobs")).body).toContain("Leases")
    expect((await get("/controls")).body).toContain("Release freeze")
  })

  it("shows on a session's page what its replies cited, linked to the file view, escaped and redacted", async () => {
    const body = (await get("/session?id=ses_alpha")).body
    const cited = body.slice(body.indexOf("<h2>Cited memory</h2>"), body.indexOf("<h2>Secrets kept out of it</h2>"))
    expect(cited).toContain('<a href="/memory?version&#61;v1">MEMORY.md:2-2</a> <q>- deploys use make ship</q>: cited 1 time, last 2026-12-01T11:59:00.000Z')
    expect(cited).toContain('<a href="/memory?version&#61;v1&#38;skill&#61;ship">skills/ship/SKILL.md:4-4</a> <q>1. run make ship</q>: cited 2 times')
    // A path with no file view is shown without a link; a secret in it is redacted, markup escaped.
    expect(cited).toContain("notes/[REDACTED:github-token].md:1-1: cited 1 time")
    expect(body).not.toContain("ghp_0123456789")
    expect(cited).toContain("&#60;script&#62;")
    expect(cited).not.toContain("<script>")
    expect((await get("/session?id=ses_beta")).body).toContain("<h2>Cited memory</h2><p>No reply of this session cited memory.</p>")
  })

  it("shows nothing unredacted, even a secret someone typed into a memory file by hand", async () => {
    for (const page of ["/memory", "/search?q=hand-edited&mode=any", "/search?q=hand+edited+token&mode=ranked"]) {
      const body = (await get(page)).body
      expect(body, page).toContain("hand-edited")
      expect(body, page).not.toContain("ghp_0123456789")
      expect(body, page).toContain("[REDACTED:")
    }
  })

  it("searches ranked and by substring", async () => {
    const ranked = await get("/search?q=how+do+we+deploy&mode=ranked")
    expect(ranked.body).toContain("deploys use make ship")
    expect(ranked.body).toMatch(/score [\d.]+/)
    expect((await get("/search?q=vpn&mode=any")).body).toContain("tests need the vpn")
  })

  it("renders model-written content inert: no script, no event handler, no javascript: or data: link, no remote image", async () => {
    for (const page of ["/memory", "/session?id=ses_alpha", "/history", "/search?q=script&mode=any", "/sessions"]) {
      const body = (await get(page)).body
      expect(body, page).not.toMatch(/<script/i)
      expect(body, page).not.toMatch(/<img/i)
      expect(body, page).not.toMatch(/href="(javascript|data):/i)
      expect(body, page).not.toMatch(/<b>notes<\/b>/)
    }
    const memory = (await get("/memory")).body
    expect(memory).toContain("&lt;script&gt;")
    expect(memory).toContain('<a href="https://example.com/docs" rel="noopener noreferrer nofollow">docs</a>')
    expect(memory).not.toContain("tracker.example/pixel.png\"")
  })

  it("serves nothing outside the memory folder, no database file, plain or encoded", async () => {
    const probes = [
      "/memory.db",
      "/../memory.db",
      "/assets/../memory.db",
      "/assets/%2e%2e/memory.db",
      "/assets/..%2f..%2foutside.md",
      "/memory?skill=../../outside",
      "/memory?skill=..%2f..%2foutside",
      "/memory?skill=%2e%2e",
      "/session?id=../../memory.db",
      "/file?path=../outside.md",
      "/memories/MEMORY.md",
    ]
    for (const probe of probes) {
      const answer = await get(probe)
      expect([400, 404], probe).toContain(answer.status)
      expect(answer.body, probe).not.toContain("SECRET OUTSIDE")
      expect(answer.body, probe).not.toContain("SQLite format")
    }
  })
})

describe("changes", () => {
  beforeEach(async () => {
    // Each test starts with learning on.
    const preview = await get("/action/resume")
    await post("/action/resume", { token: tokenIn(preview.body)!, version: "v1" })
  })

  it("shows what will change, then makes it with the preview's one-time token, once", async () => {
    const preview = await get("/action/pause")
    expect(preview.body).toContain("stops starting learning work")
    const token = tokenIn(preview.body)!
    const done = await post("/action/pause", { token, version: "v1" })
    expect(done.status).toBe(200)
    expect(done.body).toContain("Learning is paused.")
    expect((await get("/controls")).body).toContain("Resume learning")
    // The same token again: refused.
    expect((await post("/action/pause", { token, version: "v1" })).status).toBe(403)
  })

  it("refuses a change with no preview, with another change's token, or a cross-site form post", async () => {
    expect((await post("/action/pause", { version: "v1" })).status).toBe(403)
    const other = tokenIn((await get("/action/delete-note?path=extensions/ad_hoc/notes/2026-12-01T10-00-00-freeze.md")).body)!
    expect((await post("/action/pause", { token: other, version: "v1" })).status).toBe(409)
    const token = tokenIn((await get("/action/pause")).body)!
    expect((await post("/action/pause", { token, version: "v1" }, { origin: "http://evil.example" })).status).toBe(403)
    expect((await request("/action/pause", { method: "POST", body: `token=${token}`, headers: { cookie, "content-type": "application/x-www-form-urlencoded" } })).status).toBe(403)
    expect((await post("/action/pause", { token, version: "v1" }, { "sec-fetch-site": "cross-site" })).status).toBe(403)
    expect((await get("/controls")).body).toContain("Pause learning")
  })

  it("refuses a stale preview: memory changed since it was shown, so nothing is changed", async () => {
    const preview = await get("/action/forget?session=ses_beta")
    expect(preview.body).toContain("Deleted: v1: record ses_beta")
    const token = tokenIn(preview.body)!
    // Meanwhile, the session learns something new (another process extracted it again).
    const { db } = openDatabase(path.join(home, "memory.db"), { now: () => NOW })
    const jobs = new Stage1Jobs(db, () => NOW + 10_000)
    const claim = jobs.claim({ sessionId: "ses_beta", updatedAt: NOW + 5_000 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed("ses_beta", claim.token, { rawMemory: "- tests need the vpn and a token", rolloutSummary: "More.", slug: "s", cwd: "/p" })
    db.close()
    const refused = await post("/action/forget", { token, session: "ses_beta", version: "v1" })
    expect(refused.status).toBe(409)
    expect(refused.body).toContain("Memory changed since this preview")
    expect((await get("/session?id=ses_beta")).body).toContain("a token")
    // A fresh preview works, through the CLI's own forget.
    const fresh = tokenIn((await get("/action/forget?session=ses_beta")).body)!
    const done = await post("/action/forget", { token: fresh, session: "ses_beta", version: "v1" })
    expect(done.body).toContain("Forgot what was learned from ses_beta")
    expect((await get("/session?id=ses_beta")).body).not.toContain("a token")
  })

  it("deletes a note, and refuses a path that is not a note", async () => {
    const note = "extensions/ad_hoc/notes/2026-12-01T10-00-00-freeze.md"
    expect((await get("/action/delete-note?path=../memory.db")).status).toBe(400)
    expect((await get("/action/delete-note?path=extensions/ad_hoc/notes/../../../memory.db")).status).toBe(400)
    const preview = await get(`/action/delete-note?path=${encodeURIComponent(note)}`)
    expect(preview.body).toContain("Release freeze")
    await post("/action/delete-note", { token: tokenIn(preview.body)!, path: note, version: "v1" })
    expect(fs.existsSync(path.join(home, "memories", note))).toBe(false)
    expect(fs.existsSync(path.join(home, "memory.db"))).toBe(true)
  })
})

/** Bytes written as they are onto a socket, and what came back: for requests no HTTP client sends. */
function rawRequest(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(viewer.port, "127.0.0.1", () => socket.end(bytes))
    let answer = ""
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk)).on("end", () => resolve(answer)).on("error", reject)
  })
}

describe("the answers no page writes", () => {
  const CSP = "Content-Security-Policy: default-src 'none'"

  it("sends the security headers with the HTTP parser's own refusals (400, 431) and the adapter's 400", async () => {
    const host = `Host: 127.0.0.1:${viewer.port}\r\n`
    const malformed = await rawRequest("NOT HTTP AT ALL\r\n\r\n")
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /)
    const tooLarge = await rawRequest(`GET / HTTP/1.1\r\n${host}X-Filler: ${"a".repeat(20_000)}\r\n\r\n`)
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
    // The adapter refuses a backslash in the path before any route sees it.
    const backslash = await rawRequest(`GET /\\other.example/ HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)
    expect(backslash).toMatch(/^HTTP\/1\.1 400 /)
    for (const answer of [malformed, tooLarge, backslash]) {
      const head = answer.split("\r\n\r\n")[0]!
      expect(head).toContain(CSP)
      expect(head).toMatch(/^X-Content-Type-Options: nosniff$/im)
      expect(head).toMatch(/^X-Frame-Options: DENY$/im)
      expect(head).toMatch(/^Cache-Control: no-store$/im)
    }
  })
})

describe("user text and ids are not flags", () => {
  it("searches for text that looks like a flag", async () => {
    for (const q of ["-rf", "--help", "--home=/", "-h"]) {
      const answer = await get(`/search?q=${encodeURIComponent(q)}&mode=any`)
      expect(answer.status, q).toBe(200)
      expect(answer.body, q).not.toMatch(/Unknown option|usage:/)
    }
  })

  it("answers a malformed session id with a 400 that says so, before the CLI sees it", async () => {
    for (const id of ["--help", "-rf", "", "a b", "ses/x"]) {
      const answer = await get(`/session?id=${encodeURIComponent(id)}`)
      expect(answer.status, id).toBe(400)
      expect(answer.body, id).toContain("not a session id")
    }
    expect((await get("/action/forget?session=--help")).status).toBe(400)
    expect((await get("/action/mode?session=-rf&mode=disabled")).body).toContain("not a session id")
    // A well-formed id memory does not know: 404.
    expect((await get("/session?id=ses_unknown")).status).toBe(404)
  })
})

describe("a home with secrets typed by hand into every name, and a symlink", () => {
  // An AWS key id (the redactor's aws-access-key class) in every place a page shows a name from.
  const SECRET = "AKIAIOSFODNN7EXAMPLE"
  let secretRoot: string
  let secretHome: string
  let other: RunningViewer
  let otherCookie: string
  const fetchOther = async (pathname: string) => {
    const answer = await request(pathname, { port: other.port, headers: { cookie: otherCookie, host: `127.0.0.1:${other.port}` } })
    return answer
  }

  beforeAll(async () => {
    secretRoot = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-viewer-secret-"))
    // The home's own path holds one too: the overview and the summary page name it.
    secretHome = path.join(secretRoot, SECRET, "home")
    fs.mkdirSync(secretHome, { recursive: true })
    const { db } = openDatabase(path.join(secretHome, "memory.db"), { now: () => NOW })
    const jobs = new Stage1Jobs(db, () => NOW)
    const claim = jobs.claim({ sessionId: "ses_gamma", updatedAt: NOW - 1_000 }, { workerId: "w", maxRunning: 9 })
    if (claim.type !== "claimed") throw new Error(claim.type)
    jobs.succeed("ses_gamma", claim.token, { rawMemory: `- key ${SECRET}`, rolloutSummary: `Learned ${SECRET}.`, slug: "s", cwd: "/p" })
    const failed = jobs.claim({ sessionId: "ses_delta", updatedAt: NOW - 1_000 }, { workerId: "w", maxRunning: 9 })
    if (failed.type !== "claimed") throw new Error(failed.type)
    jobs.fail("ses_delta", failed.token, `the model said ${SECRET}`)
    new SessionCatalog(db, () => NOW).remember([
      { id: "ses_gamma", title: `deploy with ${SECRET}`, directory: `/src/${SECRET}/app`, project: { key: `/src/${SECRET}`, name: `proj-${SECRET}` }, createdAt: NOW - 9_000, updatedAt: NOW - 5_000 },
    ])
    new ConsolidationReviews(db, () => NOW).add("v1", { inputsAdded: [`rollout_summaries/${SECRET}.md`], inputsRemoved: [SECRET], notes: [`extensions/ad_hoc/notes/${SECRET}.md`], changed: [`skills/${SECRET}/SKILL.md`], sessions: 1 }, `+ ${SECRET}\n`)
    db.close()
    const memories = path.join(secretHome, "memories")
    fs.mkdirSync(path.join(memories, "skills", SECRET), { recursive: true })
    fs.writeFileSync(path.join(memories, "skills", SECRET, "SKILL.md"), "1. ship it\n")
    fs.mkdirSync(path.join(memories, "extensions", "ad_hoc", "notes"), { recursive: true })
    fs.writeFileSync(path.join(memories, "MEMORY.md"), "# Memory\n- ship it\n")
    fs.writeFileSync(path.join(memories, "extensions", "ad_hoc", "notes", "2026-12-01T10-00-00-keys.md"), `# The key is ${SECRET}\n\nRotate it.\n`)
    fs.writeFileSync(path.join(memories, "extensions", "ad_hoc", "notes", `2026-12-01T11-00-00-${SECRET}.md`), "# Named by hand\n\nA note.\n")
    // V2's summary is a symlink out of the memory folder.
    fs.writeFileSync(path.join(secretRoot, "outside.md"), "SECRET OUTSIDE THE HOME")
    fs.mkdirSync(path.join(secretHome, "memories_v2"), { recursive: true })
    fs.symlinkSync(path.join(secretRoot, "outside.md"), path.join(secretHome, "memories_v2", "memory_summary.md"))
    other = await startViewer({ cli: { env: {}, homedir: secretRoot, now: () => NOW }, home: secretHome })
    const entry = await request(new URL(other.url).pathname + new URL(other.url).search, { port: other.port, headers: { host: `127.0.0.1:${other.port}` } })
    otherCookie = String(entry.headers["set-cookie"]?.[0] ?? "").split(";")[0]!
  })
  afterAll(async () => {
    await other?.close()
    fs.rmSync(secretRoot, { recursive: true, force: true })
  })

  it("shows every name, title, folder and path redacted, on every page and preview", async () => {
    const pagesToSee = ["/", "/summary", "/memory", `/memory?skill=${SECRET}`, "/sessions", "/session?id=ses_gamma", "/session?id=ses_delta", "/history", "/cost", "/jobs", "/controls", "/search?q=key&mode=any", "/search?q=named+by+hand&mode=any", "/search?q=ship&mode=any"]
    // The delete confirmations as /controls links them.
    const controls = (await fetchOther("/controls")).body
    const deletes = [...controls.matchAll(/href="(\/action\/delete-note[^"]+)"/g)].map((m) => m[1]!.replace(/&#61;/g, "=").replace(/&#38;/g, "&"))
    expect(deletes).toHaveLength(2)
    const previews = [...deletes, "/action/forget?session=ses_gamma", "/action/mode?session=ses_gamma&mode=disabled"]
    const bodies: Record<string, string> = {}
    for (const pathname of [...pagesToSee, ...pagesToSee.map((p) => `${p}${p.includes("?") ? "&" : "?"}version=v2`), ...previews]) {
      const answer = await fetchOther(pathname)
      expect(answer.status, pathname).toBeLessThan(500)
      expect(answer.body, pathname).not.toContain(SECRET)
      bodies[pathname] = answer.body
    }
    const marker = "[REDACTED:aws-access-key]"
    for (const pathname of ["/", "/summary", "/memory", "/sessions", "/session?id=ses_gamma", "/jobs", "/history", "/controls"]) expect(bodies[pathname], pathname).toContain(marker)
    // The note's hand-typed title, on /controls and in the delete confirmation.
    expect(bodies["/controls"]).toContain(`The key is ${marker}`)
    expect(deletes.map((href) => bodies[href]).join("\n")).toContain(`the note “The key is ${marker}”`)
    // The skill is listed by its redacted name, with no link carrying the folder's name.
    expect(bodies["/memory"]).toContain("not linked: its folder name looks like a secret")
  })

  it("answers a symlinked memory file with a 404 that gives the reason, and shows nothing of its target", async () => {
    const answer = await fetchOther("/memory?version=v2")
    expect(answer.status).toBe(404)
    expect(answer.body).toContain("Symlinks are not followed")
    expect(answer.body).not.toContain("SECRET OUTSIDE")
    for (const pathname of ["/summary?version=v2", "/?version=v2", "/search?q=OUTSIDE&mode=any&version=v2"]) {
      const page = await fetchOther(pathname)
      expect(page.status, pathname).toBeLessThan(500)
      expect(page.body, pathname).not.toContain("SECRET OUTSIDE")
    }
  })
})
