// The tests Stryker runs against each mutant of one group (MUTATION_GROUP, scripts/stryker/
// groups.mjs): the fast unit and contract tests that state the behaviour of that group's modules;
// no e2e, browser, PostgreSQL or long test. Per mutant, only the tests that cover it run.
import { defineConfig } from "vitest/config";
import { currentGroup } from "./scripts/stryker/groups.mjs";

export default defineConfig({
  test: {
    include: currentGroup().tests,
    env: { WARRANT_TEST_PG: "off" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup/isolated-config.ts"],
  },
});
