// The closing line and the exit code are what CI reads, so both are checked on real vitest runs:
// each fixture under test/fixtures/reporter/ is run by vitest in a child process with the summary
// reporter, and every way a run can break must show up in "failed" and in a non-zero exit code.
import { spawn } from "node:child_process"
import fs from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import type { TestModule } from "vitest/node"
import { summarize, summaryLine } from "./summary-reporter.js"

const repo = fileURLToPath(new URL("..", import.meta.url))
const config = path.join(repo, "test", "fixtures", "reporter", "vitest.config.ts")
const vitestBin = path.join(path.dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs")
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "summary-reporter-"))

afterAll(() => fs.rmSync(temp, { recursive: true, force: true }))

interface Run {
  code: number | null
  lastLine: string
  output: string
}

function runFixture(fixture: string, env: Record<string, string> = {}): Promise<Run> {
  // The child must not think it is a worker of this run.
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST")))
  const child = spawn(process.execPath, [vitestBin, "run", "--config", config, `${fixture}.fixture.ts`], {
    cwd: repo,
    env: { ...base, CI: "", UPDATE_GOLDEN: "", NO_COLOR: "1", FORCE_COLOR: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  })
  // The closing line is the last of stdout. vitest writes its failure report to stderr, and two
  // pipes read here have no order between them, so the last line of both together is not a check.
  let stdout = ""
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString()
    output += chunk.toString()
  })
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code) => {
      const lines = stdout.trimEnd().split("\n")
      resolve({ code, lastLine: lines[lines.length - 1] ?? "", output })
    })
  })
}

describe("summary line and exit code of real vitest runs", { timeout: 60_000 }, () => {
  it("a clean run: passed and deliberately skipped tests, exit 0", async () => {
    const run = await runFixture("passing")
    expect(run.lastLine, run.output).toBe("1 passed, 0 failed, 1 skipped")
    expect(run.code).toBe(0)
  })

  it("a failed test", async () => {
    const run = await runFixture("failing-test")
    expect(run.lastLine, run.output).toBe("1 passed, 1 failed, 0 skipped")
    expect(run.code).toBe(1)
  })

  it("a beforeAll that throws counts as failed, though vitest marks its tests skipped", async () => {
    const run = await runFixture("before-all")
    expect(run.lastLine, run.output).toBe("0 passed, 1 failed, 2 skipped")
    expect(run.code).toBe(1)
  })

  it("an afterAll that throws after every test passed", async () => {
    const run = await runFixture("after-all")
    expect(run.lastLine, run.output).toBe("1 passed, 1 failed, 0 skipped")
    expect(run.code).toBe(1)
  })

  it("a test file that throws while loading", async () => {
    const run = await runFixture("import-throws")
    expect(run.lastLine, run.output).toBe("0 passed, 1 failed, 0 skipped")
    expect(run.code).toBe(1)
  })

  it("an unhandled rejection after a passing test", async () => {
    const run = await runFixture("unhandled")
    expect(run.lastLine, run.output).toBe("1 passed, 1 failed, 0 skipped")
    expect(run.code).toBe(1)
  })

  it("a missing golden file in CI fails and writes nothing", async () => {
    const golden = path.join(temp, "ci.golden.txt")
    const run = await runFixture("missing-golden", { CI: "true", GOLDEN_FIXTURE_FILE: golden })
    expect(run.lastLine, run.output).toBe("0 passed, 1 failed, 0 skipped")
    expect(run.output).toContain("CI writes no golden files")
    expect(run.code).toBe(1)
    expect(fs.existsSync(golden)).toBe(false)
  })

  it("a missing golden file outside CI fails too, and is written for review", async () => {
    const golden = path.join(temp, "local.golden.txt")
    const first = await runFixture("missing-golden", { GOLDEN_FIXTURE_FILE: golden })
    expect(first.lastLine, first.output).toBe("0 passed, 1 failed, 0 skipped")
    expect(first.code).toBe(1)
    expect(fs.readFileSync(golden, "utf8")).toBe("rendered text\n")
    const second = await runFixture("missing-golden", { GOLDEN_FIXTURE_FILE: golden })
    expect(second.lastLine, second.output).toBe("1 passed, 0 failed, 0 skipped")
    expect(second.code).toBe(0)
  })
})

describe("summarize", () => {
  it("counts a module vitest marks failed even when no test or hook carries the error", () => {
    const module = {
      children: { allTests: function* () {}, allSuites: function* () {} },
      errors: () => [],
      state: () => "failed",
    } as unknown as TestModule
    expect(summaryLine(summarize([module], []))).toBe("0 passed, 1 failed, 0 skipped")
  })
})
