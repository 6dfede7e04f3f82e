// Which tool calls bring outside content into a session: OpenCode's web tools, and tools of MCP
// servers (named `<server>_<tool>`). The MCP server list comes from one cached, single-flight,
// time-bounded call; when it cannot be had, a tool is not counted as MCP (the session stays
// learnable rather than the turn waiting on it).
import type { Host } from "../../host.js"

const WEB_TOOLS = new Set(["webfetch", "websearch", "codesearch"])
/** OpenCode's own tools, and this plugin's: never MCP. */
const LOCAL_TOOLS = new Set(["bash", "edit", "glob", "grep", "list", "lsp", "patch", "read", "skill", "task", "todoread", "todowrite", "write", "question", "invalid", "multiedit"])

export const MCP_CACHE_MS = 60_000
export const MCP_TIMEOUT_MS = 5_000

export class ExternalContext {
  private cached: { at: number; prefixes: string[] } | undefined
  private inFlight: Promise<string[]> | undefined

  constructor(
    private readonly host: Host,
    private readonly now: () => number,
  ) {}

  async isExternal(tool: string): Promise<boolean> {
    if (WEB_TOOLS.has(tool)) return true
    if (LOCAL_TOOLS.has(tool) || tool.startsWith("memory_")) return false
    const prefixes = await this.mcpPrefixes()
    return prefixes.some((prefix) => tool.startsWith(prefix))
  }

  private async mcpPrefixes(): Promise<string[]> {
    if (this.cached && this.now() - this.cached.at < MCP_CACHE_MS) return this.cached.prefixes
    this.inFlight ??= this.host
      .mcpServers(AbortSignal.timeout(MCP_TIMEOUT_MS))
      .then((names) => {
        // OpenCode replaces characters outside [A-Za-z0-9_-] in server names when naming tools.
        const prefixes = names.map((name) => `${name.replace(/[^A-Za-z0-9_-]/g, "_")}_`)
        this.cached = { at: this.now(), prefixes }
        return prefixes
      })
      .catch(() => [])
      .finally(() => {
        this.inFlight = undefined
      })
    return this.inFlight
  }
}
