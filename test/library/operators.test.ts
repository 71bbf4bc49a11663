// Who acts: operator names checked (operator/name-invalid), the default from WARRANT_OPERATOR or
// the login name, each act of createWarrant recorded as the operator its options name (else the
// runtime's), and the operators file of the console (tokens made, written 0600, refused when it is
// not a map of names to tokens).
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toQueryId } from "../../src/core/ids.js";
import { createWarrant } from "../../src/index.js";
import { loadOperatorTokens } from "../../src/library/operator-tokens.js";
import {
  defaultOperatorBinding,
  operatorBindingOf,
  operatorNameOf,
  operatorNameProblem,
} from "../../src/library/operators.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { fixtures } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-operators-"));
  dirs.push(d);
  return d;
};

describe("operator names", () => {
  it("takes 1 to 128 characters without white space or control characters", () => {
    expect(operatorNameProblem("alice")).toBeUndefined();
    expect(operatorNameProblem("al.ice@example.org")).toBeUndefined();
    expect(operatorNameProblem("é".repeat(128))).toBeUndefined();
    expect(operatorNameProblem("")).toContain("not empty");
    expect(operatorNameProblem("x".repeat(129))).toContain("at most 128");
    expect(operatorNameProblem("a b")).toContain("white space");
    expect(operatorNameProblem("a\u00a0b")).toContain("white space");
    expect(operatorNameProblem("a\u001bb")).toContain("control character");
    expect(operatorNameProblem("a\u009bb")).toContain("control character");
  });

  it("a binding is node-operator-binding:NAME; a bad name is refused operator/name-invalid, escaped", () => {
    expect(operatorBindingOf("alice")).toBe("node-operator-binding:alice");
    expect(operatorBindingOf("node-operator-binding:alice")).toBe("node-operator-binding:alice");
    expect(operatorNameOf("node-operator-binding:alice")).toBe("alice");
    expect(() => operatorBindingOf("node-operator-binding:")).toThrow(/not empty/);
    try {
      operatorBindingOf("x\u001b[2Jy", "--operator");
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: "operator/name-invalid" });
      expect((e as Error).message).toContain("--operator");
      expect((e as Error).message).not.toContain("\u001b");
    }
  });

  it("the default is WARRANT_OPERATOR (checked), else the login name made fit", () => {
    expect(defaultOperatorBinding({ WARRANT_OPERATOR: "bob", USER: "root" })).toBe(
      "node-operator-binding:bob",
    );
    expect(() => defaultOperatorBinding({ WARRANT_OPERATOR: "" })).toThrow(/WARRANT_OPERATOR/);
    expect(defaultOperatorBinding({ USER: "carol" })).toBe("node-operator-binding:carol");
    expect(defaultOperatorBinding({ LOGNAME: "dave" })).toBe("node-operator-binding:dave");
    expect(defaultOperatorBinding({ USER: "e ve" })).toBe("node-operator-binding:e-ve");
  });
});

