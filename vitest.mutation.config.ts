// The tests `npm run test:mutation` runs against each mutant (stryker.config.mjs): the fast unit
// and contract tests of the mutated modules only; no e2e, browser, PostgreSQL or long test, so a
// mutation run stays within its time on a 2-core machine. Stryker runs, per mutant, only the tests
// that cover it.
import { defineConfig } from "vitest/config";

/** The test files that state the behaviour of the mutated modules (stryker.config.mjs). */
export const MUTATION_TESTS = [
  // The audit, its records and signed heads, bundles.
  "test/loop/audit.test.ts",
  "test/loop/audit-heads.test.ts",
  "test/loop/audit-decides.test.ts",
  "test/loop/bundle.test.ts",
  // Records, canonical JSON, content refs, signatures, CIDs.
  "test/records/*.test.ts",
  "test/cid/*.test.ts",
  // Apply: the audit before it, containment of the target, the changeset's paths and digests.
  "test/library/changes.test.ts",
  "test/library/apply-*.test.ts",
  "test/adapters/contained-tree.test.ts",
  // The console's Host, token and Origin gates.
  "test/server/console-gates.test.ts",
];

export default defineConfig({
  test: {
    include: MUTATION_TESTS,
    env: { WARRANT_TEST_PG: "off" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup/isolated-config.ts"],
  },
});
