// StrykerJS for one group of scripts/stryker/groups.mjs (MUTATION_GROUP; `npm run test:mutation`
// runs every group through scripts/stryker/run.mjs and merges their reports into
// reports/mutation/mutation.json and mutation.html). Each group mutates its modules and runs its
// own tests (vitest.mutation.config.ts), keeps its report in reports/mutation/GROUP/ and its
// incremental file in scripts/stryker/incremental/GROUP.json: that file is committed, so that a run
// from a clean clone tests again only the mutants whose code or covering tests changed since it was
// written. One mutant at a time by default (STRYKER_CONCURRENCY to change): the machine this must
// fit has 2 cores.
import { currentGroup } from "./scripts/stryker/groups.mjs";

const group = currentGroup();
const dir = `reports/mutation/${group.name}`;

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
  mutate: group.mutate,
  // A group whose tests run the package's C programs builds them in the sandbox (dist is not copied).
  ...(group.build === undefined ? {} : { buildCommand: group.build }),
  coverageAnalysis: "perTest",
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  incremental: true,
  incrementalFile: `scripts/stryker/incremental/${group.name}.json`,
  reporters: ["json", "html", "clear-text", "progress"],
  jsonReporter: { fileName: `${dir}/mutation.json` },
  htmlReporter: { fileName: `${dir}/mutation.html` },
  ignorePatterns: ["dist", "reports", "scripts/stryker/incremental", "coverage", "test-results", "bench/peers", "docs", ".warrant"],
  timeoutMS: 20_000,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
