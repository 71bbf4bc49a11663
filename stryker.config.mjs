// `npm run test:mutation`: StrykerJS mutates the security-critical modules listed below and runs
// the tests of vitest.mutation.config.ts against each mutant. Reports: reports/mutation/mutation.json
// and mutation.html; incremental (only mutants whose code or tests changed are run again, from
// reports/mutation/incremental.json). One mutant at a time by default (STRYKER_CONCURRENCY to
// change): the machine this must fit has 2 cores. Iterate on one group with
// `npx stryker run --mutate src/core/loop/bundle.ts`.

/** The modules under mutation, by concern (docs/testing.md has each one's score). */
export const MUTATED = [
  // The audit of a stored loop and of a bundle.
  "src/core/loop/audit.ts",
  "src/core/loop/audit-heads.ts",
  "src/core/loop/audit-records.ts",
  "src/core/loop/bundle.ts",
  // Apply: the audit before it and the contained target.
  "src/library/changes.ts",
  "src/library/apply-audit.ts",
  "src/adapters/fs/contained-tree.ts",
  // Records: canonical JSON, content refs, signatures; CIDs.
  "src/core/records/canonical.ts",
  "src/core/records/content-ref.ts",
  "src/core/records/signature.ts",
  "src/core/cid/cid.ts",
  // The console's gates: the Host allow-list, and in the handler the token compare and the
  // Host, token and Origin checks (the lines of those functions only; the API routes are not here).
  "src/server/allowed-hosts.ts",
  "src/server/console-handler.ts:104-109",
  "src/server/console-handler.ts:440-473",
];

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/*", "./scripts/stryker/ignore-messages.mjs"],
  ignorers: ["warrant-messages"],
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  // STRYKER_TYPECHECK=0 skips the checker (faster; a mutant that does not compile then runs).
  checkers: process.env.STRYKER_TYPECHECK === "0" ? [] : ["typescript"],
  // The checker compiles src only (tests are run, not type-checked, against a mutant).
  tsconfigFile: "tsconfig.mutation.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // The checker plugin needs TypeScript's JavaScript API, which TypeScript 7 does not have.
  checkerNodeArgs: ["--import", "./scripts/stryker/typescript-api.mjs"],
  mutate: MUTATED,
  coverageAnalysis: "perTest",
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  reporters: ["json", "html", "clear-text", "progress"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  ignorePatterns: ["dist", "reports", "coverage", "test-results", "bench/peers", "docs", ".warrant"],
  timeoutMS: 20_000,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
