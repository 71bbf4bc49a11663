import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/**/*.long.test.ts", "node_modules/**", "bench/peers/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Host keys made by tests (and by the CLI processes they spawn) go to a temporary folder.
    setupFiles: ["test/setup/isolated-config.ts"],
    // Most files wait on processes, sandboxes and servers rather than compute: two files at once
    // even on a 2-core machine (the default there would be one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
