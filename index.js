// The package folder as OpenCode 2 resolves a plugin folder (`<dir>/server`, then `<dir>/index`;
// it never reads package.json for a folder): the same module package.json's main names.
export { default } from "./dist/src/index.js"
