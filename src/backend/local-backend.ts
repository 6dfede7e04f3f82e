// The memory folder on local disk, as the model-facing tools memory_read, memory_list and
// memory_search see it. One instance per memory root; it owns the search cache, so two plugin
// instances never share cached contents.
//
// The work is synchronous inside async methods. A warm search over a few thousand files takes
// about 20 ms, mostly one lstat per file (see search.ts); moving those stats to the thread pool
// costs as much main-thread time per call and adds latency. Only the first search after start
// (or after invalidate()) reads the folder, about 0.2 s for 20 MB.
import { listMemoryFolder } from "./list.js"
import { readMemoryFile } from "./read.js"
import { searchMemory } from "./search.js"
import { FileCache } from "./search-cache.js"
import { FolderCache } from "./search-walk.js"
import type { ListRequest, ListResult, ReadRequest, ReadResult, SearchRequest, SearchResult } from "./requests.js"

export class LocalMemoryBackend {
  private readonly root: string
  private readonly caches = { files: new FileCache(), folders: new FolderCache() }

  constructor(options: { root: string }) {
    this.root = options.root
  }

  async read(request: ReadRequest): Promise<ReadResult> {
    return readMemoryFile(this.root, request)
  }

  async list(request: ListRequest): Promise<ListResult> {
    return listMemoryFolder(this.root, request)
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    return searchMemory(this.root, this.caches, request)
  }

  /** Drop cached file contents (called after the plugin itself rewrote the folder). */
  invalidate(): void {
    this.caches.files.clear()
    this.caches.folders.clear()
  }
}
