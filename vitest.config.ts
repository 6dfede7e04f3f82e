import { defineConfig } from "vitest/config"

// Two projects, one after the other (sequence.groupOrder): fast unit tests, then end-to-end tests
// that start the real OpenCode binary. Unit files mostly wait (child processes, timers, SQLite),
// so four workers run them in about half the time of two on a two-core machine. E2e files run one
// at a time: two at a time took the project from 6.5 to 4.3 minutes, but under that load one
// consolidation in bad-runs.test.ts never started within its 90 s (1 run in 4), and a red CI
// lands nothing; their sandboxes and ports are already their own for the day that is understood.
export default defineConfig({
  test: {
    reporters: ["default", "./test/summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          // test/fixtures/ holds test files that tests run on purpose, in a child vitest (summary-reporter.test.ts).
          exclude: ["test/e2e/**", "test/fixtures/**"],
          testTimeout: 30_000,
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
