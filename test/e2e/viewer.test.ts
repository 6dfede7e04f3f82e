// The viewer in a real browser (a system Chromium, else the one @sparticuz/chromium ships; driven
// by playwright-core) over a home the real OpenCode 1.18.33 learned two facts into: every page
// shows what it should, search finds the facts, the pages work at 1280 and 390 pixels wide and with
// the keyboard, and forgetting a session through its page removes its fact at the next
// consolidation of the running OpenCode. The browser reaches nothing beyond 127.0.0.1, and the
// last test asserts it tried nothing (support/browser.ts). Screenshots of the main pages are kept
// in test-results/viewer/.
import { spawn, type ChildProcess } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchGuardedChromium, type GuardedBrowser } from "./support/browser.js"
import { diffDrivenConsolidator } from "./support/consolidator.js"
import { copyingExtractor } from "./support/facts.js"
import { FakeLlm } from "./support/fake-llm.js"
import { phase2Status } from "./support/memory-db.js"
import { createSandbox, defaultPluginSpec, repoRoot, startServe, waitFor, type Sandbox, type ServeHandle } from "./support/opencode.js"
import { ServerApi } from "./support/server-api.js"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const ALPHA = "FACT-ALPHA: the staging cluster is called nimbus"
const BRAVO = "FACT-BRAVO: releases are tagged on tuesdays"
const SHOTS = path.join(repoRoot(), "test-results", "viewer")

