// OpenCode 2's TUI part, where it looks for it in a plugin folder (`<dir>/tui`).
export { default } from "./dist/src/v2/tui.js"