describe("createWarrant's acts take an operator", () => {
  it("records each act as the operator its options name, else the runtime's; refuses a bad name", async () => {
    const warrant = await createWarrant({
      store: memoryStore(),
      sandbox: fakeSandbox(),
      signer: "none",
      operator: "ruth",
    });
    const query = await warrant.open(path.join(fixtures, "task-pack.json"));
    const opened = (await warrant.store.readFacts(query))[0]?.fact.step;
    expect(opened).toMatchObject({ "operator/binding-ref": "node-operator-binding:ruth" });
    const wall = (await warrant.show(query))?.loop.limits["max/wall-time-ms"] as number;
    // Later than the deadline the loop opened with, and within its wall time from now.
    const later = () => new Date(Date.now() + wall);
    await new Promise((r) => setTimeout(r, 5));
    const bad = await warrant.renew(query, later(), { operator: "a b" });
    expect(bad).toMatchObject({ ok: false, code: "operator/name-invalid" });
    // Renewal and cancellation are the loop's operator's: another name is refused.
    const other = await warrant.renew(query, later(), { operator: "sam" });
    expect(other).toMatchObject({ ok: false, code: "loop/not-operator" });
    expect(other.message).toContain("node-operator-binding:sam");
    expect(await warrant.cancel(toQueryId(query), { operator: "sam" })).toMatchObject({
      ok: false,
      code: "loop/not-operator",
    });
    expect(
      await warrant.renew(query, later(), { operator: "node-operator-binding:ruth" }),
    ).toMatchObject({ ok: true, result: "appended" });
    expect(await warrant.cancel(toQueryId(query))).toMatchObject({ ok: true });
    const steps = (await warrant.store.readFacts(query)).map((f) => f.fact.step);
    expect(steps.filter((s) => s.kind === "renewed" || s.kind === "cancelled")).toEqual([
      expect.objectContaining({
        kind: "renewed",
        "operator/binding-ref": "node-operator-binding:ruth",
      }),
      expect.objectContaining({
        kind: "cancelled",
        "operator/binding-ref": "node-operator-binding:ruth",
      }),
    ]);
    await warrant.close();
  });

  it("a runtime operator that is not a name is refused when the runtime is made", async () => {
    await expect(
      createWarrant({ store: memoryStore(), sandbox: fakeSandbox(), signer: "none", operator: "" }),
    ).rejects.toMatchObject({ code: "operator/name-invalid" });
  });
});

describe("the console's operators file", () => {
  it("makes tokens for names without one and for a file that does not exist, written mode 0600", () => {
    const dir = tempDir();
    const file = path.join(dir, "ops.json");
    let n = 0;
    const newToken = () => `token-${String(++n).padStart(12, "0")}`;
    const made = loadOperatorTokens(file, {
      defaultOperator: "node-operator-binding:zoe",
      newToken,
    });
    expect(made.operators).toEqual([
      {
        name: "zoe",
        binding: "node-operator-binding:zoe",
        token: "token-000000000001",
        generated: true,
      },
    ]);
    // Nothing is written before save().
    expect(existsSync(file)).toBe(false);
    made.save();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ zoe: "token-000000000001" });
    writeFileSync(file, JSON.stringify({ zoe: "token-000000000001", yan: "" }));
    chmodSync(file, 0o644);
    const more = loadOperatorTokens(file, { defaultOperator: "zoe", newToken });
    expect(more.readableByOthers).toBe(true);
    expect(more.operators.map((o) => [o.name, o.generated])).toEqual([
      ["zoe", false],
      ["yan", true],
    ]);
    more.save();
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      zoe: "token-000000000001",
      yan: "token-000000000002",
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Nothing to make: the file is left as it is, and said to be readable by others.
    writeFileSync(file, JSON.stringify({ zoe: "token-000000000001" }));
    chmodSync(file, 0o644);
    const same = loadOperatorTokens(file, { defaultOperator: "zoe", newToken });
    expect(same.readableByOthers).toBe(true);
    expect(same.operators[0]?.generated).toBe(false);
    same.save();
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it("refuses what is not a map of names to tokens, naming the file and never a token", () => {
    const dir = tempDir();
    const file = path.join(dir, "ops.json");
    const secret = "s".repeat(24);
    for (const [text, code] of [
      ["nope", "operator/file-invalid"],
      ["null", "operator/file-invalid"],
      ["{}", "operator/file-invalid"],
      [JSON.stringify({ a: secret, b: secret }), "operator/file-invalid"],
      [JSON.stringify({ a: "short" }), "operator/file-invalid"],
      [JSON.stringify({ a: ["x"] }), "operator/file-invalid"],
      [JSON.stringify({ "a\u001b": null }), "operator/name-invalid"],
    ] as const) {
      writeFileSync(file, text);
      try {
        loadOperatorTokens(file, { defaultOperator: "zoe" });
        expect.unreachable(text);
      } catch (e) {
        expect(e, text).toMatchObject({ code });
        expect((e as Error).message).toContain(file);
        expect((e as Error).message).not.toContain(secret);
        expect((e as Error).message).not.toContain("\u001b");
      }
    }
    expect(() => loadOperatorTokens(dir, { defaultOperator: "zoe" })).toThrow(/not a regular file/);
  });
});
