import { defineConfig } from "vitest/config"

// Two projects: fast unit tests, and end-to-end tests that start the real OpenCode binary.
// The e2e files run one at a time: each starts OpenCode processes, and the machines here have two cores.
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
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
})
