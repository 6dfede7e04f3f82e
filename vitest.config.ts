import { defineConfig } from "vitest/config"

// Two projects, one after the other (sequence.groupOrder): fast unit tests, then end-to-end tests
// that start the real OpenCode binary. The worker counts are measured on a two-core machine: unit
// files mostly wait (child processes, timers, SQLite), so four workers run them in about half the
// time of two; e2e files are CPU-bound OpenCode processes, so two at a time, on sandboxes and ports
// of their own, is what the cores carry.
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
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
