// OpenCode loads every export of this module as a plugin, so the module exports exactly one value.
import { PLUGIN_ID } from "./constants.js"
import { server } from "./v1/plugin.js"

export default { id: PLUGIN_ID, server }
