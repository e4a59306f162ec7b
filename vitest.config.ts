import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The fault suite kills and stops its own servers: `npm run test:faults` (vitest.faults.config.ts).
    exclude: ["test/faults/**", "**/node_modules/**"],
    pool: "forks",
    testTimeout: 20_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
