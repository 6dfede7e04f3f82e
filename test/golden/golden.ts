// Golden files: rendered text compared byte for byte. Run with UPDATE_GOLDEN=1 to rewrite them
// after an intended change, then review the diff like any other code change.
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

export function expectGolden(name: string, actual: string): void {
  const file = fileURLToPath(new URL(`./${name}`, import.meta.url))
  if (process.env.UPDATE_GOLDEN === "1" || !fs.existsSync(file)) {
    if (process.env.CI && !fs.existsSync(file)) throw new Error(`golden file ${name} is missing`)
    fs.writeFileSync(file, actual)
  }
  expect(actual).toBe(fs.readFileSync(file, "utf8"))
}
