import { describe, expect, it } from "vitest";
import { checkPlan, stepEffect } from "../../src/core/taskpack/plan-check.js";
import { packDoc, planDoc, SLUGIFY_DIFF, validPack } from "./fixtures.js";

const pack = validPack();

function refusals(plan: unknown, p = pack) {
  const r = checkPlan(plan, p);
  if (r.ok) throw new Error("expected refusal");
  return r.errors.map((e) => [e.code, e.path, e.detail?.reason]);
}

function withStep(step: Record<string, unknown>, at = 2) {
  const plan = planDoc();
  plan.steps[at] = { id: "x", ...step };
  return plan;
}

function patchStep(extra: Record<string, unknown>) {
  return withStep({ action: "patch", path: "src/slugify.js", ...extra });
}

describe("checkPlan: admitted plans", () => {
  it("admits the example plan with typed steps and rendered argv", () => {
    const r = checkPlan(planDoc(), pack);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const kinds = r.value.steps.map((s) => s.kind);
    expect(kinds).toEqual([
      "observe-command",
      "observe-read",
      "patch",
      "command",
      "observe-command",
    ]);
    expect(r.value.steps.map(stepEffect)).toEqual([
      "observation",
      "observation",
      "mutation",
      "mutation",
      "observation",
    ]);
    const install = r.value.steps[3];
    expect(install?.kind === "command" && install.argv).toEqual(["npm", "install", "left-pad"]);
    const show = r.value.steps[4];
    expect(show?.kind === "observe-command" && show.argv).toEqual(["cat", "src/slugify.js"]);
    expect(r.value.expectedChecks).toEqual(["tests-pass"]);
  });

  it("normalises the patch path and read paths", () => {
    const plan = planDoc();
    plan.steps[1].read = ["./src//slugify.js"];
    plan.steps[2] = { id: "x", action: "patch", path: "./src/slugify.js", content: "x\n" };
    const r = checkPlan(plan, pack);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.steps[1]).toMatchObject({ paths: ["src/slugify.js"] });
    expect(r.value.steps[2]).toMatchObject({ path: "src/slugify.js", change: { kind: "content" } });
  });

  it("admits a diff creating a new regular file", () => {
    const diff =
      "diff --git a/src/new.js b/src/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.js\n@@ -0,0 +1 @@\n+x\n";
    expect(checkPlan(patchStep({ path: "src/new.js", diff }), pack).ok).toBe(true);
  });
});

