// Prints one plain closing line, "N passed, N failed, N skipped", after vitest's own summary, so
// tools that read a run's last line need not parse vitest's formatting.
//
// "failed" counts everything that makes the run fail, not only failed tests: a beforeAll/afterAll
// hook that threw (vitest then reports the suite's tests as skipped), a test file that could not be
// loaded or collected (it has no tests at all), and each unhandled error. Without that, a broken
// setup would print "0 failed" while vitest exits non-zero.
import type { Reporter, SerializedError, TestModule } from "vitest/node"

export interface SummaryCounts {
  passed: number
  failed: number
  skipped: number
}

export function summarize(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): SummaryCounts {
  const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 }
  for (const module of testModules) {
    let failedHere = 0
    for (const test of module.children.allTests()) {
      const state = test.result().state
      if (state === "passed") counts.passed++
      else if (state === "failed") failedHere++
      else counts.skipped++
    }
    // Hook and collection errors sit on the module or suite that owns them, not on any test.
    for (const owner of [module, ...module.children.allSuites()]) if (owner.errors().length > 0) failedHere++
    // A module vitest marks failed must never sum to "0 failed", whatever the reason.
    if (failedHere === 0 && module.state() === "failed") failedHere = 1
    counts.failed += failedHere
  }
  return counts
}

export function summaryLine(counts: SummaryCounts): string {
  return `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    process.stdout.write(`\n${summaryLine(summarize(testModules, unhandledErrors))}\n`)
  }
}
