// Discovery of OpenCode 2's registered local service: where the registration is read, the
// readiness routes tried and their order, and which services are refused.
import { describe, expect, it } from "vitest"
import { discoverService, isLoopback, registrationFile, ServiceClient } from "../../src/util/opencode-service.js"
import { isContextOverflow } from "../../src/write/helpers/overflow.js"

const signal = () => AbortSignal.timeout(5_000)

/** A stub fetch: each route answers with the given status (and a body naming a PID). */
function stubFetch(routes: Record<string, number | { status: number; pid: number }>, seen: string[] = []): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input))
    seen.push(`${url.pathname} ${(init?.headers as Record<string, string> | undefined)?.authorization ?? "-"}`)
    const answer = routes[url.pathname] ?? 404
    const status = typeof answer === "number" ? answer : answer.status
    const pid = typeof answer === "number" ? 4242 : answer.pid
    return new Response(JSON.stringify({ version: "2.0.24", pid, urls: [] }), { status })
  }) as typeof fetch
}

const registration = (url: string, pid = 4242) => () => JSON.stringify({ id: "x", version: "2.0.24", url, pid, password: "pw" })
const deps = (routes: Parameters<typeof stubFetch>[0], options: { url?: string; pid?: number; seen?: string[]; registeredPid?: number } = {}) => ({
  env: { XDG_STATE_HOME: "/state" },
  homedir: "/home/u",
  pid: options.pid ?? 4242,
  fetch: stubFetch(routes, options.seen),
  readFile: registration(options.url ?? "http://127.0.0.1:49374", options.registeredPid),
})

describe("registrationFile", () => {
  it("is service.json in OpenCode's state folder, per channel for others", () => {
    expect(registrationFile({ XDG_STATE_HOME: "/state" }, "/home/u", "latest")).toBe("/state/opencode/service.json")
    expect(registrationFile({}, "/home/u", undefined)).toBe("/home/u/.local/state/opencode/service.json")
    expect(registrationFile({}, "/home/u", "local build")).toBe("/home/u/.local/state/opencode/service-local_build.json")
  })
})

describe("discoverService", () => {
  it("asks /api/info first, with the registered password", async () => {
    const seen: string[] = []
    const state = await discoverService(deps({ "/api/info": 200 }, { seen }), signal())
    expect(state).toMatchObject({ state: "ready", route: "/api/info" })
    expect(seen).toEqual([`/api/info Basic ${Buffer.from("opencode:pw").toString("base64")}`])
  })

  it("falls back to /api/status and then /api/health only when the route before answers 404", async () => {
    const seen: string[] = []
    expect(await discoverService(deps({ "/api/health": 200 }, { seen }), signal())).toMatchObject({ state: "ready", route: "/api/health" })
    expect(seen.map((line) => line.split(" ")[0])).toEqual(["/api/info", "/api/status", "/api/health"])
    expect(await discoverService(deps({ "/api/status": 200 }), signal())).toMatchObject({ state: "ready", route: "/api/status" })
  })

  it("does not fall back past an error other than 404", async () => {
    const seen: string[] = []
    const state = await discoverService(deps({ "/api/info": 500, "/api/health": 200 }, { seen }), signal())
    expect(state).toMatchObject({ state: "unavailable", reason: expect.stringContaining("/api/info: HTTP 500") })
    expect(seen).toHaveLength(1)
  })

  it("accepts a loopback service in another process", async () => {
    expect(await discoverService(deps({ "/api/info": 200 }, { pid: 1 }), signal())).toMatchObject({ state: "ready" })
    expect(await discoverService(deps({ "/api/info": 200 }, { pid: 1, url: "http://[::1]:49374" }), signal())).toMatchObject({ state: "ready" })
  })

  it("refuses a service off the loopback in another process, and takes one that is this process", async () => {
    const remote = await discoverService(deps({ "/api/info": 200 }, { pid: 1, url: "http://10.0.0.5:49374" }), signal())
    expect(remote).toMatchObject({ state: "unavailable", reason: expect.stringContaining("not on this machine's loopback") })
    expect(await discoverService(deps({ "/api/info": 200 }, { url: "http://10.0.0.5:49374" }), signal())).toMatchObject({ state: "ready" })
  })

  it("refuses a registration whose service answers with another PID (a stale file)", async () => {
    const state = await discoverService(deps({ "/api/info": { status: 200, pid: 777 } }), signal())
    expect(state).toMatchObject({ state: "unavailable", reason: expect.stringContaining("the registration is stale") })
  })

  it("says why when there is no registration, or it is unreadable", async () => {
    const missing = await discoverService({ ...deps({}), readFile: () => { throw Object.assign(new Error("nope"), { code: "ENOENT" }) } }, signal())
    expect(missing).toMatchObject({ state: "unavailable", reason: expect.stringContaining("no OpenCode service is registered (/state/opencode/service.json does not exist)") })
    const broken = await discoverService({ ...deps({}), readFile: () => "{not json" }, signal())
    expect(broken).toMatchObject({ state: "unavailable", reason: expect.stringContaining("is unreadable") })
    const noPid = await discoverService({ ...deps({}), readFile: () => JSON.stringify({ url: "http://127.0.0.1:1" }) }, signal())
    expect(noPid).toMatchObject({ state: "unavailable", reason: expect.stringContaining("lacks a url or a pid") })
  })

  it("says a service that cannot be reached is not ready", async () => {
    const state = await discoverService({ ...deps({}), fetch: (async () => { throw new Error("connect ECONNREFUSED") }) as typeof fetch }, signal())
    expect(state).toMatchObject({ state: "unavailable", reason: expect.stringContaining("ECONNREFUSED") })
  })
})

describe("isLoopback", () => {
  it("knows 127.0.0.0/8, ::1 and localhost", () => {
    expect(["127.0.0.1", "127.9.8.7", "::1", "[::1]", "localhost"].every(isLoopback)).toBe(true)
    expect(["10.0.0.1", "example.com", "128.0.0.1", "0.0.0.0"].some(isLoopback)).toBe(false)
  })
})

describe("ServiceClient errors", () => {
  it("keeps the body of a refused generation, so a context overflow can be told from other failures", async () => {
    const refusal = JSON.stringify({ error: { code: "context_length_exceeded", message: "This model's maximum context length is 16000 tokens." } })
    const fetchImpl = (async () => new Response(refusal, { status: 400 })) as typeof fetch
    const client = new ServiceClient({ url: "http://127.0.0.1:49374", pid: 4242, password: "pw" } as never, fetchImpl)
    const error = await client.generateText({ prompt: "x" }, signal()).catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({ status: 400, responseBody: refusal })
    expect(isContextOverflow({ status: 400, name: "Error", message: (error as Error).message, body: (error as { responseBody: string }).responseBody })).toBe(true)
  })
})