describe("checkPlan: refusals name the step", () => {
  it("plan/unknown-action-kind", () => {
    expect(refusals(withStep({ action: "delete-everything" }))).toEqual([
      ["plan/unknown-action-kind", "/steps/2/action", undefined],
    ]);
  });

  it("plan/first-step-not-observation", () => {
    const plan = planDoc();
    plan.steps.unshift({ id: "p0", action: "patch", path: "src/slugify.js", diff: SLUGIFY_DIFF });
    expect(refusals(plan)).toEqual([["plan/first-step-not-observation", "/steps/0", undefined]]);
    expect(refusals({ hypothesis: "h", steps: [] })).toEqual([
      ["plan/first-step-not-observation", "/steps", undefined],
    ]);
  });

  it("plan/outside-profile: unknown profile", () => {
    expect(refusals(withStep({ action: "command", profile: "rm-rf" }))).toEqual([
      ["plan/outside-profile", "/steps/2/profile", undefined],
    ]);
  });

  it("plan/outside-profile: a command step naming an observation profile, and the reverse", () => {
    expect(refusals(withStep({ action: "command", profile: "run-tests" }))).toEqual([
      ["plan/outside-profile", "/steps/2/profile", undefined],
    ]);
    expect(
      refusals(withStep({ action: "observe", profile: "npm-install", args: { pkg: "a" } })),
    ).toEqual([["plan/outside-profile", "/steps/2/profile", undefined]]);
  });

  it("plan/outside-profile: arguments the profile's schema refuses", () => {
    expect(
      refusals(withStep({ action: "command", profile: "npm-install", args: { pkg: "A B" } })),
    ).toEqual([["plan/outside-profile", "/steps/2/args/pkg", undefined]]);
    expect(refusals(withStep({ action: "command", profile: "npm-install" }))).toEqual([
      ["plan/outside-profile", "/steps/2/args", undefined],
    ]);
    expect(
      refusals(withStep({ action: "observe", profile: "run-tests", args: { extra: 1 } })),
    ).toEqual([["plan/outside-profile", "/steps/2/args", undefined]]);
  });

  it("plan/outside-profile: an observe step with both or neither of profile and read", () => {
    expect(refusals(withStep({ action: "observe" }))[0]?.[0]).toBe("plan/outside-profile");
    expect(
      refusals(withStep({ action: "observe", profile: "run-tests", read: ["src/a.js"] }))[0]?.[0],
    ).toBe("plan/outside-profile");
  });

  it("plan/outside-profile: a read path leaving the workspace", () => {
    expect(refusals(withStep({ action: "observe", read: ["../../etc/passwd"] }))).toEqual([
      ["plan/outside-profile", "/steps/2/read/0", "dot-dot"],
    ]);
    expect(refusals(withStep({ action: "observe", read: ["/etc/passwd"] }))).toEqual([
      ["plan/outside-profile", "/steps/2/read/0", "absolute"],
    ]);
  });

  it("plan/duplicate-step-id", () => {
    const plan = planDoc();
    plan.steps[1].id = "s1";
    expect(refusals(plan)).toEqual([["plan/duplicate-step-id", "/steps/1/id", undefined]]);
  });

  it("collects the refusals of several steps", () => {
    const plan = planDoc();
    plan.steps[2].path = "../x";
    plan.steps[3].profile = "nope";
    expect(refusals(plan).map((e) => e[1])).toEqual(["/steps/2/path", "/steps/3/profile"]);
  });
});

