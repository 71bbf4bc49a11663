// The modules under mutation, in groups: each group's modules and the test files that state their
// behaviour. A group is run by Stryker on its own (scripts/stryker/run.mjs), against its own tests
// only, so a mutant of the audit is not judged by (nor waits for) the slower apply tests that
// merely pass through it. docs/testing.md has each module's score.

/** @type {readonly {name: string, mutate: string[], tests: string[]}[]} */
export const GROUPS = [
  {
    name: "audit",
    // The audit of a stored loop and of a bundle.
    mutate: [
      "src/core/loop/audit.ts",
      "src/core/loop/audit-heads.ts",
      "src/core/loop/audit-records.ts",
      "src/core/loop/bundle.ts",
    ],
    // Pure calls of the audit over cached rows (test/loop/audited-rows.ts): nothing is built or
    // signed first, and the slower audit tests that build loops are left to `npm test`.
    tests: [
      "test/loop/audit-heads-rules.test.ts",
      "test/loop/audit-records-rules.test.ts",
      "test/loop/audit-pass.test.ts",
      "test/loop/audit-locations.test.ts",
      "test/loop/bundle.test.ts",
    ],
  },
  {
    name: "containment",
    // The contained tree apply writes through, judged by its own unit tests.
    mutate: ["src/adapters/fs/contained-tree.ts"],
    tests: [
      "test/adapters/contained-tree.test.ts",
      "test/adapters/contained-tree-races.test.ts",
    ],
  },
  {
    name: "apply",
    // Apply: the audit before it, the order of its checks.
    mutate: ["src/library/apply-audit.ts", "src/library/changes.ts"],
    tests: ["test/library/changes.test.ts"],
  },
  {
    name: "records",
    // Canonical JSON, content refs, signatures; CIDs.
    mutate: [
      "src/core/records/canonical.ts",
      "src/core/records/content-ref.ts",
      "src/core/records/signature.ts",
      "src/core/cid/cid.ts",
    ],
    tests: ["test/records/*.test.ts", "test/cid/*.test.ts"],
  },
  {
    name: "console",
    // The Host allow-list; the gates (the token compare and the Host, token and Origin checks);
    // and, in the handler, the order the gates are passed in (the lines of `answer` before the
    // routes; the API routes are not here).
    mutate: [
      "src/server/allowed-hosts.ts",
      "src/server/gates.ts",
      "src/server/console-handler.ts:120-131",
    ],
    tests: ["test/server/console-gates.test.ts"],
  },
  {
    name: "loop",
    // The loop decider: limits, instants, the fold (state, spent, stop) and the projection.
    mutate: [
      "src/core/loop/decide.ts",
      "src/core/loop/limits.ts",
      "src/core/loop/time.ts",
      "src/core/loop/state.ts",
      "src/core/loop/project.ts",
    ],
    tests: [
      "test/loop/decide.test.ts",
      "test/loop/limits.test.ts",
      "test/loop/decider-*.test.ts",
      "test/loop/state-sharing.test.ts",
    ],
  },
  {
    name: "leases",
    // Lease rules, the memory store's leases and fenced writes, the fenced view; HIL answers.
    mutate: [
      "src/adapters/store/lease-rules.ts",
      "src/adapters/store/memory-ledger-store.ts:190-235",
      "src/adapters/store/memory-ledger-store.ts:311-316",
      "src/core/loop/fenced-store.ts",
      "src/runtime/hil.ts",
    ],
    tests: [
      "test/store/lease-rules.test.ts",
      "test/store/fenced-store.test.ts",
      "test/store/memory-ledger-store.test.ts",
      "test/runtime/hil*.test.ts",
    ],
  },
  {
    name: "taskpack",
    // Task-pack rules: workspace-relative paths, globs, patch parsing and applying, ignore and the
    // credential-name rule.
    mutate: [
      "src/core/taskpack/relative-path.ts",
      "src/core/taskpack/glob.ts",
      "src/core/taskpack/patch.ts",
      "src/core/taskpack/ignore.ts",
    ],
    tests: [
      "test/taskpack/relative-path.test.ts",
      "test/taskpack/glob.test.ts",
      "test/taskpack/patch.test.ts",
      "test/taskpack/patch-decides.test.ts",
      "test/taskpack/ignore.test.ts",
      "test/taskpack/ignore-env.test.ts",
    ],
  },
  {
    name: "diff",
    // Git-style unified diffs of whole files.
    mutate: ["src/core/taskpack/unified-diff.ts"],
    tests: ["test/taskpack/unified-diff.test.ts", "test/taskpack/unified-diff-edges.test.ts"],
  },
  {
    name: "definition",
    // The semantic rules of a definition beyond its schema.
    mutate: ["src/core/definition/rules.ts"],
    tests: ["test/definition/rules.test.ts", "test/definition/rules-limits.test.ts"],
  },
  {
    name: "turn",
    // Validation of one model turn.
    mutate: ["src/core/turn/validate-turn.ts"],
    tests: ["test/turn/validate-turn.test.ts", "test/turn/validate-turn-decides.test.ts"],
  },
  {
    name: "sandbox",
    // The sandbox's host-side confinement (a baseline read, host file access, tree walks), resource limits
    // (cgroup placement rules, the reporter, the disk watchdog; not the cgroup plumbing, lines
    // 83-317, which needs a delegated cgroup and the slow sandbox tests), the environment filter,
    // and which control files a bwrap command gets bound read-only.
    mutate: [
      "src/adapters/sandbox/confined-read.ts",
      "src/adapters/sandbox/host-fs.ts",
      "src/adapters/sandbox/tree-walk.ts",
      "src/adapters/sandbox/resource-limits.ts:16-82",
      "src/adapters/sandbox/resource-limits.ts:318-424",
      "src/adapters/sandbox/contained-exec.ts:56-66",
      "src/adapters/sandbox/control-files.ts",
      "src/core/taskpack/ignore.ts:15-15",
      "src/core/taskpack/command-env.ts",
    ],
    tests: [
      "test/sandbox/confinement-unit.test.ts",
      "test/sandbox/host-fs.test.ts",
      "test/sandbox/tree-walk.test.ts",
      "test/sandbox/tree-walk-refusals.test.ts",
      "test/sandbox/resource-limits.test.ts",
      "test/sandbox/env-filter.test.ts",
      "test/sandbox/control-files.test.ts",
      "test/taskpack/ignore-env.test.ts",
    ],
  },
  {
    name: "outer",
    // What stands outside a bwrap command in overlay mode: the command lines and fstab of its
    // outer steps, whether the shell sets limits, whether warrant-outer runs here, and the host's
    // side of a chain's gate and status (contained-exec.ts `hostSide`), and what the host accepts as
    // an environment's network namespace, against the tests that run warrant-outer, the shell's
    // steps and bwrap environments for real.
    mutate: [
      "src/adapters/sandbox/outer-shell.ts",
      "src/adapters/sandbox/contained-exec.ts:73-121",
      "src/adapters/sandbox/environment-netns.ts",
    ],
    tests: ["test/sandbox/outer-steps.test.ts", "test/sandbox/environment-netns.test.ts"],
    build: "node scripts/build-native.mjs",
  },
  {
    name: "egress",
    // The egress proxy's allow-list decision and its parsing: printable hosts, the HTTP head,
    // CONNECT and absolute-URI targets (not the socket plumbing, egress-connect.ts and
    // egress-proxy.ts, nor yet the SOCKS5 and HTTP handlers, egress-handlers.ts, whose mutants
    // mostly leave a client waiting until the timeout).
    mutate: ["src/adapters/sandbox/egress-rules.ts"],
    tests: ["test/sandbox/egress-proxy.test.ts"],
  },
];

/** The group named by MUTATION_GROUP (the first when unset). */
export function currentGroup() {
  const name = process.env.MUTATION_GROUP ?? GROUPS[0].name;
  const group = GROUPS.find((g) => g.name === name);
  if (group === undefined)
    throw new Error(
      `MUTATION_GROUP=${name} is not a group: ${GROUPS.map((g) => g.name).join(", ")}`,
    );
  return group;
}
