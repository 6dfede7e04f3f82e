import { defineConfig } from "vitest/config"

// Two projects, one after the other (sequence.groupOrder): fast unit tests, then end-to-end tests
// that start the real OpenCode binary. Unit files mostly wait (child processes, timers, SQLite),
// so four workers run them in about half the time of two on a two-core machine. E2e files run
// two at a time: each has its own sandbox, home and ports (serve ports from below the ephemeral
// range), and the one that missed its deadline under that load (bad-runs.test.ts) met phase 1's
// gate dropping a trigger, which phase 1 now puts off instead (D12).
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
          // Test files of a worker share its imported modules instead of importing them again for
          // each file: half the project's CPU time. Safe because no module in src/ holds state
          // (test/architecture.test.ts), and no unit test mocks a module.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