describe("checkPlan: workbench/patch-outside-policy", () => {
  const P = "workbench/patch-outside-policy";

  it.each([
    ["a path outside the allow-list", "test/slugify.test.js", "not-allowed"],
    ["a .. path", "src/../test/a.js", "dot-dot"],
    ["an absolute path", "/work/main/src/a.js", "absolute"],
    ["a backslash", "src\\a.js", "backslash"],
    ["a NUL", "src/a\0.js", "nul"],
    ["a path into .git", ".git/hooks/pre-commit", "git"],
  ])("refuses %s", (_why, path, reason) => {
    expect(refusals(patchStep({ path, content: "x" }))).toEqual([[P, "/steps/2/path", reason]]);
  });

  it("refuses .git even when the policy allows everything", () => {
    const doc = packDoc();
    doc.patchPolicy.allow = ["**"];
    const all = validPack(doc);
    expect(refusals(patchStep({ path: "sub/.git/config", content: "x" }), all)).toEqual([
      [P, "/steps/2/path", "git"],
    ]);
    expect(checkPlan(patchStep({ path: "README.md", content: "x" }), all).ok).toBe(true);
  });

  it("refuses a patch inside a dependency folder, even when the policy allows it", () => {
    const doc = packDoc();
    doc.patchPolicy.allow = ["**"];
    const withDeps = validPack({ ...doc, dependencies: ["node_modules"] });
    expect(
      refusals(patchStep({ path: "node_modules/dep/index.js", content: "x" }), withDeps),
    ).toEqual([[P, "/steps/2/path", "dependency"]]);
    expect(checkPlan(patchStep({ path: "node_modules.js", content: "x" }), withDeps).ok).toBe(true);
  });

  it("refuses an oversize patch (UTF-8 bytes)", () => {
    expect(refusals(patchStep({ content: "x".repeat(4097) }))).toEqual([
      [P, "/steps/2/content", "too-large"],
    ]);
    // 2048 two-byte characters are 4096 bytes: allowed; one more is not.
    expect(checkPlan(patchStep({ content: "é".repeat(2048) }), pack).ok).toBe(true);
    expect(refusals(patchStep({ content: "é".repeat(2049) }))).toEqual([
      [P, "/steps/2/content", "too-large"],
    ]);
  });

  it("refuses both or neither of diff and content", () => {
    expect(refusals(patchStep({}))).toEqual([[P, "/steps/2", "diff-or-content"]]);
    expect(refusals(patchStep({ diff: SLUGIFY_DIFF, content: "x" }))).toEqual([
      [P, "/steps/2", "diff-or-content"],
    ]);
  });

  it("refuses a malformed diff", () => {
    expect(refusals(patchStep({ diff: "not a diff" }))).toEqual([
      [P, "/steps/2/diff", "malformed-diff"],
    ]);
  });

  it("refuses a diff whose headers name another path", () => {
    const diff = SLUGIFY_DIFF.replace("+++ b/src/slugify.js", "+++ b/src/other.js");
    expect(refusals(patchStep({ diff }))).toEqual([[P, "/steps/2/diff", "other-path"]]);
    const escaping = SLUGIFY_DIFF.replace("--- a/src/slugify.js", "--- a/../../etc/passwd");
    expect(refusals(patchStep({ diff: escaping }))).toEqual([[P, "/steps/2/diff", "other-path"]]);
    const git = `diff --git a/src/x.js b/src/x.js\n${SLUGIFY_DIFF}`;
    expect(refusals(patchStep({ diff: git }))).toEqual([[P, "/steps/2/diff", "other-path"]]);
  });

  it("reads git's quoted header names: a non-ASCII path's own diff passes, a quoted other path does not", () => {
    const doc = packDoc();
    doc.patchPolicy.allow = ["**"];
    const all = validPack(doc);
    const quoted = (name: string) =>
      `diff --git "a/${name}" "b/${name}"\n--- "a/${name}"\n+++ "b/${name}"\n@@ -1 +1 @@\n-a\n+b\n`;
    expect(
      checkPlan(patchStep({ path: "src/naïve.js", diff: quoted("src/na\\303\\257ve.js") }), all).ok,
    ).toBe(true);
    expect(
      refusals(patchStep({ path: "src/naïve.js", diff: quoted("src/na\\303\\257ve\\nx.js") }), all),
    ).toEqual([[P, "/steps/2/diff", "other-path"]]);
  });

  it("refuses a diff creating a symlink", () => {
    const diff =
      "diff --git a/src/link b/src/link\nnew file mode 120000\n--- /dev/null\n+++ b/src/link\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n";
    expect(refusals(patchStep({ path: "src/link", diff }))).toEqual([
      [P, "/steps/2/diff", "symlink"],
    ]);
  });

  it("refuses a diff changing a mode or creating an executable", () => {
    const mode = `diff --git a/src/slugify.js b/src/slugify.js\nold mode 100644\nnew mode 100755\n${SLUGIFY_DIFF}`;
    expect(refusals(patchStep({ diff: mode }))).toEqual([[P, "/steps/2/diff", "mode-change"]]);
    const exe =
      "diff --git a/src/new.sh b/src/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/src/new.sh\n@@ -0,0 +1 @@\n+x\n";
    expect(refusals(patchStep({ path: "src/new.sh", diff: exe }))).toEqual([
      [P, "/steps/2/diff", "mode-change"],
    ]);
  });

  it("refuses a rename and a binary diff", () => {
    const rename =
      "diff --git a/src/slugify.js b/src/slugify.js\nsimilarity index 90%\nrename from src/a.js\nrename to src/slugify.js\n";
    expect(refusals(patchStep({ diff: rename }))).toEqual([[P, "/steps/2/diff", "rename"]]);
    const binary =
      "diff --git a/src/slugify.js b/src/slugify.js\nBinary files a/src/slugify.js and b/src/slugify.js differ\n";
    expect(refusals(patchStep({ diff: binary }))).toEqual([[P, "/steps/2/diff", "binary"]]);
  });

  it("refuses a mode-only diff with no hunks", () => {
    const modeOnly =
      "diff --git a/src/slugify.js b/src/slugify.js\nold mode 100644\nnew mode 100755\n";
    expect(refusals(patchStep({ diff: modeOnly }))).toEqual([[P, "/steps/2/diff", "mode-change"]]);
  });
});
