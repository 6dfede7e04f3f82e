// One module for both hosts: the default export is `{ id, server, setup }`.
//   - OpenCode 1.x runs memory through `server`. Its own V2 loader converts the config's `plugin`
//     list and calls `setup` too, with a context of registration domains only: `setup` then adds
//     the helper agents to that registry and nothing else (src/v2/runtime.ts).
//   - OpenCode 2 loads `{ id, setup }` and runs memory through `setup`, once per location.
// OpenCode 1 loads every export of this module as a plugin, so there is exactly one.
import { PLUGIN_ID } from "./constants.js"
import { server } from "./v1/plugin.js"
import { createV2Setup } from "./v2/plugin.js"

/** The definition owns its OpenCode 2 runtime: the locations of one OpenCode 2 process share it. */
function definePlugin() {
  return { id: PLUGIN_ID, server, setup: createV2Setup({ env: process.env }) }
}

export default definePlugin()
