// OpenCode 1.x entry: `server(input, options)` builds one memory instance and its hooks.
// It awaits nothing from OpenCode's API: OpenCode cannot answer while it is still loading
// plugins, so start-up work is deferred until after the hooks are returned.
import os from "node:os"
import type { Hooks, Plugin } from "@opencode-ai/plugin"
import { createGuard } from "../guard.js"
import { Memory } from "../memory.js"
import { redactText } from "../redact/redact.js"
import { memoryDisabled } from "../util/paths.js"
import { createV1Host } from "./host.js"
import { createV1Hooks } from "./hooks.js"

export const server: Plugin = async (input, options) => {
  if (memoryDisabled(process.env)) return {} satisfies Hooks
  const host = createV1Host(input.client)
  let memory: Memory
  try {
    memory = new Memory(options, { host, env: process.env, homedir: os.homedir(), directory: input.directory })
  } catch (error) {
    // Without an instance there is nothing to run; OpenCode goes on as if the plugin were absent.
    host.log("error", redactText(`opencode-codex-memory disabled: ${(error as Error).message}`)).catch(() => undefined)
    return {} satisfies Hooks
  }
  const timer = setTimeout(() => void memory.start(), 0)
  timer.unref?.()
  return createV1Hooks(memory, createGuard({ diagnostics: memory.diagnostics, faults: memory.faults }))
}
