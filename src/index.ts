// One module for both hosts. OpenCode 1.x loads the default export through `server` and ignores
// `setup`; OpenCode 2 loads it through `setup` (its loader requires `{ id, setup }`) and ignores
// `server`. OpenCode 1 loads every export of this module as a plugin, so there is exactly one.
import { PLUGIN_ID } from "./constants.js"
import { server } from "./v1/plugin.js"
import { createV2Setup } from "./v2/plugin.js"

/** The definition owns its OpenCode 2 runtime: the locations of one OpenCode 2 process share it. */
function definePlugin() {
  return { id: PLUGIN_ID, server, setup: createV2Setup({ env: process.env }) }
}

export default definePlugin()
