import { describe, expect, it } from "vitest"
import { observeArtifact, type FactRecord } from "../../src/checkpoint/checkpoint.js"
import { factStatus, recordedHashes } from "../../src/checkpoint/staleness.js"
import { applied, observedSession } from "./build.js"

const fact = (dependsOn: FactRecord["dependsOn"]): FactRecord => ({ key: "k", value: "v", evidence: { source: "file", ref: "a.ts" }, dependsOn, lastTouchedSeq: 1 })
const hashes = (map: Record<string, string>) => (uri: string) => map[uri]

describe("factStatus", () => {
  it("is VALID while every dependency still has its recorded hash", () => {
    expect(factStatus(fact([{ uri: "a.ts", hash: "h1" }, { uri: "b.ts", hash: "h2" }]), hashes({ "a.ts": "h1", "b.ts": "h2" }))).toEqual({ status: "VALID" })
  })

  it("is SUSPECT when a file changed, naming the first failing dependency", () => {
    const deps = [{ uri: "a.ts", hash: "h1" }, { uri: "b.ts", hash: "h2" }, { uri: "c.ts", hash: "h3" }]
    expect(factStatus(fact(deps), hashes({ "a.ts": "h1", "b.ts": "new", "c.ts": "new" }))).toEqual({ status: "SUSPECT", why: { uri: "b.ts", reason: "changed" } })
  })

  it("is SUSPECT when a hash is unknown: not recorded with the fact, or not known now", () => {
    expect(factStatus(fact([{ uri: "a.ts" }]), hashes({ "a.ts": "h1" }))).toEqual({ status: "SUSPECT", why: { uri: "a.ts", reason: "unknown" } })
    expect(factStatus(fact([{ uri: "a.ts", hash: "h1" }, { uri: "b.ts", hash: "h2" }]), hashes({ "a.ts": "h1" }))).toEqual({
      status: "SUSPECT",
      why: { uri: "b.ts", reason: "unknown" },
    })
  })

  it("is VALID for a fact without dependencies (the user said it)", () => {
    expect(factStatus(fact([]), () => undefined)).toEqual({ status: "VALID" })
  })

  it("follows the host's observations through recordedHashes", () => {
    let cp = applied(observedSession(), { fact: { key: "k", value: "v", evidence: { source: "file", ref: "src/auth.ts" }, depends_on: ["src/auth.ts"] } })
    expect(factStatus(cp.facts.k!, recordedHashes(cp)).status).toBe("VALID")
    cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "edit", hash: "sha256:changed", callId: "c9" })
    expect(factStatus(cp.facts.k!, recordedHashes(cp))).toEqual({ status: "SUSPECT", why: { uri: "src/auth.ts", reason: "changed" } })
    cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "read", callId: "c10" })
    expect(factStatus(cp.facts.k!, recordedHashes(cp)).why?.reason).toBe("unknown")
    cp = observeArtifact(cp, { uri: "src/auth.ts", kind: "file", op: "read", hash: "sha256:1111aaaa2222", callId: "c11" })
    expect(factStatus(cp.facts.k!, recordedHashes(cp)).status).toBe("VALID")
    expect(recordedHashes(cp)("constructor")).toBeUndefined()
  })
})
