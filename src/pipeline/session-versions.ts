// Which memory version each session reads. A session's first real use (an injection, a memory
// tool, a note, a citation) stamps it with the selected version in the catalog, so a later change
// of the `version` option affects new sessions only, and a resumed session keeps its namespace
// across reloads and processes. Status reads peek without stamping.
import type { MemoryStore } from "../store/memory-store.js"
import type { MemoryVersion } from "../util/paths.js"

/** Stamps cached per instance; past this many sessions the cache starts over. */
const CACHE_MAX = 10_000

export class SessionVersions {
  private readonly cache = new Map<string, MemoryVersion>()

  constructor(
    private readonly deps: {
      catalog: () => MemoryStore | undefined
      /** The `version` option: what an unstamped session reads, and is stamped with. */
      selected: MemoryVersion
      onError: (error: unknown) => void
    },
  ) {}

  /**
   * The version `sessionId` reads. With `stamp`, an unstamped session is stamped now. Without a
   * catalog (the database failed) it is the selected version, unstamped: memory stays usable.
   */
  resolve(sessionId: string | undefined, options: { stamp: boolean }): MemoryVersion {
    const { selected } = this.deps
    if (!sessionId) return selected
    const cached = this.cache.get(sessionId)
    if (cached) return cached
    const catalog = this.deps.catalog()
    if (!catalog) return selected
    try {
      const version = options.stamp ? catalog.stampVersion(sessionId, selected) : catalog.stampedVersion(sessionId)
      if (!version) return selected
      if (this.cache.size >= CACHE_MAX) this.cache.clear()
      this.cache.set(sessionId, version)
      return version
    } catch (error) {
      this.deps.onError(error)
      return selected
    }
  }

  clear(): void {
    this.cache.clear()
  }
}
