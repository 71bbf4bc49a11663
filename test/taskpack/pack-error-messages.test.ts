// What a pack author reads when a pack is wrong: the unknown property named (with a close name
// offered), an enum's allowed values listed, a misspelled profile met with "did you mean", and a
// JSON syntax error placed by line and column rather than a byte position.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTaskPack } from "../../src/adapters/fs/task-pack-files.js";
import { checkPlan } from "../../src/core/taskpack/plan-check.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { jsonSyntaxError, lineColumnAt } from "../../src/core/text/json-position.js";
import { packDoc, planDoc, validPack } from "./fixtures.js";

function messages(doc: unknown): string[] {
  const r = validateTaskPack(doc);
  if (r.ok) throw new Error("expected refusal");
  return r.errors.map((e) => `${e.code} ${e.path}: ${e.message}`);
}

describe("schema problems of a task pack", () => {
  it("name an unknown property and offer the close one", () => {
    const doc = packDoc();
    doc.hill = "none";
    doc.extraField = 1;
    const commands = doc.commands as Record<string, Record<string, unknown>>;
    const runTests = commands["run-tests"] as Record<string, unknown>;
    runTests.timeoutMS = 5;
    const found = messages(doc);
    expect(found).toContain(
      'taskpack/schema : (root): unknown property "hill" (did you mean "hil"?)',
    );
    expect(found).toContain('taskpack/schema : (root): unknown property "extraField"');
    expect(found).toContain(
      'taskpack/schema /commands/run-tests: /commands/run-tests: unknown property "timeoutMS" (did you mean "timeoutMs"?)',
    );
  });

  it("list the allowed values of an enum", () => {
    const doc = packDoc();
    doc.hil = "each";
    expect(messages(doc)).toContain(
      'taskpack/schema /hil: /hil: "each" is not one of each-mutation, none',
    );
    const effect = packDoc();
    (
      (effect.commands as Record<string, Record<string, unknown>>)["run-tests"] as Record<
        string,
        unknown
      >
    ).effect = "observe";
    expect(messages(effect)).toContain(
      'taskpack/schema /commands/run-tests/effect: /commands/run-tests/effect: "observe" is not one of observation, mutation',
    );
  });
});

describe("a misspelled profile name", () => {
  it("in a verifier check: did you mean, else the profiles there are", () => {
    const doc = packDoc();
    const checks = (doc.verifier as { checks: Record<string, unknown>[] }).checks;
    (checks[0] as Record<string, unknown>).command = "run-test";
    expect(messages(doc)).toContain(
      'taskpack/unknown-command /verifier/checks/0/command: no command profile named run-test (did you mean "run-tests"?)',
    );
    (checks[0] as Record<string, unknown>).command = "deploy";
    expect(messages(doc)).toContain(
      "taskpack/unknown-command /verifier/checks/0/command: no command profile named deploy (known: run-tests, show-file, npm-install, probe-network)",
    );
  });

  it("in a plan's step: did you mean, as the model's repair reads it", () => {
    const plan = planDoc();
    plan.steps[0] = { id: "s1", action: "observe", profile: "run-tets" };
    const r = checkPlan(plan, validPack());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({
      code: "plan/outside-profile",
      path: "/steps/0/profile",
      message: 'step 0: no command profile named run-tets (did you mean "run-tests"?)',
    });
  });
});

describe("a task pack that is not JSON", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-pack-json-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is placed by line and column, not a byte position", async () => {
    mkdirSync(path.join(dir, "workspace"), { recursive: true });
    const text = JSON.stringify(packDoc(), null, 2).replace(
      '"hil": "each-mutation",',
      '"hil": "each-mutation"',
    );
    const file = path.join(dir, "pack.json");
    writeFileSync(file, text);
    const r = await loadTaskPack(file);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const problem = r.errors[0];
    const lines = text.split("\n");
    const hil = lines.findIndex((l) => l.includes('"hil"'));
    const next = lines[hil + 1] ?? "";
    expect(problem).toMatchObject({
      code: "taskpack/json",
      line: hil + 2,
      column: next.length - next.trimStart().length + 1,
    });
    expect(problem?.message).toBe(
      `${file}:${hil + 2}:${next.length - next.trimStart().length + 1}: Expected ',' or '}' after property value`,
    );
    expect(problem?.message).not.toMatch(/position/);
  });

  it("counts lines and characters, and places an early end at the text's end", () => {
    expect(lineColumnAt("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumnAt("é\u{1F600}x", 3)).toEqual({ line: 1, column: 3 });
    let thrown: unknown;
    try {
      JSON.parse('{\n  "a": ');
    } catch (e) {
      thrown = e;
    }
    expect(jsonSyntaxError('{\n  "a": ', thrown)).toMatchObject({ line: 2, column: 8 });
  });
});
