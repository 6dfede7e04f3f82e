// The browser the viewer's e2e drives, kept off the network. Which Chromium: CHROMIUM_PATH, else a
// `chromium` on PATH (Debian's package), else the headless one @sparticuz/chromium ships inside
// its npm package (unpacked on first use), so `npm install && npm test` needs no system browser.
// VIEWER_TEST_BROWSER=npm picks the npm one even when a system one is there.
//
// The network: every request beyond 127.0.0.1 goes to a refusing proxy on loopback that records
// it (network-guard.ts, as for the OpenCode sandboxes), every host name but 127.0.0.1 resolves
// to nothing, Chrome's own background traffic (component and extension updates, sync,
// safe-browsing lists, metrics, variations) is switched off, and the Google endpoints it would
// use anyway lead nowhere; a test asserts nothing was tried.
import fs from "node:fs"
import os from "node:os"
import { createRequire } from "node:module"
import path from "node:path"
import { chromium, type BrowserContext, type Page } from "playwright-core"
import { NetworkGuard } from "./network-guard.js"

export interface GuardedBrowser {
  /** A new tab, at this size (1280 by 720 when not given). */
  newPage(viewport?: { width: number; height: number }): Promise<Page>
  /** "system" or "npm": which Chromium was launched. */
  source: "system" | "npm"
  /** Every request the browser tried beyond 127.0.0.1, as "METHOD target". */
  attempts(): string[]
  /** Closes the browser (what it sends on the way out is still counted), then the guard. */
  closeBrowser(): Promise<void>
  close(): Promise<void>
}

/** Chrome's background traffic, off (playwright passes most of these too; not relied upon). */
const QUIET = [
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-client-side-phishing-detection",
  "--disable-domain-reliability",
  "--disable-breakpad",
  "--disable-field-trial-config",
  "--metrics-recording-only",
  "--no-pings",
  "--no-first-run",
  "--no-default-browser-check",
  "--safebrowsing-disable-auto-update",
  // No --disable-features here: a second one would replace playwright's list (network time,
  // optimization hints, translate, media router... are off there), not add to it.
]

/**
 * Google's service endpoints, sent to a loopback address nothing can answer (port 0). Debian's
 * `chromium` wrapper exports API keys and turns on remote extensions, and with them Chromium 156
 * signs in to accounts.google.com, asks update.googleapis.com for updates and a filled form
 * content-autofill.googleapis.com, whatever the switches above say (the guard caught each);
 * this is where they would go instead.
 */
const NOWHERE = "http://127.0.0.1:0"
const ENDPOINTS = [`--gaia-url=${NOWHERE}`, `--lso-url=${NOWHERE}`, `--google-apis-url=${NOWHERE}`, `--google-base-url=${NOWHERE}`, `--component-updater=url-source=${NOWHERE}`, `--autofill-server-url=${NOWHERE}`]

/**
 * The profile's own settings. Typing into a field makes Chromium fetch a spelling dictionary
 * (redirector.gvt1.com/edgedl/chrome/dict/, the e2e found), now and then even with spellchecking
 * switched off here: it downloads one for each accepted language that has one. Japanese has none,
 * so with it as the only accepted language there is nothing to fetch (5 of 5 runs clean, against
 * 2 of 3 that fetched without it). No switch turns that off; the profile's preferences do.
 */
const PREFERENCES = { browser: { enable_spellchecking: false }, spellcheck: { dictionaries: [], dictionary: "", forced_dictionaries: [], use_spelling_service: false }, intl: { accept_languages: "ja" } }

/** Of @sparticuz/chromium's own flags, those its headless build needs outside a Lambda; not its web-security switches. */
const NPM_FLAGS = new Set(["--no-sandbox", "--no-zygote", "--in-process-gpu", "--disable-domain-reliability", "--no-pings", "--font-render-hinting"])

export async function launchGuardedChromium(env: NodeJS.ProcessEnv = process.env): Promise<GuardedBrowser> {
  const { executable, source, args, env: browserEnv } = await findChromium(env)
  const guard = await NetworkGuard.start()
  // A profile of its own, so its preferences can be written before the browser starts.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-viewer-browser-"))
  fs.mkdirSync(path.join(profile, "Default"))
  fs.writeFileSync(path.join(profile, "Default", "Preferences"), JSON.stringify(PREFERENCES))
  let context: BrowserContext
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: executable,
      ...(browserEnv ? { env: browserEnv } : {}),
      viewport: { width: 1280, height: 720 },
      args: [
        ...args,
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        `--proxy-server=${guard.url}`,
        "--proxy-bypass-list=127.0.0.1",
        // Resolved names are the other way out (a proxy-less fetch, DNS prefetch): none but loopback.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        ...QUIET,
        ...ENDPOINTS,
      ],
    })
  } catch (error) {
    await guard.close()
    fs.rmSync(profile, { recursive: true, force: true })
    throw error
  }
  const closeBrowser = async () => {
    await context.close()
    fs.rmSync(profile, { recursive: true, force: true })
  }
  return {
    async newPage(viewport) {
      const page = await context.newPage()
      if (viewport) await page.setViewportSize(viewport)
      return page
    },
    source,
    attempts: () => guard.attempts(),
    closeBrowser,
    close: async () => {
      await closeBrowser()
      await guard.close()
    },
  }
}

async function findChromium(env: NodeJS.ProcessEnv): Promise<{ executable: string; source: "system" | "npm"; args: string[]; env?: NodeJS.ProcessEnv }> {
  if (env.CHROMIUM_PATH) return { executable: env.CHROMIUM_PATH, source: "system", args: [] }
  const system = env.VIEWER_TEST_BROWSER === "npm" ? undefined : onPath(env.PATH ?? "", ["chromium", "chromium-browser"])
  if (system) return { executable: system, source: "system", args: [] }
  // A dev dependency: the binary comes with the npm package, no download at run time.
  const { default: npmChromium, inflate } = await import("@sparticuz/chromium")
  const executable = await npmChromium.executablePath()
  // The libraries it links beyond libc (NSS, NSPR, expat) ship in the same package, unpacked only
  // on Amazon Linux by the package itself; unpacked here too, so a machine without a browser's
  // libraries installed runs it as well.
  const libraries = path.join(await inflate(path.join(npmPackageDir(), "bin", "al2023.tar.br")), "lib")
  const browserEnv = { ...process.env, LD_LIBRARY_PATH: [libraries, process.env.LD_LIBRARY_PATH].filter(Boolean).join(path.delimiter) }
  return { executable, source: "npm", args: npmChromium.args.filter((flag) => NPM_FLAGS.has(flag.split("=")[0]!)), env: browserEnv }
}

function npmPackageDir(): string {
  return path.dirname(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")))
}

function onPath(searchPath: string, names: readonly string[]): string | undefined {
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const file = path.join(dir, name)
      try {
        fs.accessSync(file, fs.constants.X_OK)
        if (fs.statSync(file).isFile()) return file
      } catch {
        // Not here.
      }
    }
  }
  return undefined
}
