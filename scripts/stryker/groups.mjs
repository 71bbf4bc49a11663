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
      "test/loop/bundle.test.ts",
    ],
  },
  {
    name: "containment",
    // The contained tree apply writes through, judged by its own unit tests.
    mutate: ["src/adapters/fs/contained-tree.ts"],
    tests: ["test/adapters/contained-tree.test.ts"],
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
    // The Host allow-list; in the handler, the token compare and the Host, token and Origin
    // checks (the lines of those functions; the API routes are not here).
    mutate: [
      "src/server/allowed-hosts.ts",
      "src/server/console-handler.ts:104-109",
      "src/server/console-handler.ts:440-473",
    ],
    tests: ["test/server/console-gates.test.ts"],
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
