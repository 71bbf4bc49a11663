// `npm run test:unit`: the tests that need no containment backend (bwrap, unshare), no PostgreSQL
// and no build (dist/): the pure core, the memory and SQLite stores, models against the local wire
// server, tools, the library driven with the fake sandbox. Everything else runs in `npm test`.
import { defineConfig } from "vitest/config";

/** Test files that need the outside world, each with what it needs. */
const NEEDS_MORE = [
  "test/e2e/**", // the built CLI, bwrap, often PostgreSQL
  "test/sandbox/**", // the containment backends themselves
  "test/runtime/crash-points.test.ts", // bwrap (test/runtime/crash-points.ts)
  "test/runtime/environment-leftover.test.ts", // bwrap (test/runtime/harness.ts)
  "test/runtime/fencing.test.ts", // bwrap
  "test/runtime/mcp-passages.test.ts", // bwrap
  "test/runtime/policies.test.ts", // bwrap
  "test/runtime/profile-passages.test.ts", // bwrap
  "test/runtime/refusals.test.ts", // bwrap
  "test/cli/live-view.test.ts", // bwrap (the harness)
  "test/tools/profile-tools.test.ts", // a detected backend
  "test/tools/profile-tool-host.test.ts", // a detected backend
  "test/store/concurrency.test.ts", // writer processes on PostgreSQL
  "test/store/crash.test.ts", // a PostgreSQL writer killed
  "test/store/operator-acts.test.ts", // the built CLI, PostgreSQL
  "test/store/postgres-*.test.ts", // PostgreSQL
  "test/definition/cli.test.ts", // the built CLI
  "test/turn/turn-cli.test.ts", // the built CLI
  "test/loop/cli.test.ts", // the built CLI
  "test/index.test.ts", // the packed exports of dist/
  "test/standalone-validators.test.ts", // modules loaded from dist/
  "test/startup.test.ts", // the built CLI's start-up
  "test/readme-library.test.ts", // the packed tarball
  "test/server/console-api.test.ts", // the built CLI drives the loops the console reads
  "test/browser/**", // chromium, the built CLI and UI, PostgreSQL
  "test/library/host-key-processes.test.ts", // the built module in separate processes
  "test/eval/evals-run.test.ts", // a detected backend (the example tasks' runs)
  "test/eval/certify.test.ts", // a detected backend (the verifier's runs)
  "test/eval/eval-trace.test.ts", // a detected backend
];

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/**/*.long.test.ts", "node_modules/**", "bench/peers/**", ...NEEDS_MORE],
    // Files with a PostgreSQL part beside others (open-store) skip that part here.
    env: { WARRANT_TEST_PG: "off" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Host keys made by tests (and by the CLI processes they spawn) go to a temporary folder.
    setupFiles: ["test/setup/isolated-config.ts"],
  },
});
