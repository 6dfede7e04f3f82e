// The storage, stage-1 and phase-2 job suites on Bun's driver, bun:sqlite, run inside the
// opencode binary acting as Bun.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { phase2Cases } from "./phase2-suite.js"
import { stage1Cases } from "./stage1-suite.js"
import { storageCases } from "./storage-suite.js"
import { opencodeBinary } from "../e2e/support/opencode.js"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const opencode = opencodeBinary()
const runner = fileURLToPath(new URL("./bun-runner.ts", import.meta.url))

describe("storage on bun:sqlite", () => {
  const results = new Map<string, { ok: boolean; error?: string }>()

  beforeAll(() => {
    const run = spawnSync(opencode, [runner], {
      cwd: repo,
      env: { ...process.env, BUN_BE_BUN: "1" },
      encoding: "utf8",
      timeout: 120_000,
    })
    for (const line of run.stdout.split("\n")) {
      if (line.startsWith("{")) {
        const result = JSON.parse(line) as { name: string; ok: boolean; error?: string }
        results.set(result.name, result)
      }
    }
    if (results.size === 0) throw new Error(`the Bun runner printed no results (status ${run.status}):\n${run.stderr}`)
  }, 150_000)

  const check = (name: string) => () => {
    const result = results.get(name)
    expect(result, "case did not run under Bun").toBeDefined()
    expect(result?.error ?? "").toBe("")
    expect(result?.ok).toBe(true)
  }

  for (const testCase of storageCases) it(testCase.name, check(testCase.name))

  describe("stage-1 jobs", () => {
    for (const testCase of stage1Cases) it(testCase.name, check(testCase.name))
  })

  describe("phase-2 jobs", () => {
    for (const testCase of phase2Cases) it(testCase.name, check(testCase.name))
  })
})
