import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.long.test.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Host keys made by tests (and by the CLI processes they spawn) go to a temporary folder.
    setupFiles: ["test/setup/isolated-config.ts"],
  },
});
