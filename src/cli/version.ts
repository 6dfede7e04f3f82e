// This package's version, from its package.json (found from the module's location).
import fs from "node:fs"
import path from "node:path"
import { packageRoot } from "../util/package-root.js"

export function packageVersion(): string {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(packageRoot(), "package.json"), "utf8")) as { version?: unknown }
    return typeof json.version === "string" ? json.version : "unknown"
  } catch {
    return "unknown"
  }
}
