import { defineConfig } from "vitest/config";

/** `npm run test:faults`: private Redis/PostgreSQL processes killed and stopped; one file at a time. */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
