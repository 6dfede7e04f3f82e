// Golden files: rendered text compared byte for byte.
//   - UPDATE_GOLDEN=1 rewrites them after an intended change; review the diff like any other code.
//   - Otherwise a missing golden file fails the test. Outside CI it is also written, so the next
//     run compares against it once it has been reviewed; in CI (CI set to anything but "", "0" or
//     "false") nothing is ever written and UPDATE_GOLDEN is ignored, so CI only compares.
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

export function expectGolden(name: string, actual: string): void {
  expectGoldenFile(fileURLToPath(new URL(`./${name}`, import.meta.url)), actual)
}

export function expectGoldenFile(file: string, actual: string, env: NodeJS.ProcessEnv = process.env): void {
  const ci = isCi(env)
  if (!ci && env.UPDATE_GOLDEN === "1") fs.writeFileSync(file, actual)
  else if (!fs.existsSync(file)) {
    if (ci) throw new Error(`golden file ${file} is missing (CI writes no golden files)`)
    fs.writeFileSync(file, actual)
    throw new Error(`golden file ${file} was missing and has now been written: review it and run again`)
  }
  expect(actual).toBe(fs.readFileSync(file, "utf8"))
}

export function isCi(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI?.trim().toLowerCase()
  return value !== undefined && value !== "" && value !== "0" && value !== "false"
}
