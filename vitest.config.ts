import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/**/*.long.test.ts", "node_modules/**", "bench/peers/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
