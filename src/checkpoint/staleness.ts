// A fact's status is derived whenever it is read, never stored (RFC §7): it is VALID only while
// every file it rests on still has the hash recorded with it, so a changed or unknown file can
// never leave a stale fact looking true.
import { artifactOf, type CheckpointV1, type FactRecord } from "./checkpoint.js"

export type FactStatus = "VALID" | "SUSPECT"

export interface FactVerdict {
  status: FactStatus
  /** The first dependency, in dependsOn order, that makes the fact SUSPECT. */
  why?: { uri: string; reason: "changed" | "unknown" }
}

export function factStatus(fact: FactRecord, current: (uri: string) => string | undefined): FactVerdict {
  for (const dep of fact.dependsOn) {
    const now = current(dep.uri)
    if (dep.hash === undefined || now === undefined) return { status: "SUSPECT", why: { uri: dep.uri, reason: "unknown" } }
    if (now !== dep.hash) return { status: "SUSPECT", why: { uri: dep.uri, reason: "changed" } }
  }
  return { status: "VALID" }
}

/** The hashes the host last recorded in the checkpoint, as `factStatus` reads current ones. */
export function recordedHashes(cp: CheckpointV1): (uri: string) => string | undefined {
  return (uri) => artifactOf(cp, uri)?.hash
}
