// The Host the CLI gives the memory core: it never talks to OpenCode (the CLI works with
// OpenCode closed, and never opens OpenCode's database), so every session call refuses.
import type { Host } from "../host.js"

export function cliHost(): Host {
  const refuse = async (): Promise<never> => {
    throw new Error("the command-line tool does not talk to OpenCode")
  }
  return {
    kind: "opencode1",
    log: async () => undefined,
    listRootSessions: refuse,
    sessionExists: refuse,
    loadMessages: refuse,
    createSession: refuse,
    prompt: refuse,
    abortSession: refuse,
    deleteSession: refuse,
    contextLimit: async () => undefined,
    modelVariants: async () => [],
    mcpServers: async () => [],
  }
}