describe("the viewer in a real browser", () => {
  let llm: FakeLlm
  let sandbox: Sandbox
  let server: ServeHandle | undefined
  let api: ServerApi
  let root: string
  let clockFile: string
  let clock = 0
  let ui: ChildProcess | undefined
  let url = ""
  let browser: GuardedBrowser | undefined
  const sessions = { alpha: "", bravo: "" }
  const summary = () => (fs.existsSync(path.join(root, "memory_summary.md")) ? fs.readFileSync(path.join(root, "memory_summary.md"), "utf8") : "")
  const later = (ms: number) => {
    clock += ms
    fs.writeFileSync(`${clockFile}.next`, String(clock))
    fs.renameSync(`${clockFile}.next`, clockFile)
  }
  const tell = async (title: string, fact: string) => {
    const id = (await api.createSession(title)).id
    await api.prompt(id, `Please remember: ${fact}`)
    return id
  }
  const nudge = async () => api.prompt((await api.createSession("nudge")).id, "hello")
  const origin = () => new URL(url).origin
  const open = async (page: Page, pathname: string) => {
    const response = await page.goto(`${origin()}${pathname}`)
    expect(response?.status(), pathname).toBe(200)
    return (await page.locator("main").innerText()).replace(/\s+/g, " ")
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true })
    llm = await FakeLlm.start()
    sandbox = await createSandbox({ llmUrl: llm.url, configScope: "global", plugins: [[defaultPluginSpec(), { min_rollout_idle_hours: 1 }]] })
    root = path.join(sandbox.memoryHome, "memories")
    clockFile = path.join(sandbox.root, "clock-offset")
    sandbox.env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_FILE = clockFile
    later(0)
    llm.setStructuredHandler(copyingExtractor)
    llm.setAgentHandler(diffDrivenConsolidator(root).handler)
    server = await startServe(sandbox)
    api = new ServerApi(server.url, sandbox.projectDir)
    sessions.alpha = await tell("staging notes", ALPHA)
    sessions.bravo = await tell("release notes", BRAVO)
    later(2 * HOUR)
    await nudge()
    await waitFor(() => summary().includes(ALPHA) && summary().includes(BRAVO) && phase2Status(sandbox) === "done", { timeoutMs: 90_000, message: "the two facts were not learned" })

    // The viewer as a user starts it: the CLI, in its own process, printing its address.
    ui = spawn(process.execPath, [path.join(repoRoot(), "dist", "src", "cli", "main.js"), "ui", "--home", sandbox.memoryHome], { env: { PATH: process.env.PATH ?? "", HOME: sandbox.home }, stdio: ["ignore", "pipe", "pipe"] })
    let printed = ""
    ui.stderr!.on("data", (chunk: Buffer) => (printed += chunk.toString()))
    url = await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(printed)?.[0], { timeoutMs: 20_000, message: "the ui command printed no address" })
    browser = await launchGuardedChromium()
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    ui?.kill("SIGINT")
    await server?.stop()
    await llm?.close()
    await sandbox?.cleanup()
  })

  it("shows every page with what memory holds, at 1280 and 390 pixels wide (screenshots kept)", async () => {
    for (const [width, height] of [[1280, 900], [390, 844]] as const) {
      const page = await browser!.newPage({ width, height })
      await page.goto(url)
      // The token went into a cookie and out of the address bar.
      expect(page.url()).toBe(`${origin()}/`)
      expect(await open(page, "/")).toContain("Extracted sessions 2")
      expect(await open(page, "/summary")).toContain(ALPHA)
      expect(await open(page, "/memory")).toContain(BRAVO)
      const listed = await open(page, "/sessions")
      expect(listed).toContain(sessions.alpha)
      expect(listed).toContain("staging notes")
      expect(await open(page, `/session?id=${sessions.alpha}`)).toContain(ALPHA)
      expect(await open(page, "/history")).toMatch(/rollout_summaries\//)
      expect(await page.locator("main").innerText()).toBeTruthy()
      await open(page, "/cost")
      expect(await page.locator("svg[role=img]").count()).toBe(1)
      expect(await open(page, "/jobs")).toContain("Leases")
      expect(await open(page, "/controls")).toContain("Pause learning")
      // Nothing wider than the window: at 390 px tables scroll inside their own box.
      for (const pathname of ["/", "/sessions", "/memory", "/search?q=staging+cluster&mode=ranked"]) {
        await page.goto(`${origin()}${pathname}`)
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${pathname} at ${width}px`).toBe(true)
        await page.screenshot({ path: path.join(SHOTS, `${width}-${pathname.split("?")[0]!.replace(/\W/g, "") || "overview"}.png`), fullPage: true })
      }
      await page.close()
    }
  })

  it("finds the facts with ranked and substring search", async () => {
    const page = await browser!.newPage()
    await page.goto(url)
    await page.goto(`${origin()}/search`)
    await page.fill("#q", "what is the staging cluster called")
    await page.selectOption("#mode", "ranked")
    await page.click("button[type=submit]")
    const ranked = await page.locator("ol.results").innerText()
    expect(ranked.split("\n").join(" ")).toContain("nimbus")
    expect(ranked).toMatch(/score [\d.]+/)
    expect(await open(page, "/search?q=tuesdays&mode=any")).toContain(BRAVO)
    await page.close()
  })

  it("works with the keyboard: skip link, navigation, and a search submitted with Enter", async () => {
    const page = await browser!.newPage()
    await page.goto(url)
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content")
    // Through the navigation to Sessions, followed with Enter.
    for (let i = 0; i < 4; i++) await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Sessions")
    await Promise.all([page.waitForURL(/\/sessions/), page.keyboard.press("Enter")])
    await page.goto(`${origin()}/search`)
    await page.focus("#q")
    await page.keyboard.type("releases tagged")
    await Promise.all([page.waitForURL(/q=releases/), page.keyboard.press("Enter")])
    expect(await page.locator("main").innerText()).toContain("tuesdays")
    await page.close()
  })

  it("forgets a session through its page, after a preview; the running OpenCode's next consolidation removes its fact", async () => {
    const page = await browser!.newPage()
    await page.goto(url)
    await page.goto(`${origin()}/session?id=${sessions.alpha}`)
    await Promise.all([page.waitForURL(/\/action\/forget/), page.click("text=Forget what was learned from it")])
    const preview = await page.locator("main").innerText()
    expect(preview).toContain(`Deleted: v1: record ${sessions.alpha}`)
    // Nothing changed by looking.
    expect(summary()).toContain(ALPHA)
    await page.screenshot({ path: path.join(SHOTS, "1280-forget-preview.png"), fullPage: true })
    await Promise.all([page.waitForLoadState("load"), page.click("main form button[type=submit]")])
    expect(await page.locator("main").innerText()).toContain(`Forgot what was learned from ${sessions.alpha}`)
    await page.close()
    // The running OpenCode sees the forget at its next pass and consolidates within minutes.
    later(10 * MINUTE)
    await nudge()
    await waitFor(() => !summary().includes(ALPHA) && phase2Status(sandbox) === "done", { timeoutMs: 90_000, message: "the forgotten fact stayed in memory" })
    expect(summary()).toContain(BRAVO)
  })

  it("stops on Ctrl+C", async () => {
    const exited = new Promise<number | null>((resolve) => ui!.once("exit", (code) => resolve(code)))
    ui!.kill("SIGINT")
    expect(await exited).toBe(0)
    ui = undefined
  })

  it("tried no request beyond 127.0.0.1, the browser's own background traffic included", async () => {
    // Closed first, so what it would send on the way out is counted too.
    await browser!.closeBrowser()
    expect(browser!.attempts(), `the ${browser!.source} Chromium tried the network`).toEqual([])
  })
})
