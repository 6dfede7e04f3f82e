// The Host port over OpenCode 1.x's SDK client (the plugin input's `client`).
import type { PluginInput } from "@opencode-ai/plugin"
import { LOG_SERVICE } from "../constants.js"
import type { Host } from "../host.js"

export function createV1Host(client: PluginInput["client"]): Host {
  return {
    kind: "opencode1",
    async log(level, message, extra) {
      await client.app.log({ body: { service: LOG_SERVICE, level, message, ...(extra ? { extra } : {}) } })
    },
  }
}
