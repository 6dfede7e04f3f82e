// What a real OpenCode 2 says of the plugin, for `doctor`: whether it loaded it (GET /api/plugin,
// which lists what a location loaded; a configured plugin that failed to install or import is
// simply absent, with no log line), what the plugin registered and what OpenCode refused (the
// plugin's own status RPC, POST /api/rpc/<id>/status), and which models the providers offer
// (GET /api/model). Asked of the running background service when one is registered, else of a
// private `opencode serve` on a loopback port of its own, started in an empty folder with the
// user's environment and a password of its own, with the plugin in probe mode (it registers
// everything and runs no background work), and stopped afterwards.
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import fs from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { PLUGIN_ID } from "../constants.js"
import type { HostRegistrations } from "../host.js"
import { discoverService } from "../util/opencode-service.js"
import { ENV_PROBE } from "../util/paths.js"

export interface Opencode2Probe {
  /** Where the answers came from. */
  source: "service" | "private serve"
  /** The plugin's entry in the location's list, or undefined when OpenCode did not load it. */
  plugin?: { id: string; status: string; error?: string; features: Record<string, boolean> }
  /** Other plugins the location loaded (not built in). */
  others: string[]
  /** The plugin's status RPC: what it registered and what OpenCode refused. */
  registrations?: HostRegistrations
  /** "provider/model" for every model OpenCode offers. */
  models: string[]
}

const READY_TIMEOUT_MS = 60_000
/** A location's plugin list is taken before its loading ends the first time it is asked (F4). */
const LOAD_WAIT_MS = 10_000

export async function probeOpencode2(binary: string, env: Readonly<Record<string, string | undefined>>, homedir: string): Promise<Opencode2Probe> {
  const service = await discoverService({ env, homedir, pid: -1 }, AbortSignal.timeout(5_000)).catch(() => undefined)
  if (service?.state === "ready") {
    const { url, password } = service.registration
    return ask({ url, password, directory: homedir, source: "service" })
  }
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-doctor-"))
  const password = randomBytes(18).toString("base64url")
  const port = await freeLoopbackPort()
  const child = spawn(binary, ["serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd,
    env: { ...process.env, ...env, OPENCODE_PASSWORD: password, [ENV_PROBE]: "1" } as NodeJS.ProcessEnv,
    stdio: ["ignore", "ignore", "pipe"],
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 8_192) stderr += chunk
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    const url = `http://127.0.0.1:${port}`
    const deadline = Date.now() + READY_TIMEOUT_MS
    for (;;) {
      if (child.exitCode !== null) throw new Error(`\`${binary} serve\` exited (${child.exitCode}): ${stderr.trim().split("\n").pop() || "it printed nothing"}`)
      if (await get(url, password, "/api/info", cwd).then(() => true, () => false)) break
      if (Date.now() > deadline) throw new Error(`\`${binary} serve\` did not answer within ${READY_TIMEOUT_MS / 1000} s`)
      await sleep(200)
    }
    return await ask({ url, password, directory: cwd, source: "private serve" })
  } finally {
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    await exited
    clearTimeout(timer)
    fs.rmSync(cwd, { recursive: true, force: true })
  }
}

async function ask(at: { url: string; password: string | undefined; directory: string; source: Opencode2Probe["source"] }): Promise<Opencode2Probe> {
  const { url, password, directory } = at
  type Listed = { id?: string; source?: { type?: string }; features?: Record<string, boolean>; state?: { status?: string; error?: string } }
  let listed: Listed[] = []
  const deadline = Date.now() + LOAD_WAIT_MS
  for (;;) {
    const answer = (await get(url, password, "/api/plugin", directory)) as { data?: Listed[] }
    listed = (answer.data ?? []).filter((entry) => entry.source?.type !== "builtin")
    if (listed.length || Date.now() > deadline) break
    await sleep(250)
  }
  const ours = listed.find((entry) => entry.id === PLUGIN_ID)
  let registrations: HostRegistrations | undefined
  if (ours?.state?.status === "active") {
    const status = (await post(url, password, `/api/rpc/${PLUGIN_ID}/status`, { input: {} }, directory).catch(() => undefined)) as { output?: { registrations?: HostRegistrations } } | undefined
    registrations = status?.output?.registrations
  }
  const models = (((await get(url, password, "/api/model", directory).catch(() => ({}))) as { data?: Array<{ providerID?: string; modelID?: string; id?: string }> }).data ?? []).flatMap((m) =>
    m.providerID && (m.modelID ?? m.id) ? [`${m.providerID}/${m.modelID ?? m.id}`] : [],
  )
  return {
    source: at.source,
    ...(ours ? { plugin: { id: PLUGIN_ID, status: ours.state?.status ?? "unknown", ...(ours.state?.error ? { error: ours.state.error } : {}), features: ours.features ?? {} } } : {}),
    others: listed.filter((entry) => entry !== ours).map((entry) => entry.id ?? "?"),
    ...(registrations ? { registrations } : {}),
    models,
  }
}

function headers(password: string | undefined, directory: string): Record<string, string> {
  return { "x-opencode-directory": directory, ...(password ? { authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}` } : {}) }
}

async function get(url: string, password: string | undefined, route: string, directory: string): Promise<unknown> {
  const response = await fetch(`${url}${route}`, { headers: headers(password, directory), signal: AbortSignal.timeout(15_000) })
  if (!response.ok) throw new Error(`GET ${route} -> HTTP ${response.status}`)
  return response.json()
}

async function post(url: string, password: string | undefined, route: string, body: unknown, directory: string): Promise<unknown> {
  const response = await fetch(`${url}${route}`, { method: "POST", headers: { ...headers(password, directory), "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) })
  if (!response.ok) throw new Error(`POST ${route} -> HTTP ${response.status}`)
  return response.json()
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
