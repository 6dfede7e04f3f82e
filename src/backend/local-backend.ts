// The memory folder on local disk, as the model-facing tools memory_read, memory_list and
// memory_search see it. One instance per memory root; it owns the search cache, so two plugin
// instances never share cached contents.
//
// The work is synchronous inside async methods. A warm search over a few thousand files takes
// about 20 ms, mostly one lstat per file (see search.ts); moving those stats to the thread pool
// costs as much main-thread time per call and adds latency. Only the first search after start
// (or after invalidate()) reads the folder, about 0.2 s for 20 MB.
//
// Every answer quotes the folder redacted, in every mode (search.ts's header says how matching
// follows): the text of memory_read and of each match, and every path shown.
import { listMemoryFolder } from "./list.js"
import { readMemoryFile } from "./read.js"
import { searchMemory, SEARCH_MAX_RESULTS } from "./search.js"
import { FileCache } from "./search-cache.js"
import { FolderCache } from "./search-walk.js"
import { RANKED_DEFAULT_RESULTS, RankedIndex, type RankedIndexOptions } from "./ranked-search.js"
import { wholeNumber } from "./search-args.js"
import type { ListRequest, ListResult, ReadRequest, ReadResult, SearchRequest, SearchResult } from "./requests.js"

export class LocalMemoryBackend {
  private readonly view: () => string
  private readonly caches = { files: new FileCache(), folders: new FolderCache() }
  /** The ranked mode's index: in the plugin's own database file, else one kept in the process. */
  readonly ranked: RankedIndex

  /**
   * `view` names the folder to read at each call, when it is not always `root`: while a
   * consolidation is unfinished, the copy it keeps (write/run-snapshot.ts readableRoot).
   */
  constructor(options: { root: string; view?: () => string; index?: Omit<RankedIndexOptions, "root" | "view"> }) {
    const { root, view } = options
    this.view = view ?? (() => root)
    this.ranked = new RankedIndex({ file: ":memory:", ...options.index, root, ...(view ? { view } : {}) })
  }

  async read(request: ReadRequest): Promise<ReadResult> {
    return readMemoryFile(this.view(), request, this.caches.files)
  }

  async list(request: ListRequest): Promise<ListResult> {
    return listMemoryFolder(this.view(), request)
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    if (request.match_mode !== "ranked") return searchMemory(this.view(), this.caches, request)
    const max = wholeNumber(request.max_results, "max_results", { min: 1, max: SEARCH_MAX_RESULTS, fallback: RANKED_DEFAULT_RESULTS })
    return this.ranked.search(request, max)
  }

  /** Drop cached file contents (called after the plugin itself rewrote the folder). */
  invalidate(): void {
    this.caches.files.clear()
    this.caches.folders.clear()
    this.ranked.invalidate()
  }
}
