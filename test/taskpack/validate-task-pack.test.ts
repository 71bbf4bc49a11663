import { describe, expect, it } from "vitest";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

function errorsOf(doc: unknown) {
  const r = validateTaskPack(doc);
  if (r.ok) throw new Error("expected refusal");
  return r.errors;
}

function codesAndPaths(doc: unknown) {
  return errorsOf(doc).map((e) => [e.code, e.path]);
}

describe("validateTaskPack", () => {
  it("accepts the agreed example and maps it", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = r.value;
    expect(p.name).toBe("fix-failing-test");
    expect([...p.commands.keys()]).toEqual([
      "run-tests",
      "show-file",
      "npm-install",
      "probe-network",
    ]);
    expect(p.commands.get("npm-install")?.effect).toBe("mutation");
    expect(p.verifier.checks.map((c) => c.kind)).toEqual([
      "command",
      "unchanged",
      "only-allowed-changed",
      "command",
    ]);
    expect(p.patchPolicy.allow[0]?.matches("src/a.js")).toBe(true);
    expect(p.limits["max/passages"]).toBe(12);
    expect(p.passage.repairs).toBe(2);
    expect(p.agents.implementer).toBe("agents/implementer.json");
  });

  it("maps guidance per role, and gives none when the pack has no guidance", () => {
    const doc = packDoc();
    doc.guidance = { reviewer: "Accept only a fix of the cause." };
    const r = validateTaskPack(doc);
    expect(r.ok && r.value.guidance).toEqual({ reviewer: "Accept only a fix of the cause." });
    const none = validateTaskPack(packDoc());
    expect(none.ok && none.value.guidance).toEqual({});
  });

  it("refuses guidance for an unknown role, empty guidance and guidance that is not text", () => {
    const doc = packDoc();
    doc.guidance = { operator: "x" };
    expect(codesAndPaths(doc)).toContainEqual(["taskpack/schema", "/guidance"]);
    doc.guidance = { reviewer: "" };
    expect(codesAndPaths(doc)).toContainEqual(["taskpack/schema", "/guidance/reviewer"]);
    doc.guidance = { implementer: ["x"] };
    expect(codesAndPaths(doc)).toContainEqual(["taskpack/schema", "/guidance/implementer"]);
  });

  it("refuses guidance for a role the pack names no agent for", () => {
    const doc = packDoc();
    doc.guidance = { "adversarial-critic": "Look for test-only fixes." };
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/guidance-without-agent", "/guidance/adversarial-critic"],
    ]);
  });

  it("defaults repairs to 2 when the pack has no passage section", () => {
    const doc = packDoc();
    delete doc.passage;
    const r = validateTaskPack(doc);
    expect(r.ok && r.value.passage.repairs).toBe(2);
  });

  it("compiled argument validators accept and refuse", () => {
    const r = validateTaskPack(packDoc());
    if (!r.ok) throw new Error();
    const show = r.value.commands.get("show-file");
    expect(show?.validateArgs({ file: "a" }).ok).toBe(true);
    const bad = show?.validateArgs({});
    expect(bad?.ok).toBe(false);
    if (bad !== undefined && !bad.ok) expect(bad.errors[0]?.code).toBe("plan/outside-profile");
  });

  it("a pack validated again checks arguments as the first time; two packs' $ids never meet", () => {
    const withId = () => {
      const doc = packDoc();
      doc.commands["show-file"].args.$id = "urn:example:show-args";
      return doc;
    };
    for (let i = 0; i < 3; i++) {
      const r = validateTaskPack(withId());
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      const show = r.value.commands.get("show-file");
      expect(show?.validateArgs({ file: "a" }).ok).toBe(true);
      const bad = show?.validateArgs({ file: 3 });
      expect(bad?.ok).toBe(false);
      if (bad !== undefined && !bad.ok) expect(bad.errors[0]?.path).toBe("/file");
    }
    // The same $id twice in one pack collides, however often the pack is validated.
    for (let i = 0; i < 2; i++) {
      const doc = withId();
      doc.commands["run-tests"].args = {
        $id: "urn:example:show-args",
        type: "object",
        additionalProperties: false,
      };
      // run-tests comes first: show-file's schema is the one whose $id is taken.
      expect(codesAndPaths(doc)).toEqual([["taskpack/args-schema", "/commands/show-file/args"]]);
    }
  });

  it("refuses a schema violation with taskpack/schema and its pointer", () => {
    const doc = packDoc();
    doc.name = "Not Valid";
    expect(codesAndPaths(doc)).toEqual([["taskpack/schema", "/name"]]);
  });

  it("labels messages with the pack path when given", () => {
    const doc = packDoc();
    doc.hil = "sometimes";
    const r = validateTaskPack(doc, { packPath: "packs/x.json" });
    expect(r.ok ? "" : r.errors[0]?.message).toMatch(/^packs\/x\.json: /);
  });

  it.each(["implementer", "reviewer"])("refuses a pack without the %s agent", (role) => {
    const doc = packDoc();
    delete doc.agents[role];
    expect(errorsOf(doc).some((e) => e.code === "taskpack/schema" && e.path === "/agents")).toBe(
      true,
    );
  });

  it("refuses an unknown agent role", () => {
    const doc = packDoc();
    doc.agents.janitor = "agents/j.json";
    expect(codesAndPaths(doc)).toEqual([["taskpack/schema", "/agents"]]);
  });

  it.each([
    ["max/passages", 1001],
    ["max/cycles", 0],
    ["max/experiments", 101],
    ["max/wall-time-ms", 86_400_001],
  ])("refuses %s = %d outside the common schema bounds", (key, value) => {
    const doc = packDoc();
    doc.limits[key] = value;
    expect(codesAndPaths(doc)).toEqual([["taskpack/schema", `/limits/${key.replace("/", "~1")}`]]);
  });

  it("refuses an unknown limit and an empty limits object", () => {
    const doc = packDoc();
    doc.limits = { "max/tokens": 3 };
    expect(errorsOf(doc).every((e) => e.code === "taskpack/schema")).toBe(true);
    doc.limits = {};
    expect(codesAndPaths(doc)).toEqual([["taskpack/schema", "/limits"]]);
  });

  it("refuses a bad command name and an unknown effect", () => {
    const doc = packDoc();
    doc.commands["Run Tests"] = doc.commands["run-tests"];
    expect(errorsOf(doc)[0]?.code).toBe("taskpack/schema");
    const doc2 = packDoc();
    doc2.commands["run-tests"].effect = "maybe";
    expect(codesAndPaths(doc2)).toEqual([["taskpack/schema", "/commands/run-tests/effect"]]);
  });

  it("refuses an argument schema that does not compile", () => {
    const doc = packDoc();
    doc.commands["run-tests"].args = { type: "object", properties: { a: { type: "strnig" } } };
    expect(codesAndPaths(doc)).toEqual([["taskpack/args-schema", "/commands/run-tests/args"]]);
  });

  it("refuses an argument schema with an unknown keyword (strict mode)", () => {
    const doc = packDoc();
    doc.commands["run-tests"].args = { type: "object", propertees: {} };
    expect(codesAndPaths(doc)).toEqual([["taskpack/args-schema", "/commands/run-tests/args"]]);
  });

  it("refuses an argument schema that is not for an object", () => {
    const doc = packDoc();
    doc.commands["run-tests"].args = { type: "string" };
    expect(codesAndPaths(doc)).toEqual([["taskpack/args-not-object", "/commands/run-tests/args"]]);
  });

  it("refuses an argv placeholder that names no argument property", () => {
    const doc = packDoc();
    doc.commands["show-file"].argv = ["cat", "{path}"];
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/placeholder-unknown", "/commands/show-file/argv/1"],
    ]);
  });

  it("refuses a placeholder whose property is optional or not a string", () => {
    const doc = packDoc();
    doc.commands["show-file"].args.required = [];
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/placeholder-type", "/commands/show-file/argv/1"],
    ]);
    const doc2 = packDoc();
    doc2.commands["show-file"].args.properties.file = { type: "integer" };
    expect(codesAndPaths(doc2)).toEqual([
      ["taskpack/placeholder-type", "/commands/show-file/argv/1"],
    ]);
  });

  it("treats braces that are not a whole element as literal", () => {
    const doc = packDoc();
    doc.commands["run-tests"].argv = ["echo", "x{file}", "{}"];
    expect(validateTaskPack(doc).ok).toBe(true);
  });

  it("refuses an invalid patch-policy glob at its index", () => {
    const doc = packDoc();
    doc.patchPolicy.allow = ["src/**", "../etc/**"];
    expect(codesAndPaths(doc)).toEqual([["taskpack/glob-invalid", "/patchPolicy/allow/1"]]);
  });

  it("refuses an invalid glob in an unchanged check", () => {
    const doc = packDoc();
    doc.verifier.checks[1].unchanged = ["test/[a].js"];
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/glob-invalid", "/verifier/checks/1/unchanged/0"],
    ]);
  });

  it("refuses a verifier check that names no command", () => {
    const doc = packDoc();
    doc.verifier.checks[0].command = "run-all-tests";
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/unknown-command", "/verifier/checks/0/command"],
    ]);
  });

  it("refuses a verifier check that names a mutation command", () => {
    const doc = packDoc();
    doc.verifier.checks[0].command = "npm-install";
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/check-not-observation", "/verifier/checks/0/command"],
    ]);
  });

  it("refuses verifier check arguments the command's schema rejects", () => {
    const doc = packDoc();
    doc.verifier.checks.push({ name: "show", command: "show-file", args: { file: 3 } });
    expect(codesAndPaths(doc)).toEqual([
      ["taskpack/check-args-invalid", "/verifier/checks/4/args/file"],
    ]);
    const doc2 = packDoc();
    doc2.verifier.checks.push({ name: "show", command: "show-file" });
    expect(codesAndPaths(doc2)).toEqual([
      ["taskpack/check-args-invalid", "/verifier/checks/4/args"],
    ]);
  });

  it("refuses two checks with the same name", () => {
    const doc = packDoc();
    doc.verifier.checks[1].name = "tests-pass";
    expect(codesAndPaths(doc)).toEqual([["taskpack/duplicate-check", "/verifier/checks/1/name"]]);
  });

  it("refuses a check that is neither command, unchanged nor onlyAllowedChanged", () => {
    const doc = packDoc();
    doc.verifier.checks[2] = { name: "x", onlyAllowedChanged: false };
    expect(errorsOf(doc).every((e) => e.code === "taskpack/schema")).toBe(true);
  });

  it("reports every semantic problem, not only the first", () => {
    const doc = packDoc();
    doc.commands["show-file"].argv = ["cat", "{path}"];
    doc.patchPolicy.allow = ["/abs"];
    expect(errorsOf(doc).map((e) => e.code)).toEqual([
      "taskpack/placeholder-unknown",
      "taskpack/glob-invalid",
    ]);
  });

  it("refuses a non-object document", () => {
    expect(errorsOf([])[0]?.code).toBe("taskpack/schema");
    expect(errorsOf(null)[0]?.code).toBe("taskpack/schema");
  });
});
