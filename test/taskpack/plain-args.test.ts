// Argument schemas of the plainest shape are checked without Ajv (simple-schema.ts): a command's
// arguments get the verdict and the errors of the schema compiled by Ajv's strict contract profile,
// and a schema that profile refuses to compile is refused as before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createAjv } from "../../src/core/contracts/ajv-factory.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

const PLAIN: readonly Record<string, unknown>[] = [
  { type: "object", additionalProperties: false, properties: {} },
  {
    type: "object",
    required: ["file"],
    properties: { file: { type: "string", minLength: 1 }, lines: { type: "integer" } },
    additionalProperties: false,
  },
  {
    type: "object",
    description: "a mode and a flag",
    properties: {
      mode: { type: "string", enum: ["fast", "full"] },
      tag: { type: "string", maxLength: 2 },
      verbose: { type: "boolean" },
      ratio: { type: "number" },
    },
  },
];

const VALUES = ["", "fast", "full", "ab", "abc", "😀😀", 0, 1.5, true, null, [], {}];
const KEYS = ["file", "lines", "mode", "tag", "verbose", "ratio", "other"];
const inputs = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 4 }),
  fc.constantFrom(...VALUES),
);

/** A mutation profile (no verifier check runs it) of the fixture pack with `args` as its schema. */
function profileWith(args: Record<string, unknown>) {
  const doc = packDoc();
  doc.commands.plain = { ...doc.commands["probe-network"], effect: "mutation", args };
  const r = validateTaskPack(doc);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const profile = r.value.commands.get("plain");
  if (profile === undefined) throw new Error("no plain profile");
  return profile;
}

describe("plain argument schemas", () => {
  it.each(PLAIN.map((s) => [JSON.stringify(s), s] as const))(
    "%s: arguments get the strict Ajv validator's verdict and errors",
    (_, schema) => {
      const profile = profileWith(schema);
      const ajv = createAjv("contract").compile(schema);
      fc.assert(
        fc.property(inputs, (args) => {
          const r = profile.validateArgs(args);
          expect(r.ok).toBe(ajv(args));
          if (r.ok) return;
          expect(r.errors.map((e) => [e.path, e.detail])).toEqual(
            (ajv.errors ?? []).map((e) => [e.instancePath, { keyword: e.keyword }]),
          );
        }),
        { numRuns: 300 },
      );
    },
  );

  it("a required name that is not a property is refused as strict mode refuses it", () => {
    const doc = packDoc();
    doc.commands["run-tests"].args = { type: "object", required: ["a"], properties: {} };
    const r = validateTaskPack(doc);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.code, e.path])).toEqual([
      ["taskpack/args-schema", "/commands/run-tests/args"],
    ]);
    expect(r.errors[0]?.message).toMatch(/the argument schema does not compile: strict mode/);
  });

  it("a verifier check's arguments a plain schema refuses are reported with Ajv's paths", () => {
    const doc = packDoc();
    doc.verifier.checks.push({ name: "show", command: "show-file", args: { file: 3, x: 1 } });
    const r = validateTaskPack(doc);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.code, e.path])).toEqual([
      ["taskpack/check-args-invalid", "/verifier/checks/4/args"],
      ["taskpack/check-args-invalid", "/verifier/checks/4/args/file"],
    ]);
  });
});
